//! Object metadata validation (`ValidateObjectMeta`), with the API server's wording.

use serde_json::Value;

use super::error::{FieldError, go_quote};
use super::resources::NameRule;
use super::selector::{is_label_value, is_qualified_name};

fn is_lower_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// RFC 1123 label: at most 63 lower-case alphanumerics or `-`, alphanumeric at both ends.
pub(crate) fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars().next().is_some_and(is_lower_alnum)
        && s.chars().last().is_some_and(is_lower_alnum)
        && s.chars().all(|c| is_lower_alnum(c) || c == '-')
}

/// RFC 1123 subdomain: at most 253 characters, dot-separated labels.
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// RFC 1035 label: like an RFC 1123 label, starting with a letter.
pub(crate) fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL_1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// The errors for a name under a rule (empty when valid).
pub(crate) fn name_errors(field: &str, name: &str, rule: NameRule) -> Vec<FieldError> {
    let ok = match rule {
        NameRule::Subdomain => is_dns1123_subdomain(name),
        NameRule::Label1123 => is_dns1123_label(name),
        NameRule::Label1035 => is_dns1035_label(name),
    };
    if ok {
        return Vec::new();
    }
    let (max, msg) = match rule {
        NameRule::Subdomain => (253, SUBDOMAIN_MSG),
        NameRule::Label1123 => (63, LABEL_MSG),
        NameRule::Label1035 => (63, LABEL_1035_MSG),
    };
    let mut errs = Vec::new();
    if name.len() > max {
        errs.push(FieldError::invalid_str(
            field,
            name,
            format!("must be no more than {max} characters"),
        ));
    }
    errs.push(FieldError::invalid_str(field, name, msg));
    errs
}

/// `ValidateObjectMeta` for a create or update: name (unless `generated`), namespace
/// presence, labels, annotations.
pub(crate) fn object_meta_errors(obj: &Value, rule: NameRule, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = super::object::name(obj);
    let generate_name = super::object::meta_str(obj, "generateName");
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        errs.extend(name_errors("metadata.name", name, rule));
    }
    let ns = super::object::namespace(obj);
    if namespaced && ns.is_empty() {
        errs.push(FieldError::required("metadata.namespace", ""));
    } else if !namespaced && !ns.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if let Some(meta) = super::object::meta(obj) {
        if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
            for (k, v) in labels {
                if !is_qualified_name(k) {
                    errs.push(FieldError::invalid_str(
                        "metadata.labels",
                        k,
                        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                    ));
                }
                match v.as_str() {
                    Some(s) if is_label_value(s) => {}
                    Some(s) => errs.push(FieldError::invalid_str(
                        "metadata.labels",
                        s,
                        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                    )),
                    None => errs.push(FieldError::invalid(
                        "metadata.labels",
                        v.to_string(),
                        "label values must be strings",
                    )),
                }
            }
        }
        if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
            let mut total = 0usize;
            for (k, v) in annotations {
                total += k.len() + v.as_str().map_or(0, str::len);
                if !is_qualified_name(&k.to_lowercase()) {
                    errs.push(FieldError::invalid_str(
                        "metadata.annotations",
                        k,
                        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                    ));
                }
            }
            if total > 256 * 1024 {
                errs.push(FieldError::too_long("metadata.annotations", 256 * 1024));
            }
        }
        if let Some(finalizers) = meta.get("finalizers").and_then(Value::as_array) {
            for (i, f) in finalizers.iter().enumerate() {
                match f.as_str() {
                    Some(s) if is_qualified_name(s) => {}
                    Some(s) => errs.push(FieldError::invalid_str(
                        format!("metadata.finalizers[{i}]"),
                        s,
                        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                    )),
                    None => errs.push(FieldError::invalid(
                        format!("metadata.finalizers[{i}]"),
                        f.to_string(),
                        "must be a string",
                    )),
                }
            }
        }
    }
    errs
}

/// `ValidateObjectMetaUpdate`: immutable fields.
pub(crate) fn object_meta_update_errors(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["name", "namespace", "uid", "creationTimestamp"] {
        let a = super::object::meta_str(new, field);
        let b = super::object::meta_str(old, field);
        if a != b {
            errs.push(FieldError::invalid_str(
                format!("metadata.{field}"),
                a,
                "field is immutable",
            ));
        }
    }
    errs
}

/// Renders any JSON value as Go's `%#v` roughly would in an error.
pub(crate) fn render(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dns_names() {
        assert!(is_dns1123_subdomain("a.b-c.d"));
        assert!(!is_dns1123_subdomain("A"));
        assert!(!is_dns1123_subdomain("a..b"));
        assert!(!is_dns1123_subdomain("-a"));
        assert!(is_dns1123_label("abc-1"));
        assert!(!is_dns1123_label("a.b"));
        assert!(is_dns1035_label("a1"));
        assert!(!is_dns1035_label("1a"));
    }

    #[test]
    fn meta_errors() {
        let errs = object_meta_errors(
            &json!({"metadata": {"namespace": "n"}}),
            NameRule::Subdomain,
            true,
        );
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec!["metadata.name: Required value: name or generateName is required"]
        );
        let errs = object_meta_errors(
            &json!({"metadata": {"name": "Bad", "namespace": "n", "labels": {"a": "b c"}}}),
            NameRule::Subdomain,
            true,
        );
        assert_eq!(errs.len(), 2);
        assert!(
            errs[0].to_string().starts_with(
                "metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain"
            )
        );
    }
}
