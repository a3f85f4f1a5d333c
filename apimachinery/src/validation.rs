//! Name and label validation, with kube-apiserver's wording (`k8s.io/apimachinery/pkg/util/
//! validation` for object names, `pkg/api/validate/content` for label keys and values).
//!
//! Each check returns the list of problems, empty when the value is valid, exactly as the Go
//! functions do, so a caller can put the messages into a `Status` cause unchanged:
//!
//! ```
//! use kube_codegen_apimachinery::validation::{is_dns1123_subdomain, is_label_value};
//!
//! assert!(is_dns1123_subdomain("example.com").is_empty());
//! assert_eq!(
//!     is_dns1123_subdomain("Example.com"),
//!     ["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
//!       or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex \
//!       used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]
//! );
//! assert!(is_label_value("").is_empty());
//! assert_eq!(is_label_value(&"v".repeat(64))[0], "must be no more than 63 bytes");
//! ```

/// The longest RFC 1123 or RFC 1035 label.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// The longest RFC 1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// The longest name part of a label key, and the longest label value.
pub const LABEL_MAX_LENGTH: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case \
     alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
     alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric \
     characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must \
     start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric \
     characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Go's `RegexError`: the message, the examples and the regular expression the value failed.
///
/// ```
/// use kube_codegen_apimachinery::validation::regex_error;
/// assert_eq!(regex_error("bad", "[a-z]+", &["abc"]), "bad (e.g. 'abc', regex used for validation is '[a-z]+')");
/// ```
pub fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{regex}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(regex);
    out.push_str("')");
    out
}

