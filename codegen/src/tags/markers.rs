//! The syntax of controller-gen's markers (`+kubebuilder:…`, `+listType=…` …): what a marker's
//! arguments are, before any stage gives them a meaning.
//!
//! The tags stage splits a tag at its first `=`, so `+kubebuilder:printcolumn:name=Age,type=date`
//! arrives as key `kubebuilder:printcolumn:name` and value `Age,type=date`. [`args_of`] puts the
//! text back together and returns what follows the marker name; [`parse_args`] splits it into
//! `key=value` pairs. Values may be bare (`type=date`), double-quoted with `\"` and `\\` escapes
//! (`name="Ready"`), back-quoted raw strings (`` JSONPath=`.status.conditions[?(@.type=="Ready")].status` ``),
//! or lists, written `a;b;c` or `{a,b,c}` as controller-gen accepts both.

use crate::error::{Error, Result};
use crate::tags::Tag;

/// The text of a tag as written after the `+`: `key=value`, or `key` when it has no value.
pub fn full_text(tag: &Tag) -> String {
    match &tag.value {
        Some(v) => format!("{}={v}", tag.key),
        None => tag.key.clone(),
    }
}

/// If `tag` is the marker `name` (`kubebuilder:printcolumn`), the text of its arguments: what
/// follows `name:` or `name=` (empty for a bare `+name`). `None` for other tags.
pub fn args_of(tag: &Tag, name: &str) -> Option<String> {
    let text = full_text(tag);
    let rest = text.strip_prefix(name)?;
    if rest.is_empty() {
        return Some(String::new());
    }
    let rest = rest.strip_prefix(':').or_else(|| rest.strip_prefix('='))?;
    Some(rest.to_string())
}

/// Whether `tag` is exactly the flag marker `name`, optionally `=true`.
pub fn is_flag(tag: &Tag, name: &str) -> Result<bool> {
    if tag.key != name {
        return Ok(false);
    }
    match tag.value.as_deref() {
        None | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(v) => Err(Error::at(
            tag.location.clone(),
            format!("+{name} takes no value (found {v:?})"),
        )),
    }
}

/// Splits `k=v,k2="v,2",k3={a,b}` into `(key, raw value)` pairs, in order. A raw value keeps its
/// quotes and braces; pass it to [`unquote`] or [`list`].
pub fn parse_args(tag: &Tag, text: &str) -> Result<Vec<(String, String)>> {
    let err = |msg: String| Error::at(tag.location.clone(), format!("+{}: {msg}", tag.key));
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        while i < chars.len() && chars[i] != '=' && chars[i] != ',' {
            i += 1;
        }
        let key: String = chars[start..i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string();
        if key.is_empty() {
            return Err(err(format!("expected key=value in {text:?}")));
        }
        if i >= chars.len() || chars[i] == ',' {
            // A bare key is a boolean flag (`priority` never is; validation happens later).
            out.push((key, String::new()));
            i += 1;
            continue;
        }
        i += 1; // '='
        let vstart = i;
        i = scan_value(&chars, i, ',').map_err(|m| err(format!("{key}: {m}")))?;
        let value: String = chars[vstart..i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string();
        out.push((key, value));
        if i < chars.len() {
            i += 1; // ','
        }
    }
    Ok(out)
}

/// Returns the index just past one value starting at `i`, stopping at `stop` outside quotes
/// and braces.
fn scan_value(chars: &[char], mut i: usize, stop: char) -> std::result::Result<usize, String> {
    let mut depth = 0usize;
    while i < chars.len() {
        match chars[i] {
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err("unterminated \"…\" string".into());
                }
            }
            '`' => {
                i += 1;
                while i < chars.len() && chars[i] != '`' {
                    i += 1;
                }
                if i >= chars.len() {
                    return Err("unterminated `…` string".into());
                }
            }
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            c if c == stop && depth == 0 => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    Ok(i)
}

/// A single value without its quotes: `"a\"b"` → `a"b`, `` `a\b` `` → `a\b`, `a` → `a`.
pub fn unquote(raw: &str) -> std::result::Result<String, String> {
    let raw = raw.trim();
    if let Some(body) = raw.strip_prefix('`') {
        return body
            .strip_suffix('`')
            .map(str::to_string)
            .ok_or_else(|| format!("unterminated raw string {raw}"));
    }
    if let Some(body) = raw.strip_prefix('"') {
        let body = body
            .strip_suffix('"')
            .ok_or_else(|| format!("unterminated string {raw}"))?;
        let mut out = String::with_capacity(body.len());
        let mut it = body.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                match it.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(e @ ('"' | '\\' | '/')) => out.push(e),
                    Some(e) => {
                        // Unknown escapes stay as written, so regular expressions survive.
                        out.push('\\');
                        out.push(e);
                    }
                    None => return Err(format!("dangling backslash in {raw}")),
                }
            } else {
                out.push(c);
            }
        }
        return Ok(out);
    }
    Ok(raw.to_string())
}

