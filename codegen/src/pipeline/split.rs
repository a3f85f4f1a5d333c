//! The split scan: a package larger than its share of the cores is cut into pieces of whole
//! items, parsed side by side, and put together as plain data.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use super::Scanned;
use super::pool::parallel;
use crate::error::Result;
use crate::model::types::{FileTypes, PackageTypes};
use crate::model::{self, FileFacts, ModelOptions, PackageHead};
use crate::scan::{self, PackageRef};

/// What a piece job derives from one parsed file or piece of a file: `None` when the piece
/// did not parse (the file is then parsed whole).
type PieceFacts = Option<(FileFacts, FileTypes)>;

/// Scans packages that are fewer than the cores: each file larger than
/// [`scan::split_points`]' threshold is cut into pieces of whole items and smaller files are
/// dealt out whole, one share per core; every worker parses its share and derives the model's
/// facts and the type table's entries from it, and only that plain data comes back to be put
/// together in file order. A piece that fails to parse sends its file through a whole parse,
/// which reports the error where the file has it. Each package's type table is kept when
/// `keep_types`, for the CRD and apply-configuration jobs.
pub(super) fn scan_split(
    refs: &[PackageRef],
    cores: usize,
    opts: &ModelOptions,
    keep_types: bool,
) -> Vec<Option<(Vec<PathBuf>, Result<Scanned>)>> {
    let texts: Vec<Result<scan::PackageText>> = refs.iter().map(scan::read_text).collect();
    // Per package, per file: the piece boundaries (`[0, cuts…, len]`).
    let bounds: Vec<Vec<Vec<usize>>> = texts
        .iter()
        .map(|t| match t {
            Ok(t) => t
                .files
                .iter()
                .map(|(_, text)| {
                    let mut b = vec![0];
                    b.extend(scan::split_points(text, cores));
                    b.push(text.len());
                    b
                })
                .collect(),
            Err(_) => Vec::new(),
        })
        .collect();
    // A job: one core's share of one package.
    let jobs: Vec<(usize, usize)> = (0..refs.len())
        .filter(|&p| texts[p].is_ok())
        .flat_map(|p| (0..cores).map(move |share| (p, share)))
        .collect();
    let piece_job = |j: usize| -> Vec<(usize, PieceFacts)> {
        let (p, share) = jobs[j];
        let Ok(text) = &texts[p] else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (f, (path, content)) in text.files.iter().enumerate() {
            let b = &bounds[p][f];
            let range = if b.len() == 2 {
                // A whole file, dealt out by its index.
                (f % cores == share).then_some(0..content.len())
            } else {
                (share + 1 < b.len()).then(|| b[share]..b[share + 1])
            };
            let Some(range) = range else { continue };
            let facts = scan::parse_piece(path, content, range)
                .ok()
                .map(|src| (FileFacts::of(&src), FileTypes::of(&src, f)));
            out.push((f, facts));
        }
        out
    };
    let never = AtomicBool::new(false);
    let pieces = parallel(jobs.len(), cores.min(jobs.len()).max(1), &never, &piece_job);
    // Every file's pieces, in share order (the order of the text).
    let mut per_file: Vec<Vec<Vec<PieceFacts>>> = bounds
        .iter()
        .map(|files| files.iter().map(|_| Vec::new()).collect())
        .collect();
    for (&(p, _), piece) in jobs.iter().zip(pieces) {
        for (f, facts) in piece.into_iter().flatten() {
            per_file[p][f].push(facts);
        }
    }
    texts
        .into_iter()
        .zip(per_file)
        .map(|(text, files)| {
            let text = match text {
                Ok(t) => t,
                Err(e) => return Some((Vec::new(), Err(e))),
            };
            let head = PackageHead::of_text(&text);
            let mut facts = Vec::with_capacity(files.len());
            let mut types = Vec::with_capacity(files.len());
            for (f, pieces) in files.into_iter().enumerate() {
                let (path, content) = &text.files[f];
                let whole = if pieces.iter().all(Option::is_some) {
                    let mut it = pieces.into_iter().flatten();
                    it.next().map(|(mut fa, mut ty)| {
                        for (nf, nt) in it {
                            fa.append(nf);
                            ty.append(nt);
                        }
                        (fa, ty)
                    })
                } else {
                    None
                };
                let (fa, ty) = match whole {
                    Some(w) => w,
                    None => match scan::parse_source(path, content.clone()) {
                        Ok(src) => (FileFacts::of(&src), FileTypes::of(&src, f)),
                        Err(e) => return Some((Vec::new(), Err(e))),
                    },
                };
                facts.push(fa);
                types.push((path.clone(), ty));
            }
            let package = model::package_of(&head, facts, opts);
            let types = (package.is_ok() && keep_types).then(|| {
                let tags = head.mod_file.map(|(_, t)| t).unwrap_or_default();
                PackageTypes::assemble(types, tags)
            });
            Some((
                head.inputs,
                Ok(Scanned {
                    package,
                    types,
                    crds: None,
                    apply: None,
                }),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    /// A package scanned in pieces on several cores gives the model and type table of one
    /// scanned whole, whatever the cuts hit — and the error of a whole parse when it fails.
    #[test]
    fn pieces_give_what_a_whole_parse_gives() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("demo").join("v1");
        std::fs::create_dir_all(&dir).unwrap();
        write(
            &dir,
            "mod.rs",
            "//! +groupName=demo.example.com\n//! +k8s:deepcopy-gen=package\nmod a;\nmod b;\n",
        );
        let kinds = |p: &str| -> String {
            (0..400)
                .map(|i| {
                    format!(
                        "/// Kind {i}.\n// +genclient\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\npub struct {p}{i} {{\n    pub metadata: ObjectMeta,\n    pub spec: Option<{p}Spec{i}>,\n}}\n\n/// List.\npub struct {p}{i}List {{\n    pub metadata: ListMeta,\n    pub items: Vec<{p}{i}>,\n}}\n\n#[serde(rename_all = \"camelCase\")]\npub struct {p}Spec{i} {{\n    pub some_field: Vec<String>,\n}}\n\n"
                    )
                })
                .collect()
        };
        let head =
            "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};\n\n";
        // A long raw string of what looks like item starts, where the cut for two cores lands.
        let tricky = format!(
            "pub const NOTE: &str = r\"\n{}\";\n\n",
            "\nnot an item\n".repeat(20_000)
        );
        let (a1, a2, b1) = (kinds("A"), kinds("Z"), kinds("B"));
        let a = format!("{head}{a1}{tricky}{a2}");
        let cuts = scan::split_points(&a, 2);
        let in_literal = head.len() + a1.len()..head.len() + a1.len() + tricky.len();
        assert!(in_literal.contains(&cuts[0]), "{cuts:?} {in_literal:?}");
        write(&dir, "a.rs", &a);
        write(&dir, "b.rs", &format!("{head}{tricky}{b1}"));
        let groups = crate::config::GroupVersions::parse_list("demo:v1").unwrap();
        let refs = scan::packages(tmp.path(), &groups, false).unwrap();
        let opts = ModelOptions::default();
        let whole = |refs: &[PackageRef]| {
            let src = scan::read(&refs[0]);
            src.map(|src| {
                (
                    format!(
                        "{:?}",
                        model::build_package(&src, &opts).unwrap_or_else(|e| panic!("{e}"))
                    ),
                    format!("{:?}", PackageTypes::new(&src)),
                )
            })
        };
        let (model_whole, types_whole) = whole(&refs).unwrap();
        for cores in [2, 3, 5] {
            let mut out = scan_split(&refs, cores, &opts, true);
            let Some((_, Ok(s))) = out.remove(0) else {
                panic!("no result")
            };
            assert_eq!(format!("{:?}", s.package.unwrap()), model_whole, "{cores}");
            assert_eq!(format!("{:?}", s.types.unwrap()), types_whole, "{cores}");
        }
        // A syntax error deep in a large file is reported as a whole parse reports it.
        write(
            &dir,
            "b.rs",
            &format!(
                "{head}{b1}pub struct Broken {{ a: u8,, }}\n\n{}",
                kinds("C")
            ),
        );
        let expected = whole(&refs).unwrap_err().to_string();
        assert!(expected.contains("b.rs:"), "{expected}");
        let Some((_, Err(e))) = scan_split(&refs, 2, &opts, true).remove(0) else {
            panic!("no error")
        };
        assert_eq!(e.to_string(), expected);
    }
}