/// Go's `MaxLenError` of `util/validation`, used for object names.
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// `content.MaxLenError`, used for label keys and values.
fn max_bytes_error(length: usize) -> String {
    format!("must be no more than {length} bytes")
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, ignoring length.
fn label_shape(s: &[u8]) -> bool {
    s.first().copied().is_some_and(lower_alnum)
        && s.last().copied().is_some_and(lower_alnum)
        && s.iter().all(|&c| lower_alnum(c) || c == b'-')
}

fn subdomain_shape(s: &str) -> bool {
    s.split('.').all(|l| label_shape(l.as_bytes()))
}

fn label_key_name_shape(s: &[u8]) -> bool {
    s.first().is_some_and(u8::is_ascii_alphanumeric)
        && s.last().is_some_and(u8::is_ascii_alphanumeric)
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// An RFC 1123 label (`IsDNS1123Label`): what most resource names that become host names are.
///
/// ```
/// use kube_codegen_apimachinery::validation::is_dns1123_label;
/// assert!(is_dns1123_label("my-name").is_empty());
/// assert_eq!(is_dns1123_label("a.b"), ["must not contain dots"]);
/// ```
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !label_shape(value.as_bytes()) {
        if subdomain_shape(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// A name that is one segment of a URL path (`IsValidPathSegmentName`, the RBAC kinds' rule):
/// neither `.` nor `..`, and no `/` or `%`. With `prefix` (a `generateName`), only the
/// characters are checked (`IsValidPathSegmentPrefix`).
///
/// ```
/// use kube_codegen_apimachinery::validation::is_path_segment_name;
/// assert!(is_path_segment_name("system:controller:job-controller", false).is_empty());
/// assert_eq!(is_path_segment_name("..", false), ["may not be '..'"]);
/// assert_eq!(is_path_segment_name("a/b%c", false), ["may not contain '/'", "may not contain '%'"]);
/// ```
pub fn is_path_segment_name(value: &str, prefix: bool) -> Vec<String> {
    if !prefix && let Some(bad) = [".", ".."].into_iter().find(|b| *b == value) {
        return vec![format!("may not be '{bad}'")];
    }
    ["/", "%"]
        .into_iter()
        .filter(|c| value.contains(c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// A ConfigMap key (`IsConfigMapKey`): at most 253 bytes of letters, digits, `-`, `_` and
/// `.`, and neither `.`, `..` nor anything starting with `..`.
///
/// ```
/// use kube_codegen_apimachinery::validation::is_config_map_key;
/// assert!(is_config_map_key("lease-host_0f3c.v1").is_empty());
/// assert_eq!(is_config_map_key(".."), ["must not be '..'"]);
/// ```
pub fn is_config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let shape = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if !shape {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if value == "." {
        errs.push("must not be '.'".to_string());
    } else if value == ".." {
        errs.push("must not be '..'".to_string());
    } else if value.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    errs
}

/// An RFC 1123 subdomain (`IsDNS1123Subdomain`): the rule for most object names.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !subdomain_shape(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// A wildcard subdomain (`IsWildcardDNS1123Subdomain`): `*.` then an RFC 1123 subdomain, as an
/// Ingress rule's or TLS entry's host may be.
///
/// ```
/// use kube_codegen_apimachinery::validation::is_wildcard_dns1123_subdomain;
/// assert!(is_wildcard_dns1123_subdomain("*.example.com").is_empty());
/// assert_eq!(is_wildcard_dns1123_subdomain("a.*.example.com").len(), 1);
/// ```
pub fn is_wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !value.strip_prefix("*.").is_some_and(subdomain_shape) {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS \
             subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and \
             end with an alphanumeric character",
            &format!("\\*\\.{DNS1123_SUBDOMAIN_FMT}"),
            &["*.example.com"],
        ));
    }
    errs
}

/// A port number (`IsValidPortNum`): 1 to 65535.
///
/// ```
/// use kube_codegen_apimachinery::validation::is_valid_port_num;
/// assert!(is_valid_port_num(443).is_empty());
/// assert_eq!(is_valid_port_num(0), ["must be between 1 and 65535, inclusive"]);
/// ```
pub fn is_valid_port_num(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_string()]
    }
}

/// A port name (`IsValidPortName`, an IANA service name): at most 15 lower-case letters,
/// digits and single inner hyphens, with at least one letter.
///
/// ```
/// use kube_codegen_apimachinery::validation::is_valid_port_name;
/// assert!(is_valid_port_name("http-alt").is_empty());
/// assert_eq!(is_valid_port_name("80"), ["must contain at least one letter (a-z)"]);
/// ```
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    let b = port.as_bytes();
    if b.is_empty()
        || !b
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !b.iter().any(u8::is_ascii_lowercase) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if b.first() == Some(&b'-') || b.last() == Some(&b'-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

/// An RFC 1035 label (`IsDNS1035Label`): a label that starts with a letter (Service names).
///
/// ```
/// use kube_codegen_apimachinery::validation::is_dns1035_label;
/// assert!(is_dns1035_label("web-1").is_empty());
/// assert_eq!(is_dns1035_label("1web").len(), 1);
/// ```
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    let b = value.as_bytes();
    if !(label_shape(b) && b[0].is_ascii_lowercase()) {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Which rule a resource's object names follow (Go's `ValidateNameFunc`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: most resources, and every custom resource.
    #[default]
    Subdomain,
    /// `NameIsDNSLabel`: namespaces and a few others.
    Label1123,
    /// `NameIsDNS1035Label`: services.
    Label1035,
    /// `IsConfigMapKey`: LeaseCandidates (`ValidLeaseCandidateName`), whose names join a
    /// Lease's name and an identity such as `<hostname>_<uuid>`.
    ConfigMapKey,
    /// `ValidatePathSegmentName`: the RBAC kinds (`system:controller:job-controller` is a
    /// valid ClusterRole name), see [`is_path_segment_name`].
    PathSegment,
}

impl NameRule {
    /// Checks `name` under this rule; with `prefix`, `name` is a `generateName` prefix and a
    /// trailing `-` is allowed (Go's `maskTrailingDash`, which replaces the last two bytes by
    /// `a`, quirk included).
    ///
    /// ```
    /// use kube_codegen_apimachinery::validation::NameRule;
    /// assert!(NameRule::Subdomain.check("web-", true).is_empty());
    /// assert!(!NameRule::Subdomain.check("web-", false).is_empty());
    /// ```
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        if self == NameRule::PathSegment {
            return is_path_segment_name(name, prefix);
        }
        let masked;
        let name = if prefix && name.len() > 1 && name.ends_with('-') {
            let head = &name.as_bytes()[..name.len() - 2];
            masked = format!("{}a", String::from_utf8_lossy(head));
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Subdomain => is_dns1123_subdomain(name),
            NameRule::Label1123 => is_dns1123_label(name),
            NameRule::Label1035 => is_dns1035_label(name),
            NameRule::ConfigMapKey => is_config_map_key(name),
            NameRule::PathSegment => is_path_segment_name(name, prefix),
        }
    }
}

/// A label key or other qualified name (`IsQualifiedName` / `content.IsLabelKey`): an optional
/// DNS-subdomain prefix and `/`, then a name of at most 63 bytes.
///
/// ```
/// use kube_codegen_apimachinery::validation::is_qualified_name;
/// assert!(is_qualified_name("app.kubernetes.io/name").is_empty());
/// assert_eq!(is_qualified_name("/a"), ["prefix part must be non-empty"]);
/// ```
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                // `content.IsDNS1123Subdomain` counts bytes.
                if prefix.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
                    errs.push(format!(
                        "prefix part {}",
                        max_bytes_error(DNS1123_SUBDOMAIN_MAX_LENGTH)
                    ));
                }
                if !subdomain_shape(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_MSG,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. \
                 'example.com/MyName')",
                regex_error(
                    LABEL_KEY_MSG,
                    LABEL_KEY_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > LABEL_MAX_LENGTH {
        errs.push(format!("name part {}", max_bytes_error(LABEL_MAX_LENGTH)));
    }
    if !label_key_name_shape(name.as_bytes()) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// A label value (`IsValidLabelValue`): empty, or at most 63 bytes shaped like a label name.
pub fn is_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_MAX_LENGTH {
        errs.push(max_bytes_error(LABEL_MAX_LENGTH));
    }
    if !value.is_empty() && !label_key_name_shape(value.as_bytes()) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_follow_go() {
        assert!(is_dns1123_subdomain("a.b-c.d").is_empty());
        for bad in ["A", "a..b", "-a", "a-", "", "a_b"] {
            assert_eq!(is_dns1123_subdomain(bad).len(), 1, "{bad}");
        }
        let long = format!("{}.com", "a".repeat(250));
        assert_eq!(
            is_dns1123_subdomain(&long),
            ["must be no more than 253 characters"]
        );
        assert!(is_dns1123_label("abc-1").is_empty());
        assert_eq!(
            is_dns1123_label(""),
            [regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"]
            )]
        );
        assert!(is_dns1035_label("a1").is_empty());
        assert_eq!(is_dns1035_label("").len(), 1);
        assert_eq!(
            is_dns1035_label(&"a".repeat(64)),
            ["must be no more than 63 characters"]
        );
    }

    #[test]
    fn qualified_names_follow_go() {
        assert!(is_qualified_name("a").is_empty());
        assert!(is_qualified_name("example.com/My_Name.1").is_empty());
        assert_eq!(is_qualified_name("").len(), 2, "empty, and not the shape");
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert!(is_qualified_name("a/b/c")[0].starts_with("a valid label key must consist"));
        assert!(is_qualified_name("Bad_/x")[0].starts_with("prefix part a lowercase RFC 1123"));
        assert_eq!(
            is_qualified_name(&"n".repeat(64)),
            ["name part must be no more than 63 bytes"]
        );
        assert_eq!(is_qualified_name("a/").len(), 2);
    }

    #[test]
    fn label_values_follow_go() {
        assert!(is_label_value("").is_empty());
        assert!(is_label_value("My_value-1.2").is_empty());
        assert_eq!(is_label_value("-a").len(), 1);
        assert_eq!(is_label_value(&format!("-{}", "a".repeat(63))).len(), 2);
    }

    #[test]
    fn generate_name_prefixes_may_end_with_a_dash() {
        assert!(NameRule::Label1035.check("svc-", true).is_empty());
        assert!(!NameRule::Label1035.check("-", true).is_empty());
        assert!(!NameRule::Label1123.check("a.b-", true).is_empty());
    }
}
