//! Stage 1, scan: find `<apis>/<group>/<version>/*.rs`, read and parse each file with `syn`,
//! keeping the source text so that the tags stage can see plain `//` comments.

use std::fs;
use std::path::{Path, PathBuf};

use crate::config::GroupVersions;
use crate::error::{Error, Location, Pos, Result};
use crate::namer;

/// A parsed Rust source file of an API package.
#[derive(Debug)]
pub(crate) struct SourceFile {
    /// Path of the file (the apis dir joined with group, version and file name).
    pub path: PathBuf,
    /// The file's text, as read.
    pub text: String,
    /// The parsed file.
    pub ast: syn::File,
    /// Where each line of `text` starts, for the tags stage.
    pub lines: LineIndex,
}

impl SourceFile {
    /// The Rust module this file defines inside its package: `None` for `mod.rs`.
    pub fn module(&self) -> Option<String> {
        let stem = self.path.file_stem()?.to_str()?;
        (stem != "mod").then(|| stem.to_string())
    }
}

/// The sources of one API package, `<apis>/<group>/<version>/`.
#[derive(Debug)]
pub(crate) struct PackageSource {
    /// The group's folder name (`crddemo`, `example3.io`).
    pub group_dir: String,
    /// The version folder name (`v1`).
    pub version: String,
    /// The package folder.
    pub dir: PathBuf,
    /// Every `.rs` file of the package, sorted by name, `mod.rs` included.
    pub files: Vec<SourceFile>,
}

impl PackageSource {
    /// The package's `mod.rs`, which holds the package tags.
    pub fn mod_file(&self) -> Option<&SourceFile> {
        self.files.iter().find(|f| f.module().is_none())
    }
}

/// A package to read: `<apis>/<group>/<version>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PackageRef {
    /// The group's folder name.
    pub group_dir: String,
    /// The version folder name.
    pub version: String,
    /// The package folder.
    pub dir: PathBuf,
}

/// The packages named in `groups` (or, when empty, every `<group>/<version>` folder whose
/// version looks like `v1`, `v1beta1` …) under `apis_dir`, checked to exist. With
/// `every_version`, the other version folders of the one group named are added (a CRD holds
/// every version of its kind).
pub(crate) fn packages(
    apis_dir: &Path,
    groups: &[GroupVersions],
    every_version: bool,
) -> Result<Vec<PackageRef>> {
    if !apis_dir.is_dir() {
        return Err(Error::file(
            apis_dir,
            "apis directory does not exist or is not a directory",
        ));
    }
    let mut wanted: Vec<(String, String)> = if groups.is_empty() {
        discover(apis_dir)?
    } else {
        groups
            .iter()
            .flat_map(|g| g.versions.iter().map(|v| (g.group.clone(), v.clone())))
            .collect()
    };
    if every_version && let [g] = groups {
        let mut others: Vec<String> = Vec::new();
        for version in sorted_entries(&apis_dir.join(&g.group))? {
            if let Some(v) = file_name(&version)
                && version.is_dir()
                && namer::is_version(&v)
                && !g.versions.contains(&v)
            {
                others.push(v);
            }
        }
        wanted.extend(others.into_iter().map(|v| (g.group.clone(), v)));
    }
    if wanted.is_empty() {
        return Err(Error::file(
            apis_dir,
            "no API packages found: expected <group>/<version>/ folders such as crddemo/v1",
        ));
    }
    let mut out = Vec::with_capacity(wanted.len());
    for (group, version) in wanted {
        let dir = apis_dir.join(&group).join(&version);
        if !dir.is_dir() {
            return Err(Error::file(
                &dir,
                format!("package folder for {group}:{version} does not exist"),
            ));
        }
        if !namer::is_version(&version) {
            return Err(Error::file(
                &dir,
                format!("{version:?} is not a Kubernetes API version (v1, v1beta1, v2alpha1 …)"),
            ));
        }
        out.push(PackageRef {
            group_dir: group,
            version,
            dir,
        });
    }
    Ok(out)
}

/// Reads and parses every `.rs` file of one package.
pub(crate) fn read(package: &PackageRef) -> Result<PackageSource> {
    let text = read_text(package)?;
    let mut files = Vec::with_capacity(text.files.len());
    for (path, t) in text.files {
        files.push(parse_source(&path, t)?);
    }
    Ok(PackageSource {
        group_dir: text.group_dir,
        version: text.version,
        dir: text.dir,
        files,
    })
}

/// The texts of one package's `.rs` files, read but not parsed, so that several threads can
/// parse parts of them.
#[derive(Debug)]
pub(crate) struct PackageText {
    /// The group's folder name.
    pub group_dir: String,
    /// The version folder name.
    pub version: String,
    /// The package folder.
    pub dir: PathBuf,
    /// Every `.rs` file, sorted by name, with its text.
    pub files: Vec<(PathBuf, String)>,
}

