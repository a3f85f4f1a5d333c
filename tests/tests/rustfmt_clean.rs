//! Every file the generator writes is laid out as `rustfmt` would lay it out: `rustfmt --check`
//! leaves every one unchanged, for every fixture, every generator and module paths of several
//! lengths (which move where lines must break), and every one parses with `syn`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The `--groups=` line of a fixture's `codegen.args`.
fn groups(fixture: &Path) -> String {
    let args = std::fs::read_to_string(fixture.join("codegen.args")).unwrap();
    args.lines()
        .find_map(|l| l.strip_prefix("--groups="))
        .unwrap_or_else(|| panic!("no --groups= in {}", fixture.display()))
        .to_string()
}

/// The generators a fixture runs (its `#generators:` line, else all) and its
/// `--external-applyconfigurations=` lines.
fn generators_and_externals(fixture: &Path) -> (Vec<kube_codegen::Generator>, Vec<String>) {
    let args = std::fs::read_to_string(fixture.join("codegen.args")).unwrap();
    let generators = args
        .lines()
        .find_map(|l| l.strip_prefix("#generators:"))
        .map_or_else(
            || kube_codegen::Generator::ALL.to_vec(),
            |l| {
                l.split_whitespace()
                    .map(|g| kube_codegen::Generator::parse(g).unwrap())
                    .collect()
            },
        );
    let externals = args
        .lines()
        .filter_map(|l| l.strip_prefix("--external-applyconfigurations="))
        .map(String::from)
        .collect();
    (generators, externals)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `rustfmt` run on `code`: with `check`, what it would change (empty when nothing); else the
/// code as it formats it.
fn rustfmt(code: &str, check: bool) -> String {
    let mut args = vec!["--edition", "2024", "--color", "never"];
    args.push(if check { "--check" } else { "--quiet" });
    let mut child = Command::new("rustfmt")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run rustfmt ({e}): rustup component add rustfmt"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(code.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "rustfmt: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `rustfmt`'s own layout of a file keeps a code line (not a comment) past 100
/// columns: it then gives up on that item and leaves it as it finds it, so its check says
/// nothing about our layout of the item.
fn rustfmt_cannot_fit(formatted: &str) -> bool {
    formatted.lines().any(|l| {
        let t = l.trim_start();
        l.len() > 100 && !t.starts_with("//")
    })
}

/// What the checks of one thread came to.
#[derive(Default)]
struct Checked {
    checked: usize,
    skipped: usize,
    failures: Vec<String>,
}

/// Generates `fixture` with its APIs at `apis_module` and the runtime at `runtime`, and checks
/// every file it writes with `syn` and rustfmt.
fn check_fixture(fixture: &Path, apis_module: &str, runtime: &str, out: &mut Checked) {
    let dir = tempfile::tempdir().unwrap();
    let (generators, externals) = generators_and_externals(fixture);
    let mut builder = kube_codegen::Builder::new();
    for spec in &externals {
        builder = builder.external_apply_configurations(spec);
    }
    builder
        .apis_dir(fixture.join("pkg/apis"))
        .groups(&groups(fixture))
        .apis_module(apis_module)
        .client_module("crate::client")
        .runtime_crate(runtime)
        .generators(generators)
        .emit_rerun_if_changed(false)
        .out_dir(dir.path())
        .compile()
        .unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
    let mut files = Vec::new();
    walk(dir.path(), &mut files);
    for f in files {
        let code = std::fs::read_to_string(&f).unwrap();
        if let Err(e) = syn::parse_file(&code) {
            out.failures
                .push(format!("{} does not parse: {e}", f.display()));
            continue;
        }
        let diff = rustfmt(&code, true);
        if diff.is_empty() {
            out.checked += 1;
        } else if rustfmt_cannot_fit(&rustfmt(&code, false)) {
            out.skipped += 1;
        } else {
            out.failures.push(format!(
                "{} ({apis_module}, {runtime}):\n{diff}",
                f.display()
            ));
        }
    }
}

#[test]
fn generated_files_pass_rustfmt_check_for_any_path_lengths() {
    let combos = [
        ("crate::pkg::apis", "::kube_codegen_runtime"),
        ("a", "rt"),
        (
            "crate::x::yy::zzz",
            "crate::vendored::kube_codegen_runtime_long",
        ),
        (
            "crate::some::considerably::longer::module::path::for_the::apis",
            "::kube_codegen_runtime",
        ),
    ];
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("codegen.args").is_file())
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 5, "fixtures found: {fixtures:?}");
    // Each fixture with each combination, on as many threads as there are cores: most of the
    // time is rustfmt's, one process per file.
    let jobs: Vec<(&PathBuf, (&str, &str))> = fixtures
        .iter()
        .flat_map(|f| combos.iter().map(move |&c| (f, c)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results: Vec<Checked> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Checked::default();
                    while let Some(&(fixture, (apis_module, runtime))) =
                        jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        check_fixture(fixture, apis_module, runtime, &mut out);
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let checked: usize = results.iter().map(|r| r.checked).sum();
    // Files with an item no layout keeps within 100 columns (the longest module paths).
    let skipped: usize = results.iter().map(|r| r.skipped).sum();
    let failures: Vec<String> = results.into_iter().flat_map(|r| r.failures).collect();
    eprintln!("{checked} files unchanged by rustfmt, {skipped} with an item it cannot fit");
    assert!(
        checked >= 1000 && skipped * 10 < checked,
        "{checked} files checked, {skipped} skipped"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
