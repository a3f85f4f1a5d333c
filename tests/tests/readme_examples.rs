//! Every Rust example in the README is code the workspace compiles.
//!
//! Each ```` ```rust ```` block of `README.md` is split into excerpts at elision lines (`…` or
//! `// …`) and at file headers (`// build.rs`, `// src/client.rs` …: a comment naming a `.rs`
//! file). Every excerpt must appear, line for line (indentation and blank lines aside), in one
//! Rust source file of the repository, and those files are built by `cargo test --workspace`
//! (tests, examples, the example crates, generated code). So an example cannot drift from the
//! API: change the code it quotes and this test names the block to fix.

use std::fs;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("tests/ has no parent"))
}

/// The Rust blocks of a Markdown text: (line of the opening fence, the block's lines).
fn rust_blocks(markdown: &str) -> Vec<(usize, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut current, fence) {
            (None, true) => {
                let info = line.trim_start().trim_start_matches('`').trim();
                let lang = info.split([',', ' ']).next().unwrap_or("");
                if lang == "rust" {
                    current = Some((i + 1, Vec::new()));
                }
            }
            (Some(_), true) => blocks.extend(current.take()),
            (Some((_, lines)), false) => lines.push(line),
            (None, false) => {}
        }
    }
    blocks
}

fn is_elision(line: &str) -> bool {
    matches!(line, "…" | "// …" | "..." | "// ...")
}

/// A comment that names a file (`// build.rs`, `// src/pkg/apis/crddemo/v1/mod.rs`).
fn is_file_header(line: &str) -> bool {
    line.strip_prefix("// ")
        .is_some_and(|rest| rest.ends_with(".rs") && !rest.contains(' '))
}

/// The excerpts of a block: runs of non-blank, trimmed lines between elisions and headers.
fn excerpts<'a>(block: &[&'a str]) -> Vec<Vec<&'a str>> {
    let mut out = vec![Vec::new()];
    for line in block.iter().map(|l| l.trim()) {
        if is_elision(line) || is_file_header(line) {
            out.push(Vec::new());
        } else if !line.is_empty()
            && let Some(last) = out.last_mut()
        {
            last.push(line);
        }
    }
    out.retain(|e| !e.is_empty());
    out
}

/// Every `.rs` file of the repository outside `target/` and hidden folders, as trimmed,
/// non-blank lines.
fn sources(root: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                let text =
                    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let lines = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect();
                out.push((path, lines));
            }
        }
    }
    out
}

fn contains_run(haystack: &[String], needle: &[&str]) -> bool {
    needle.is_empty()
        || haystack
            .windows(needle.len())
            .any(|w| w.iter().zip(needle).all(|(a, b)| a == b))
}

#[test]
fn every_readme_rust_example_is_compiled_code() {
    let root = repo_root();
    let readme =
        fs::read_to_string(root.join("README.md")).unwrap_or_else(|e| panic!("README.md: {e}"));
    let blocks = rust_blocks(&readme);
    assert!(!blocks.is_empty(), "README.md has no Rust examples");
    let sources = sources(&root);
    let mut missing = Vec::new();
    for (line, block) in &blocks {
        for excerpt in excerpts(block) {
            if !sources
                .iter()
                .any(|(_, lines)| contains_run(lines, &excerpt))
            {
                missing.push(format!(
                    "README.md:{line}: this excerpt is in no Rust source file:\n    {}",
                    excerpt.join("\n    ")
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n\n"));
}

#[test]
fn the_checker_splits_and_matches_as_documented() {
    let md = "text\n```rust\n// build.rs\nfn main() {}\n\n// …\nlet x = 1;\n```\n```sh\nls\n```\n";
    let blocks = rust_blocks(md);
    assert_eq!(blocks.len(), 1);
    assert_eq!(
        excerpts(&blocks[0].1),
        vec![vec!["fn main() {}"], vec!["let x = 1;"]]
    );
    let file: Vec<String> = ["a", "fn main() {}", "b"].map(String::from).to_vec();
    assert!(contains_run(&file, &["fn main() {}"]));
    assert!(!contains_run(&file, &["fn main() {}", "c"]));
}
