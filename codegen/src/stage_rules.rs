//! The stages' arrows, checked: every `crate::…` path outside a file's test module names a
//! stage the file's stage may read (docs/ARCHITECTURE.md, "The generator's stages"), and no two
//! files of one folder import each other through `super::`.
//!
//! ```text
//! config ─▶ scan ─▶ tags ─▶ model ─▶ crd, applyconfig ─▶ emit ─▶ output ─▶ write
//! ```
//!
//! Each stage reads only what [`ARROWS`] lists; the support modules ([`SUPPORT`]: the error
//! type, the naming rules, the generated-file markers) are read by all and read no stage; the
//! modules that run the stages ([`RUN`]) read them all. A test module (`#[cfg(test)] mod tests`,
//! the end of its file) may reach further, to check that two stages agree.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Each stage and the stages it may read.
const ARROWS: &[(&str, &[&str])] = &[
    ("config", &[]),
    ("scan", &["config"]),
    ("tags", &["scan"]),
    ("model", &["scan", "tags"]),
    ("crd", &["tags", "model"]),
    ("applyconfig", &["config", "model"]),
    ("emit", &["config", "model", "crd", "applyconfig"]),
    ("output", &["emit"]),
    ("write", &["output"]),
];

/// Modules every stage may read, which read no stage.
const SUPPORT: &[&str] = &["error", "namer", "generated"];

/// Modules that wire the stages together (and the crate root, which declares them); `scaffold`
/// writes operator projects and runs the generator over them through the `Builder`.
const RUN: &[&str] = &["pipeline", "builder", "lib", "stage_rules", "scaffold"];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `text` without comments and string, char and raw string literals (each replaced by a space),
/// so that only code is searched.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
                out.push(' ');
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                i = match text[open + 1..].find(&close) {
                    Some(end) => open + 1 + end + close.len(),
                    None => b.len(),
                };
                out.push(' ');
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(' ');
            }
            // A char literal (`'"'`, `'\''`); a lifetime (`'a`) is kept.
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
                out.push(' ');
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => {
                i += 3;
                out.push(' ');
            }
            c => {
                // Copy a whole UTF-8 character.
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                if c.is_ascii() {
                    out.push(c as char);
                } else {
                    out.push_str(&text[i..i + len]);
                }
                i += len;
            }
        }
    }
    out
}

/// The first path segments after each `crate::` (and inside `crate::{…}`) in `code`.
fn crate_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(list) = rest.strip_prefix('{') {
            let inner = list.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                let name = item.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() {
                    out.push(name.to_string());
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

/// The sibling files a file imports through `super::<name>` (from a file other than `mod.rs`).
fn sibling_imports(code: &str) -> Vec<String> {
    code.match_indices("super::")
        .filter(|(at, _)| !code[..*at].ends_with("super::"))
        .map(|(at, m)| {
            code[at + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| {
            name != "super" && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        })
        .collect()
}

/// The module a source file belongs to: its first path component under `src/` (`emit` for
/// `emit/clientset/kind.rs`), without `.rs`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// The code of `file` before its test module.
fn non_test_code(file: &Path) -> String {
    let text = fs::read_to_string(file).unwrap_or_default();
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    code_only(&text[..end])
}

#[test]
fn every_stage_reads_only_the_stages_its_arrows_allow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let arrows: BTreeMap<&str, &[&str]> = ARROWS.iter().copied().collect();
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        if module == "main" {
            // The CLI is a crate of its own: it reads the library's public items only.
            continue;
        }
        let shown = file
            .strip_prefix(&src)
            .unwrap_or(file)
            .display()
            .to_string();
        let code = non_test_code(file);
        let allowed: &[&str] = if RUN.contains(&module.as_str()) {
            continue;
        } else if SUPPORT.contains(&module.as_str()) {
            &[]
        } else if let Some(allowed) = arrows.get(module.as_str()) {
            allowed
        } else {
            problems.push(format!(
                "src/{shown}: module `{module}` is in no stage: add it to ARROWS, SUPPORT or RUN \
                 in src/stage_rules.rs and to docs/ARCHITECTURE.md"
            ));
            continue;
        };
        for used in crate_modules(&code) {
            let ok = used == module
                || SUPPORT.contains(&used.as_str())
                || allowed.contains(&used.as_str());
            if !ok {
                problems.push(format!(
                    "src/{shown}: stage `{module}` uses `crate::{used}`, but it may read only {}",
                    if allowed.is_empty() {
                        "the support modules (error, namer, generated)".to_string()
                    } else {
                        format!("{} and the support modules", allowed.join(", "))
                    }
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "imports against the stages' arrows:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_two_files_of_a_folder_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // (folder, file stem) → sibling stems it imports.
    let mut imports: BTreeMap<(PathBuf, String), Vec<String>> = BTreeMap::new();
    for file in &files {
        let (Some(dir), Some(stem)) = (file.parent(), file.file_stem()) else {
            continue;
        };
        let stem = stem.to_string_lossy().into_owned();
        if dir == src || stem == "mod" {
            continue;
        }
        imports.insert(
            (dir.to_path_buf(), stem),
            sibling_imports(&non_test_code(file)),
        );
    }
    let mut problems = Vec::new();
    for ((dir, a), used) in &imports {
        for b in used {
            let back = imports.get(&(dir.clone(), b.clone()));
            if a < b && back.is_some_and(|u| u.contains(a)) {
                let dir = dir.strip_prefix(&src).unwrap_or(dir).display();
                problems.push(format!(
                    "src/{dir}/{a}.rs and src/{dir}/{b}.rs import each other: one of them should \
                     hold what both need"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checks_see_code_only() {
    let code = code_only(
        "use crate::model::Kind; // crate::emit\nlet s = \"crate::write\"; let c = '\"';\n\
         let r = r#\"crate::output\"#; use crate::{error::Error, namer};\nfn f<'a>() {}",
    );
    assert_eq!(crate_modules(&code), ["model", "error", "namer"]);
    assert_eq!(
        sibling_imports("use super::schema::Schema;\nuse super::super::Ctx;\nuse super::{Scale};"),
        ["schema"]
    );
}
