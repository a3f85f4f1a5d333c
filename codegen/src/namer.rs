//! Names: gengo's plural rules and the Rust identifiers derived from kinds, groups and versions.
//!
//! One module owns every name so that client, lister, informer, fake and CRD output never
//! disagree about a path or a resource (`docs/generator.md`, "Names").

use std::collections::BTreeMap;

use heck::{ToSnakeCase, ToUpperCamelCase};

/// Plural exceptions, `Kind → plural`, as given by `--plural-exceptions Kind:plural,…`.
///
/// The key is the case-sensitive kind name; the value is re-cased by each use, as gengo does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluralExceptions(BTreeMap<String, String>);

impl PluralExceptions {
    /// Parses `Kind:plural[,Kind:plural…]`. Each pair must have exactly one `:`, and both sides
    /// must be type-like names (an ASCII letter, then letters and digits), as gengo's are: the
    /// plural becomes a method name (`endpoints()`) as well as the REST resource.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut map = BTreeMap::new();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut parts = pair.split(':');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(kind), Some(plural), None) if !kind.is_empty() && !plural.is_empty() => {
                    for (what, name) in [("kind", kind), ("plural", plural)] {
                        if !is_type_name(name) {
                            return Err(format!(
                                "invalid plural exception {pair:?}: the {what} {name:?} must start with an ASCII letter and hold only letters and digits"
                            ));
                        }
                    }
                    map.insert(kind.to_string(), plural.to_string());
                }
                _ => {
                    return Err(format!(
                        "invalid plural exception {pair:?}: expected Kind:plural"
                    ));
                }
            }
        }
        Ok(PluralExceptions(map))
    }

    /// Adds the exceptions of `other`, which win on conflict.
    pub fn extend(&mut self, other: PluralExceptions) {
        self.0.extend(other.0);
    }

    /// The exception for `kind`, if any.
    pub fn get(&self, kind: &str) -> Option<&str> {
        self.0.get(kind).map(String::as_str)
    }
}

/// gengo's plural namer applied to a type name, before re-casing (`Mydemo` → `Mydemos`).
pub fn plural(kind: &str, exceptions: &PluralExceptions) -> String {
    if let Some(p) = exceptions.get(kind) {
        return p.to_string();
    }
    let chars: Vec<char> = kind.chars().collect();
    if chars.len() < 2 {
        return kind.to_string();
    }
    let last = chars[chars.len() - 1];
    let prev = chars[chars.len() - 2];
    let stem: String = chars[..chars.len() - 1].iter().collect();
    const CONSONANTS: &str = "bcdfghjklmnpqrstvwxyz";
    match last {
        's' | 'x' | 'z' => format!("{kind}es"),
        'y' if CONSONANTS.contains(prev) => format!("{stem}ies"),
        'h' if prev == 'c' || prev == 's' => format!("{kind}es"),
        'e' if prev == 'f' => {
            let stem2: String = chars[..chars.len() - 2].iter().collect();
            format!("{stem2}ves")
        }
        'f' => format!("{stem}ves"),
        _ => format!("{kind}s"),
    }
}

/// Upper-cases the first character (gengo's `IC`).
pub fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `snake_case` for a Rust module, function or file name.
pub fn snake(s: &str) -> String {
    s.to_snake_case()
}

/// `UpperCamelCase` for a Rust type name.
pub fn camel(s: &str) -> String {
    s.to_upper_camel_case()
}

/// The Rust module name of a folder (`example3.io` → `example3_io`): every character that cannot
/// be part of an identifier becomes `_`.
pub fn module_of_dir(dir: &str) -> String {
    let mut out: String = dir
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Whether `s` is a valid Rust (and Go) identifier for a group's type-name prefix.
pub fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic())
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `s` is a type-like name: an ASCII letter, then ASCII letters and digits.
fn is_type_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Whether `dir` looks like a Kubernetes API version: `v1`, `v1beta1`, `v2alpha3`.
pub fn is_version(dir: &str) -> bool {
    let Some(rest) = dir.strip_prefix('v') else {
        return false;
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let rest = &rest[digits..];
    if rest.is_empty() {
        return true;
    }
    for stage in ["alpha", "beta"] {
        if let Some(n) = rest.strip_prefix(stage) {
            return !n.is_empty() && !n.starts_with('0') && n.chars().all(|c| c.is_ascii_digit());
        }
    }
    false
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// An identifier token for `name`, escaped as a raw identifier if it is a keyword.
pub fn ident(name: &str) -> proc_macro2::Ident {
    match name {
        "self" | "super" | "crate" | "Self" => quote::format_ident!("{name}_"),
        _ if KEYWORDS.contains(&name) => {
            proc_macro2::Ident::new_raw(name, proc_macro2::Span::call_site())
        }
        _ => quote::format_ident!("{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(kind: &str) -> String {
        plural(kind, &PluralExceptions::default())
    }

    #[test]
    fn gengo_plural_rules() {
        assert_eq!(p("Mydemo"), "Mydemos");
        assert_eq!(p("Bus"), "Buses");
        assert_eq!(p("Box"), "Boxes");
        assert_eq!(p("Fizz"), "Fizzes");
        assert_eq!(p("City"), "Cities");
        assert_eq!(p("Gateway"), "Gateways");
        assert_eq!(p("Ray"), "Rays");
        assert_eq!(p("Search"), "Searches");
        assert_eq!(p("Dispatch"), "Dispatches");
        assert_eq!(p("Earth"), "Earths");
        assert_eq!(p("Life"), "Lives");
        assert_eq!(p("Leaf"), "Leaves");
        assert_eq!(p("Endpoints"), "Endpointses");
        assert_eq!(p("A"), "A");
        assert_eq!(p("NetworkPolicY"), "NetworkPolicYs");
    }

    #[test]
    fn exceptions_win_and_parse_strictly() {
        let ex = PluralExceptions::parse("Endpoints:Endpoints, Data:data").unwrap();
        assert_eq!(plural("Endpoints", &ex), "Endpoints");
        assert_eq!(plural("Data", &ex), "data");
        assert!(PluralExceptions::parse("Endpoints").is_err());
        assert!(PluralExceptions::parse("a:b:c").is_err());
        assert!(PluralExceptions::parse(":b").is_err());
        for bad in [
            "Demo:9lives",
            "Demo:my-demos",
            "Demo:my_demos",
            "De mo:Demos",
            "Demo:",
        ] {
            let e = PluralExceptions::parse(bad).expect_err(bad);
            assert!(e.contains("invalid plural exception"), "{bad}: {e}");
        }
    }

    #[test]
    fn versions_and_identifiers() {
        for v in ["v1", "v1beta1", "v2alpha3", "v10"] {
            assert!(is_version(v), "{v}");
        }
        for v in [
            "v0", "1", "v", "v1gamma1", "v1beta", "v1beta0", "internal", "v01",
        ] {
            assert!(!is_version(v), "{v}");
        }
        assert!(is_identifier("SecondExample"));
        assert!(!is_identifier("Example-group"));
        assert!(!is_identifier("1x"));
        assert_eq!(module_of_dir("example3.io"), "example3_io");
        assert_eq!(module_of_dir(&snake("3d.example")), "_3d_example");
        assert_eq!(module_of_dir(&snake("example3.io")), "example3_io");
        assert_eq!(snake("ClusterTestTypes"), "cluster_test_types");
        assert_eq!(camel("v1beta1"), "V1beta1");
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("self").to_string(), "self_");
    }
}
