//! The server's layers point one way, as kube-apiserver's do: `endpoints` (HTTP) over
//! `semantics` (the registry and the API rules) over `storage` (objects, history, the selection
//! predicate), with `controllers` (kube-controller-manager's, acting through the registry)
//! beside HTTP over `semantics`. This test reads every source file of the lower layers and fails on a
//! reference to a layer above, naming the file, the line and the module it reached.

use std::path::{Path, PathBuf};

/// Which crate modules each layer (and the leaf modules) may name.
const ALLOWED: &[(&str, &[&str])] = &[
    ("storage", &["storage", "error"]),
    ("semantics", &["semantics", "storage", "error", "config"]),
    // kube-controller-manager's layer: above the registry, below HTTP.
    (
        "controllers",
        &["controllers", "semantics", "storage", "error", "config"],
    ),
    ("error.rs", &["error"]),
    ("config.rs", &["config"]),
];

fn sources(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        panic!("cannot read {}", path.display());
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() || p.extension().is_some_and(|e| e == "rs") {
            sources(&p, out);
        }
    }
}

/// Every `crate::<module>` a line names, including `use crate::{a, b}` groups.
fn named_modules(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
        rest = after;
    }
    out
}

#[test]
fn lower_layers_name_nothing_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (layer, allowed) in ALLOWED {
        let mut files = Vec::new();
        sources(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no sources for layer {layer}");
        for file in files {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for module in named_modules(code) {
                    if !allowed.contains(&module.as_str()) {
                        violations.push(format!(
                            "{}:{}: `{layer}` names `crate::{module}`, a layer above it (allowed: {})",
                            file.display(),
                            n + 1,
                            allowed.join(", ")
                        ));
                    }
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_scanner_sees_every_form_of_a_crate_path() {
    assert_eq!(named_modules("use crate::storage::object;"), ["storage"]);
    assert_eq!(
        named_modules("use crate::{Shared, error::ApiError};"),
        ["Shared", "error"]
    );
    assert_eq!(
        named_modules("let x = crate::endpoints::render::f(crate::error::go_quote(s));"),
        ["endpoints", "error"]
    );
    assert!(named_modules("use super::*;").is_empty());
}