/// Whether a raw value was written quoted (so it is a string, never a number).
pub fn is_quoted(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with('"') || raw.starts_with('`')
}

/// A list value, `a;b;c` or `{a,b,c}`, each item still raw (quoted items keep their quotes).
pub fn list_raw(raw: &str) -> std::result::Result<Vec<String>, String> {
    let raw = raw.trim();
    let (body, sep) = match raw.strip_prefix('{') {
        Some(b) => (
            b.strip_suffix('}')
                .ok_or_else(|| format!("unterminated list {raw}"))?,
            ',',
        ),
        None => (raw, ';'),
    };
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        i = scan_value(&chars, i, sep)?;
        let item: String = chars[start..i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string();
        if !item.is_empty() {
            out.push(item);
        }
        i += 1;
    }
    Ok(out)
}

/// A list value with every item unquoted.
pub fn list(raw: &str) -> std::result::Result<Vec<String>, String> {
    list_raw(raw)?.iter().map(|i| unquote(i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Location;

    fn tag(text: &str) -> Tag {
        let (key, value) = match text.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.trim().to_string())),
            None => (text.to_string(), None),
        };
        Tag {
            key,
            value,
            location: Location::file("t.rs"),
        }
    }

    #[test]
    fn reassembles_marker_arguments() {
        let t = tag(
            "kubebuilder:printcolumn:name=\"Ready\",type=string,JSONPath=`.status.conditions[?(@.type==\"Ready\")].status`",
        );
        let args = args_of(&t, "kubebuilder:printcolumn").unwrap();
        let pairs = parse_args(&t, &args).unwrap();
        assert_eq!(pairs[0], ("name".into(), "\"Ready\"".into()));
        assert_eq!(pairs[1], ("type".into(), "string".into()));
        assert_eq!(
            unquote(&pairs[2].1).unwrap(),
            ".status.conditions[?(@.type==\"Ready\")].status"
        );
        assert_eq!(args_of(&t, "kubebuilder:print"), None);
        assert_eq!(
            args_of(
                &tag("kubebuilder:storageversion"),
                "kubebuilder:storageversion"
            )
            .as_deref(),
            Some("")
        );
    }

    #[test]
    fn quoted_values_keep_commas_and_escapes() {
        let t = tag("kubebuilder:printcolumn:name=\"A, B\",JSONPath=\".spec[\\\"x\\\"]\"");
        let pairs = parse_args(&t, &args_of(&t, "kubebuilder:printcolumn").unwrap()).unwrap();
        assert_eq!(unquote(&pairs[0].1).unwrap(), "A, B");
        assert_eq!(unquote(&pairs[1].1).unwrap(), ".spec[\"x\"]");
        assert!(parse_args(&t, "name=\"open").is_err());
        assert_eq!(unquote(r#""^\d+$""#).unwrap(), r"^\d+$");
    }

    #[test]
    fn lists_in_both_spellings() {
        assert_eq!(list("md;mds").unwrap(), ["md", "mds"]);
        assert_eq!(list("{md,mds}").unwrap(), ["md", "mds"]);
        assert_eq!(list("\"a;b\";c").unwrap(), ["a;b", "c"]);
        let t = tag("kubebuilder:resource:shortName={a,b},categories=x;y,scope=Cluster");
        let pairs = parse_args(&t, &args_of(&t, "kubebuilder:resource").unwrap()).unwrap();
        assert_eq!(list(&pairs[0].1).unwrap(), ["a", "b"]);
        assert_eq!(list(&pairs[1].1).unwrap(), ["x", "y"]);
        assert_eq!(pairs[2].1, "Cluster");
    }
}