impl PackageText {
    /// The package's `mod.rs` and its text.
    pub fn mod_file(&self) -> Option<(&Path, &str)> {
        self.files
            .iter()
            .find(|(p, _)| p.file_stem().is_some_and(|s| s == "mod"))
            .map(|(p, t)| (p.as_path(), t.as_str()))
    }
}

/// Reads every `.rs` file of one package.
pub(crate) fn read_text(package: &PackageRef) -> Result<PackageText> {
    let mut files = Vec::new();
    for path in sorted_entries(&package.dir)? {
        let Some(name) = file_name(&path) else {
            continue;
        };
        if !path.is_file() || !name.ends_with(".rs") || is_generated_name(&name) {
            continue;
        }
        let text = read_file(&path)?;
        files.push((path, text));
    }
    Ok(PackageText {
        group_dir: package.group_dir.clone(),
        version: package.version.clone(),
        dir: package.dir.clone(),
        files,
    })
}

/// Files smaller than this are parsed whole: splitting them gains nothing.
const SPLIT_MIN_BYTES: usize = 64 * 1024;

/// Where `text` may be cut into about `parts` pieces that each hold whole top-level items: byte
/// offsets of line starts, increasing, none at 0. A cut is made at the first line at or after
/// each even share of the text that starts in column 0 with neither a closing delimiter nor a
/// space and follows a blank line — the usual start of an item's doc comment, attributes or
/// keyword. The rule can be fooled (a blank line inside a string literal or an unindented
/// body); a piece that then fails to parse makes the caller parse the file whole, so a cut
/// only ever changes speed.
pub(crate) fn split_points(text: &str, parts: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    if parts < 2 || text.len() < SPLIT_MIN_BYTES {
        return out;
    }
    let bytes = text.as_bytes();
    for k in 1..parts {
        let target = text.len() * k / parts;
        let mut at = out.last().copied().unwrap_or(0).max(target);
        // To the next line start.
        while at < bytes.len() && at > 0 && bytes[at - 1] != b'\n' {
            at += 1;
        }
        let mut cut = None;
        let mut prev_blank = false;
        // Whether the line before `at` is blank: look back from `at`.
        if at > 0 {
            let before = &text[..at - 1];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            prev_blank = before[line_start..].trim().is_empty();
        }
        while at < bytes.len() {
            let end = text[at..].find('\n').map_or(bytes.len(), |i| at + i + 1);
            let line = &text[at..end];
            let starts_item = line
                .as_bytes()
                .first()
                .is_some_and(|&b| !b.is_ascii_whitespace() && !matches!(b, b'}' | b')' | b']'));
            if prev_blank && starts_item {
                cut = Some(at);
                break;
            }
            prev_blank = line.trim().is_empty();
            at = end;
        }
        match cut {
            Some(c) if out.last().is_none_or(|&l| c > l) => out.push(c),
            _ => break,
        }
    }
    out
}

/// Parses the piece `range` of `text` (the whole content of `path`), which starts at a line
/// start: positions in the result are those of the whole file, and the file's text and line
/// index are kept whole for the tags stage.
pub(crate) fn parse_piece(
    path: &Path,
    text: &str,
    range: std::ops::Range<usize>,
) -> std::result::Result<SourceFile, ()> {
    let ast = if range.start == 0 {
        let piece = &text[range];
        syn::parse_file(piece.strip_prefix('\u{feff}').unwrap_or(piece))
    } else {
        // Blank lines in place of what comes before keep every position that of the file.
        let lines_before = text.as_bytes()[..range.start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let mut padded = "\n".repeat(lines_before);
        padded.push_str(&text[range]);
        syn::parse_file(&padded)
    };
    Ok(SourceFile {
        path: path.to_path_buf(),
        lines: LineIndex::new(text),
        text: text.to_string(),
        ast: ast.map_err(|_| ())?,
    })
}

fn discover(apis_dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for group in sorted_entries(apis_dir)? {
        if !group.is_dir() {
            continue;
        }
        let Some(gname) = file_name(&group) else {
            continue;
        };
        for version in sorted_entries(&group)? {
            let Some(vname) = file_name(&version) else {
                continue;
            };
            if version.is_dir() && namer::is_version(&vname) {
                out.push((gname.clone(), vname));
            }
        }
    }
    Ok(out)
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name()?.to_str().map(String::from)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = fs::read_dir(dir).map_err(|e| Error::io(dir, "cannot read directory", e))?;
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, "cannot read directory", e))?;
        out.push(entry.path());
    }
    // File-system order is arbitrary; sorting keeps output byte-identical across machines.
    out.sort();
    Ok(out)
}

/// Whether a file name is generator output (never read back as input).
pub(crate) fn is_generated_name(name: &str) -> bool {
    name.starts_with("zz_generated")
}

