//! A small, deterministic YAML emitter over [`serde_json::Value`].
//!
//! Why not a YAML crate: `serde_yaml` is unmaintained, and the generator needs exactly one thing
//! — block-style YAML of a JSON value, byte-identical on every machine and build. The writer
//! here sorts object keys itself, so the output does not depend on whether some other crate
//! in the build enabled `serde_json`'s `preserve_order` feature.
//!
//! The YAML is the subset every YAML 1.1 and 1.2 parser reads the same way: block mappings and
//! sequences (sequences of a mapping key are not indented, as `kubectl` and controller-gen write
//! them), `{}`/`[]` for empty collections, plain scalars only where they cannot be mistaken for
//! anything else (numbers, booleans, null, YAML 1.1's `yes`/`no`/`on`/`off`, indicators …), `|-`
//! literal blocks for multi-line text, and double-quoted JSON-style strings otherwise.

use serde_json::Value;

/// Renders `value` as a YAML document (no `---`), ending with a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_mapping(&mut out, value, 0),
        Value::Array(a) if !a.is_empty() => write_sequence(&mut out, value, 0),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn json_string(s: &str) -> String {
    // Serializing a `&str` to JSON cannot fail; the fallback is never taken.
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn sorted(m: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Whether a value is written on the line of its key (scalars and empty collections).
fn is_inline(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

/// A block mapping at column `col`; the first key is written where the cursor is.
fn write_mapping(out: &mut String, value: &Value, col: usize) {
    let Value::Object(m) = value else { return };
    for (i, (k, v)) in sorted(m).into_iter().enumerate() {
        if i > 0 {
            indent(out, col);
        }
        out.push_str(&key(k));
        out.push(':');
        match v {
            Value::Object(_) if !is_inline(v) => {
                out.push('\n');
                indent(out, col + 2);
                write_mapping(out, v, col + 2);
            }
            Value::Array(_) if !is_inline(v) => {
                out.push('\n');
                indent(out, col);
                write_sequence(out, v, col);
            }
            Value::String(s) if is_block_text(s) => write_block(out, s, col + 2),
            _ => {
                out.push(' ');
                out.push_str(&scalar(v));
                out.push('\n');
            }
        }
    }
}

/// A block sequence at column `col`; the first `- ` is written where the cursor is.
fn write_sequence(out: &mut String, value: &Value, col: usize) {
    let Value::Array(a) = value else { return };
    for (i, v) in a.iter().enumerate() {
        if i > 0 {
            indent(out, col);
        }
        out.push_str("- ");
        match v {
            Value::Object(_) if !is_inline(v) => write_mapping(out, v, col + 2),
            Value::Array(_) if !is_inline(v) => write_sequence(out, v, col + 2),
            Value::String(s) if is_block_text(s) => {
                // `- |-` then the text indented under the dash.
                out.pop();
                write_block(out, s, col + 2);
            }
            _ => {
                out.push_str(&scalar(v));
                out.push('\n');
            }
        }
    }
}

/// Multi-line text that a `|-` literal block carries exactly.
fn is_block_text(s: &str) -> bool {
    s.contains('\n')
        && !s.ends_with('\n')
        && !s.starts_with([' ', '\n'])
        && s.lines().all(|l| l == l.trim_end())
        && s.chars()
            .all(|c| c == '\n' || !(c.is_control() || is_special_space(c)))
}

fn write_block(out: &mut String, s: &str, col: usize) {
    out.push_str(" |-\n");
    for line in s.split('\n') {
        if !line.is_empty() {
            indent(out, col);
            out.push_str(line);
        }
        out.push('\n');
    }
}

fn key(k: &str) -> String {
    if is_plain_safe(k) {
        k.to_string()
    } else {
        quoted(k)
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            if is_plain_safe(s) {
                s.clone()
            } else {
                quoted(s)
            }
        }
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// JSON's string syntax is a valid YAML double-quoted scalar. Characters that YAML 1.1 parsers
/// treat as line breaks or byte-order marks are escaped too (JSON leaves them raw).
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in json_string(s).chars() {
        match c {
            '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

fn is_special_space(c: char) -> bool {
    matches!(
        c,
        '\u{85}' | '\u{a0}' | '\u{2028}' | '\u{2029}' | '\u{feff}'
    )
}

/// Words YAML 1.1 or 1.2 resolve to something other than a string.
const RESERVED: &[&str] = &[
    "null", "~", "true", "false", "yes", "no", "on", "off", "y", "n",
];

/// Whether `s` can be written as a plain scalar and read back as the same string by any YAML
/// parser. Deliberately conservative: anything doubtful is quoted. Flow indicators (`[]{},`) are
/// fine inside a plain scalar in block context, which keeps JSONPaths and regular expressions
/// such as `.status.conditions[?(@.type=="Ready")].status` readable.
fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    !RESERVED.contains(&s.to_ascii_lowercase().as_str())
        && !matches!(s, "<<" | "=")
        && !first.is_ascii_digit()
        && !looks_numeric(s)
        && s == s.trim()
        && !"-?:,[]{}#&*!|>'\"%@`".contains(first)
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && s.chars().all(|c| {
            c == ' '
                || c.is_ascii_graphic()
                || (!c.is_ascii() && !c.is_control() && !is_special_space(c))
        })
}

/// Numbers in YAML 1.1 or 1.2 spelling: `1`, `-1.5`, `1e3`, `0x1f`, `0o17`, `.5`, `.inf`,
/// `1_000`, `12:30` (sexagesimal) …
fn looks_numeric(s: &str) -> bool {
    let t = s.trim_start_matches(['+', '-']);
    if t.is_empty() {
        return false;
    }
    let lower = t.to_ascii_lowercase();
    if matches!(lower.as_str(), ".inf" | ".nan") {
        return true;
    }
    let first = lower.chars().next().unwrap_or(' ');
    (first.is_ascii_digit() || first == '.')
        && lower.chars().all(|c| {
            c.is_ascii_hexdigit() || matches!(c, '.' | '_' | ':' | 'x' | 'o' | '+' | '-' | 'e')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_style_with_sorted_keys_and_unindented_sequences() {
        let v = json!({
            "spec": {"versions": [{"name": "v1", "served": true, "subresources": {"status": {}}}], "group": "a.example.com"},
            "apiVersion": "apiextensions.k8s.io/v1",
            "list": [],
        });
        assert_eq!(
            to_yaml(&v),
            "\
apiVersion: apiextensions.k8s.io/v1
list: []
spec:
  group: a.example.com
  versions:
  - name: v1
    served: true
    subresources:
      status: {}
"
        );
    }

    #[test]
    fn quotes_what_a_parser_would_read_otherwise() {
        for s in [
            "",
            "true",
            "No",
            "on",
            "~",
            "null",
            "1",
            "-1.5",
            "1e3",
            "0x1F",
            "12:30",
            ".5",
            " lead",
            "trail ",
            "a: b",
            "a #b",
            "- x",
            "#x",
            "*x",
            "&x",
            "!x",
            "{x}",
            "[x]",
            "'x",
            "\"x",
            "@x",
            "`x",
            "%x",
            "x:",
            "tab\there",
            "line\r",
            "[a,b]",
            "1.2.3",
            "<<",
        ] {
            let y = scalar(&json!(s));
            assert!(y.starts_with('"'), "{s:?} must be quoted, got {y}");
            assert_eq!(serde_json::from_str::<String>(&y).unwrap(), s);
        }
        for s in [
            "Mydemo",
            "crddemo.k8s.io",
            "unapproved",
            ".spec.ip",
            ".status.conditions[?(@.type==\"Ready\")].status",
            "^[a-z]+$",
            "date-time",
            "The port, 1–65535.",
        ] {
            assert_eq!(scalar(&json!(s)), s, "{s:?} may stay plain");
        }
        assert_eq!(scalar(&json!("a\u{85}b\u{2028}")), "\"a\\u0085b\\u2028\"");
        assert_eq!(scalar(&json!(1)), "1");
        assert_eq!(scalar(&json!(1.5)), "1.5");
        assert_eq!(scalar(&json!(false)), "false");
    }

    #[test]
    fn multi_line_text_as_literal_blocks() {
        let v = json!({"description": "First line.\n\nThird: line.", "items": ["a\nb"]});
        assert_eq!(
            to_yaml(&v),
            "description: |-\n  First line.\n\n  Third: line.\nitems:\n- |-\n  a\n  b\n"
        );
        // Trailing newlines and trailing spaces are kept exactly by quoting instead.
        assert_eq!(to_yaml(&json!({"d": "a\n"})), "d: \"a\\n\"\n");
        assert_eq!(to_yaml(&json!({"d": "a \nb"})), "d: \"a \\nb\"\n");
    }

    #[test]
    fn nested_sequences() {
        let v = json!({"a": [[1, 2], {"z": 1, "b": [true]}]});
        assert_eq!(to_yaml(&v), "a:\n- - 1\n  - 2\n- b:\n  - true\n  z: 1\n");
    }

    /// Numbers compare by value (a YAML reader may read `1e300` as a float either way).
    fn same_json(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
            }
            _ => a == b,
        }
    }

    /// Every string a YAML parser could misread, written and read back by a real YAML parser.
    #[test]
    fn the_yaml_emitter_round_trips_through_a_yaml_parser() {
        let strings = [
            "",
            "true",
            "False",
            "yes",
            "No",
            "on",
            "OFF",
            "y",
            "n",
            "~",
            "null",
            "Null",
            "1",
            "-1",
            "0x1F",
            "0o17",
            "1e3",
            "1_000",
            ".5",
            ".inf",
            "-.Inf",
            ".NaN",
            "12:30",
            "2001-12-14",
            "1.2.3",
            " lead",
            "trail ",
            "a: b",
            "a #b",
            "a#b",
            "- x",
            "-x",
            "? x",
            ": x",
            "#x",
            "*x",
            "&x",
            "!x",
            "|x",
            ">x",
            "%x",
            "@x",
            "`x",
            "'x",
            "\"x",
            "{x}",
            "[x]",
            "x:",
            "<<",
            "=",
            "tab\there",
            "cr\rhere",
            "multi\nline",
            "multi\n\nline\n",
            "  indented\nblock",
            "ünï",
            "a, b",
            ".status.conditions[?(@.type==\"Ready\")].status",
            "^[a-z]+$",
            "back\\slash",
            "unapproved, experimental-only",
            "https://example.com/x#y",
            "\u{85}nel",
            "\u{feff}bom",
        ];
        for s in strings {
            let value = json!({ "k": s, "list": [s, { "nested": s }], s: 1 });
            let yaml = to_yaml(&value);
            let back: Value = serde_saphyr::from_str(&yaml)
                .unwrap_or_else(|e| panic!("{s:?} gave unparsable YAML {yaml:?}: {e}"));
            assert_eq!(back, value, "{s:?} via {yaml:?}");
        }
        let numbers = json!({"i": -42, "u": 18446744073709551615u64, "f": 0.25, "big": 1e300, "b": true, "n": null, "e": {}, "a": []});
        let back: Value = serde_saphyr::from_str(&to_yaml(&numbers)).unwrap();
        assert!(same_json(&back, &numbers), "{back}");
    }
}
