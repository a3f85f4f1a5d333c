//! Every Rust example in the README and in `docs/` is code the workspace compiles.
//!
//! Each ```` ```rust ```` block of `README.md` and of every Markdown file under `docs/` is split
//! into excerpts at elision lines (`…` or `// …`) and at file headers (`// build.rs`,
//! `// src/client.rs` …: a comment naming a `.rs` file). Every excerpt must appear, line for line
//! (indentation and blank lines aside), in one Rust source file of the repository or in that
//! file's doc comments, and those are built by `cargo test --workspace` (tests, examples, doc
//! tests, the example crates, generated code). So an example cannot drift from the API: change
//! the code it quotes and this test names the block to fix. Blocks whose info string says
//! `ignore` (```` ```rust,ignore ````: API sketches, not code) are skipped, as are blocks of other
//! languages (`text`, `sh` …). A page a crate makes its documentation
//! (`#[doc = include_str!("….md")]`) is compiled and run block by block by rustdoc, so its
//! blocks are taken as they stand.
//!
//! A snippet must also show its imports: a page whose block uses one of [`MUST_IMPORT`] has a
//! `use` of it in that block or an earlier one of the same page.

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
                let mut words = info.split([',', ' ']).filter(|w| !w.is_empty());
                let lang = words.next().unwrap_or("");
                if lang == "rust" && !words.any(|w| w == "ignore") {
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
/// non-blank lines, and the same file's doc comments as [`doc_lines`].
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
                let docs = doc_lines(&text);
                out.push((path.clone(), lines));
                if !docs.is_empty() {
                    out.push((path, docs));
                }
            }
        }
    }
    out
}

/// The text of a file's doc comments (`//!`, `///`) without their markers, trimmed and
/// non-blank: what its doc tests are made of, which `cargo test` compiles too.
fn doc_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("//!").or_else(|| l.strip_prefix("///")))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

fn contains_run(haystack: &[String], needle: &[&str]) -> bool {
    needle.is_empty()
        || haystack
            .windows(needle.len())
            .any(|w| w.iter().zip(needle).all(|(a, b)| a == b))
}

/// `README.md` and every `.md` file under `docs/`, as paths relative to the root, sorted.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("README.md")];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                out.push(rel);
            }
        }
    }
    out[1..].sort();
    out
}

/// Names a snippet may not use without showing where they come from (issue 27: users met them
/// in examples that did not say what to import).
const MUST_IMPORT: &[&str] = &["InformerOptions", "GroupVersionResource", "api_status"];

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `text` has `name` as a whole identifier.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
    })
}

/// A block's `use` declarations (each possibly over several lines) and the rest of its code.
fn split_uses(block: &[&str]) -> (String, String) {
    let (mut uses, mut code) = (String::new(), String::new());
    let mut in_use = false;
    for line in block.iter().map(|l| l.trim()) {
        if line.starts_with("use ") || line.starts_with("pub use ") {
            in_use = true;
        }
        let out = if in_use { &mut uses } else { &mut code };
        out.push_str(line);
        out.push('\n');
        if in_use && line.ends_with(';') {
            in_use = false;
        }
    }
    (uses, code)
}

/// For one page: the blocks that use a [`MUST_IMPORT`] name no block up to them imports.
fn missing_imports(file: &str, blocks: &[(usize, Vec<&str>)]) -> Vec<String> {
    let mut imported = String::new();
    let mut out = Vec::new();
    for (line, block) in blocks {
        let (uses, code) = split_uses(block);
        imported.push_str(&uses);
        for name in MUST_IMPORT {
            if mentions(&code, name) && !mentions(&imported, name) {
                out.push(format!(
                    "{file}:{line}: this block uses `{name}` but the page shows no `use` of it"
                ));
            }
        }
    }
    out
}

/// The Markdown files a Rust source makes its documentation (`#[doc = include_str!("….md")]`):
/// rustdoc compiles and runs each of their blocks as a doctest, so they are compiled code as
/// they stand, paths relative to the repository root.
fn doctest_pages(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (path, lines) in sources(root) {
        for line in &lines {
            let Some(rest) = line.strip_prefix("#[doc = include_str!(\"") else {
                continue;
            };
            let Some(rel) = rest.split('"').next().filter(|r| r.ends_with(".md")) else {
                continue;
            };
            let page = path.parent().unwrap_or(root).join(rel);
            if let Ok(page) = page.canonicalize()
                && let Ok(root) = root.canonicalize()
                && let Ok(rel) = page.strip_prefix(&root)
            {
                out.push(rel.to_path_buf());
            }
        }
    }
    out
}

#[test]
fn every_readme_and_docs_rust_example_is_compiled_code() {
    let root = repo_root();
    let sources = sources(&root);
    let doctests = doctest_pages(&root);
    let mut missing = Vec::new();
    let mut total = 0;
    for file in markdown_files(&root) {
        let name = file.display().to_string();
        let text = fs::read_to_string(root.join(&file)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let blocks = rust_blocks(&text);
        total += blocks.len();
        missing.extend(missing_imports(&name, &blocks));
        if doctests.contains(&file) {
            // compiled and run by rustdoc as the including crate's doctests
            continue;
        }
        for (line, block) in &blocks {
            for excerpt in excerpts(block) {
                if !sources
                    .iter()
                    .any(|(_, lines)| contains_run(lines, &excerpt))
                {
                    missing.push(format!(
                        "{name}:{line}: this excerpt is in no Rust source file:\n    {}",
                        excerpt.join("\n    ")
                    ));
                }
            }
        }
    }
    assert!(total > 0, "README.md and docs/ have no Rust examples");
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

    // Doc comments are searched without their markers.
    let docs = doc_lines("//! ```\n//! let x = 1;\n//!\n/// y();\nfn f() {}\n");
    assert_eq!(docs, ["```", "let x = 1;", "y();"]);

    // `ignore` blocks and other languages are skipped.
    let md = "```rust,ignore\nsketch();\n```\n```text\nout\n```\n```rust\nreal();\n```\n";
    let blocks = rust_blocks(md);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].1, ["real();"]);

    // Imports: shown in the block or an earlier one of the page, as a whole identifier.
    let md = concat!(
        "```rust\nuse a::{\n    InformerOptions,\n};\n```\n",
        "```rust\nlet o = InformerOptions::default();\n",
        "let g = GroupVersionResource::gvr(\"\", \"v1\", \"pods\");\n",
        "let m = informer_options(&o);\n```\n",
    );
    let missing = missing_imports("x.md", &rust_blocks(md));
    assert_eq!(
        missing,
        ["x.md:6: this block uses `GroupVersionResource` but the page shows no `use` of it"]
    );
}
