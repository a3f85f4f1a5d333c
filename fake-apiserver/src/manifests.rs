//! Reading manifests to seed a server with: YAML or JSON files (several documents each, and
//! `kind: List` documents), or every `.yaml`, `.yml` and `.json` file of a directory in name
//! order.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::FakeError;

fn load_err(path: &Path, message: impl Into<String>) -> FakeError {
    FakeError::Load {
        path: path.display().to_string(),
        message: message.into(),
    }
}

fn is_manifest(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// The manifest files at `path`: the file itself, or a directory's manifest files (not
/// recursive) sorted by name.
fn files(path: &Path) -> Result<Vec<PathBuf>, FakeError> {
    let meta = std::fs::metadata(path).map_err(|e| load_err(path, e.to_string()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| load_err(path, e.to_string()))? {
        let p = entry.map_err(|e| load_err(path, e.to_string()))?.path();
        if p.is_file() && is_manifest(&p) {
            out.push(p);
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(load_err(
            path,
            "no .yaml, .yml or .json files in the directory",
        ));
    }
    Ok(out)
}

/// Parses the documents of one manifest text; `source` names it in errors.
pub fn parse_manifests(text: &str, source: &Path) -> Result<Vec<Value>, FakeError> {
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(text)
        .map_err(|e| load_err(source, format!("not valid YAML or JSON: {e}")))?;
    let mut out = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        match doc {
            Value::Null => {}
            Value::Object(ref m) => {
                let kind = m.get("kind").and_then(Value::as_str).unwrap_or("");
                let api_version = m.get("apiVersion").and_then(Value::as_str).unwrap_or("");
                if kind.ends_with("List") && m.get("items").is_some_and(Value::is_array) {
                    if let Some(Value::Array(items)) = m.get("items") {
                        out.extend(items.iter().cloned());
                    }
                    continue;
                }
                if kind.is_empty() || api_version.is_empty() {
                    return Err(load_err(
                        source,
                        format!("document {}: apiVersion and kind are required", i + 1),
                    ));
                }
                out.push(doc);
            }
            other => {
                return Err(load_err(
                    source,
                    format!(
                        "document {}: expected an object, found {}",
                        i + 1,
                        match other {
                            Value::Array(_) => "a list",
                            Value::String(_) => "a string",
                            Value::Number(_) => "a number",
                            _ => "a scalar",
                        }
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Reads every object in a manifest file, or in the manifest files of a directory.
pub fn read_manifests(path: impl AsRef<Path>) -> Result<Vec<Value>, FakeError> {
    let mut out = Vec::new();
    for f in files(path.as_ref())? {
        let text = std::fs::read_to_string(&f).map_err(|e| load_err(&f, e.to_string()))?;
        out.extend(parse_manifests(&text, &f)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_lists_and_errors() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n";
        let docs = parse_manifests(text, Path::new("x.yaml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["kind"], "Secret");
        let e = parse_manifests("kind: ConfigMap\n", Path::new("x.yaml"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("x.yaml: document 1: apiVersion and kind are required")
        );
        let e = parse_manifests("a: [\n", Path::new("bad.yaml"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.starts_with("bad.yaml: not valid YAML or JSON"), "{e}");
    }
}