/// Reads one file as UTF-8; the error names the file, line and column.
fn read_file(path: &Path) -> Result<String> {
    let bytes = fs::read(path).map_err(|e| Error::io(path, "cannot read file", e))?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(t),
        Err(e) => {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let col = String::from_utf8_lossy(&valid[line_start..])
                .chars()
                .count()
                + 1;
            Err(Error::at(
                Location::new(path, Pos { line, col }),
                "file is not valid UTF-8",
            ))
        }
    }
}

/// Parses `text` as the content of `path`.
pub(crate) fn parse_source(path: &Path, text: String) -> Result<SourceFile> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let ast = syn::parse_file(body).map_err(|e| {
        Error::at(
            Location::new(path, Pos::of_span(e.span())),
            format!("cannot parse Rust: {e}"),
        )
    })?;
    Ok(SourceFile {
        path: path.to_path_buf(),
        lines: LineIndex::new(&text),
        text,
        ast,
    })
}

/// The lines of a source file, indexed once so that finding an item's comment block costs only
/// the lines of that block (the tags stage runs once per type and per field).
///
/// Line `n` (1-based) is what `text.lines()` yields at index `n - 1`: without its `\n`, and
/// without a `\r` before it.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
    /// Byte length of the text.
    len: usize,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr_newlines(text).map(|i| i + 1));
        // `str::lines` yields no empty last line after a final newline.
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        if text.is_empty() {
            starts.clear();
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// Line `n` (1-based) of `text`, the text this index was built from.
    pub fn line<'t>(&self, text: &'t str, n: usize) -> Option<&'t str> {
        let i = n.checked_sub(1)?;
        let start = *self.starts.get(i)?;
        let rest = text.get(start..self.len)?;
        Some(match rest.find('\n') {
            Some(end) => rest[..end].strip_suffix('\r').unwrap_or(&rest[..end]),
            None => rest,
        })
    }
}

fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_group_version_lists() {
        let g = GroupVersions::parse_list("crddemo:v1 example:v1beta1,v1 crddemo:v2").unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].versions, ["v1", "v2"]);
        assert_eq!(g[1].versions, ["v1beta1", "v1"]);
        assert!(GroupVersions::parse_list("crddemo").is_err());
        assert!(GroupVersions::parse_list("crddemo:").is_err());
        assert!(GroupVersions::parse_list("").is_err());
    }

    #[test]
    fn reports_parse_errors_with_position() {
        let err = parse_source(Path::new("x.rs"), "pub struct A {\n  a: u8,,\n}\n".into())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.rs:2:"), "{err}");
        assert!(err.contains("error: cannot parse Rust"), "{err}");
    }

    /// A file of `n` documented structs, about 150 bytes each.
    fn structs(n: usize) -> String {
        (0..n)
            .map(|i| format!("/// Type {i}.\n// +k8s:deepcopy-gen=true\npub struct T{i} {{\n    /// A field.\n    pub a: Option<String>,\n}}\n\n"))
            .collect()
    }

    #[test]
    fn cuts_large_files_between_items_only() {
        assert!(
            split_points(&structs(10), 2).is_empty(),
            "small files stay whole"
        );
        let text = structs(2000);
        for parts in [2, 3, 8] {
            let cuts = split_points(&text, parts);
            assert_eq!(cuts.len(), parts - 1, "{parts}");
            let mut bounds = vec![0];
            bounds.extend(&cuts);
            bounds.push(text.len());
            let mut names = Vec::new();
            for w in bounds.windows(2) {
                assert!(text[..w[0]].ends_with("\n\n") || w[0] == 0);
                let piece = parse_piece(Path::new("t.rs"), &text, w[0]..w[1]).unwrap();
                for item in &piece.ast.items {
                    let syn::Item::Struct(st) = item else {
                        panic!("not a struct")
                    };
                    // Positions are those of the whole file.
                    let line = st.ident.span().start().line;
                    assert_eq!(
                        text.lines().nth(line - 1).unwrap(),
                        format!("pub struct {} {{", st.ident)
                    );
                    names.push(st.ident.to_string());
                }
            }
            let all: Vec<String> = (0..2000).map(|i| format!("T{i}")).collect();
            assert_eq!(
                names, all,
                "{parts}: every item in exactly one piece, in order"
            );
        }
    }

    #[test]
    fn a_cut_inside_a_literal_fails_to_parse_instead_of_misleading() {
        // A blank line and an unindented line inside a raw string look like an item start.
        let filler = structs(500);
        let text = format!("{filler}pub const DOC: &str = r\"\n\nnot an item\n\";\n{filler}");
        let at = text.find("not an item").unwrap();
        assert!(parse_piece(Path::new("t.rs"), &text, 0..at).is_err());
        assert!(parse_piece(Path::new("t.rs"), &text, at..text.len()).is_err());
    }
}
