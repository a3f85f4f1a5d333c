//! Field selectors (`k8s.io/apimachinery/pkg/fields`) as the API server parses them: which
//! field labels a resource supports, escaping, and the JSON path each label reads. What a
//! parsed selector matches is the storage layer's ([`crate::storage::predicate`]); label
//! selectors are [`kube_codegen_apimachinery::labels::Selector`].

use crate::semantics::resources::Resource;
use crate::storage::predicate::{FieldSelector, FieldTerm};

impl FieldSelector {
    /// Parses `fieldSelector` and checks each label against what `resource` supports.
    pub(crate) fn parse(input: &str, resource: &Resource) -> Result<Self, String> {
        // `fields.ParseSelector` sorts the terms and parses them all before the resource's
        // label conversion sees any, so the first unsupported label in sorted order is named.
        let mut raws = split_unescaped(input, ',');
        raws.sort();
        let mut parsed = Vec::new();
        for raw in &raws {
            if raw.is_empty() {
                continue;
            }
            let (label, value, negate) = if let Some(i) = find_unescaped(raw, "!=") {
                (&raw[..i], &raw[i + 2..], true)
            } else if let Some(i) = find_unescaped(raw, "==") {
                (&raw[..i], &raw[i + 2..], false)
            } else if let Some(i) = find_unescaped(raw, "=") {
                (&raw[..i], &raw[i + 1..], false)
            } else {
                return Err(format!(
                    "invalid selector: '{input}'; can't understand '{raw}'"
                ));
            };
            parsed.push((label.trim().to_string(), value.to_string(), negate));
        }
        let mut terms = Vec::new();
        for (label, value, negate) in parsed {
            let path = match label.as_str() {
                "metadata.name" => "metadata.name".to_string(),
                "metadata.namespace" if resource.namespaced || !resource.is_custom() => {
                    "metadata.namespace".to_string()
                }
                other => match resource
                    .extra_field_labels()
                    .into_iter()
                    .find(|(l, _)| l == other)
                {
                    Some((_, path)) => path,
                    None => return Err(resource.field_label_error(other)),
                },
            };
            terms.push(FieldTerm {
                label,
                path,
                value: unescape(value.trim()),
                negate,
            });
        }
        Ok(FieldSelector { terms })
    }
}

fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            cur.push('\\');
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out
}

fn find_unescaped(s: &str, pat: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        // Compare bytes: `s[i..]` would panic inside a multi-byte character. An ASCII pattern
        // cannot match a UTF-8 continuation byte, so a match is always a char boundary.
        if bytes[i..].starts_with(pat.as_bytes()) {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn sel(s: &str) -> kube_codegen_apimachinery::labels::Selector {
        match kube_codegen_apimachinery::labels::Selector::parse(s) {
            Ok(s) => s,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn label_operators() {
        let l = labels(&[("app", "web"), ("tier", "front"), ("n", "5")]);
        for (s, want) in [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app=db", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web, db)", true),
            ("app in (db)", false),
            ("app notin (db)", true),
            ("missing notin (db)", true),
            ("app notin (web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("app=web,tier=front", true),
            ("app=web, tier=back", false),
            ("n>4", true),
            ("n<4", false),
            ("missing>1", false),
            ("example.com/key", false),
            ("app=", false),
        ] {
            assert_eq!(sel(s).matches(&l), want, "{s}");
        }
        assert!(sel("app=").matches(&labels(&[("app", "")])));
    }

    #[test]
    fn label_parse_errors() {
        for s in [
            "app in (web",
            "app in web",
            "app=web,",
            "a b",
            "app~web",
            "-bad=x",
            "n>x",
            "app=bad value!",
        ] {
            assert!(
                kube_codegen_apimachinery::labels::Selector::parse(s).is_err(),
                "{s} should not parse"
            );
        }
    }

    fn res(custom: bool, namespaced: bool) -> Resource {
        let mut r = crate::semantics::resources::builtins()
            .into_iter()
            .find(|r| r.kind == "ConfigMap")
            .unwrap_or_else(|| panic!("no ConfigMap"));
        if custom {
            r.builtin = None;
        }
        r.namespaced = namespaced;
        r
    }

    #[test]
    fn field_selectors() {
        let r = res(true, true);
        let obj = json!({"metadata": {"name": "a", "namespace": "n"}});
        let f =
            FieldSelector::parse("metadata.name=a,metadata.namespace!=x", &r).unwrap_or_default();
        assert_eq!(f.terms.len(), 2);
        assert!(f.matches(&obj));
        let f = FieldSelector::parse("metadata.name==b", &r).unwrap_or_default();
        assert!(!f.matches(&obj));
        assert_eq!(
            FieldSelector::parse("spec.x=1", &r),
            Err("field label not supported: spec.x".into())
        );
        assert_eq!(
            FieldSelector::parse("spec.x=1", &res(false, true)),
            Err(
                "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                    .into()
            )
        );
        assert!(FieldSelector::parse("metadata.namespace=x", &res(true, false)).is_err());
        let f = FieldSelector::parse(r"metadata.name=a\,b", &r).unwrap_or_default();
        assert_eq!(f.terms[0].value, "a,b");
    }

    #[test]
    fn field_selector_values_may_hold_any_unicode() {
        let r = res(true, true);
        for (input, value, negate) in [
            ("metadata.name=é", "é", false),
            ("metadata.name!=日本", "日本", true),
            (r"metadata.name=\éa=b", "éa=b", false),
        ] {
            let f = FieldSelector::parse(input, &r).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(f.terms.len(), 1, "{input}");
            assert_eq!(
                (f.terms[0].value.as_str(), f.terms[0].negate),
                (value, negate),
                "{input}"
            );
        }
        assert!(FieldSelector::parse("métadata.name=x", &r).is_err());
    }
}
