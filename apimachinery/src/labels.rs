//! Kubernetes label selectors: the parser and matcher of `k8s.io/apimachinery/pkg/labels`.
//!
//! The grammar is the one `kubectl -l` and `?labelSelector=` accept: comma-separated
//! requirements, each one of `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
//! `key notin (a,b)`, `key` (exists), `!key` (does not exist), and the integer comparisons
//! `key>1` / `key<1`. Keys are qualified names (an optional DNS-subdomain prefix and `/`, then a
//! name of at most 63 characters); values are at most 63 characters. A parsed selector prints
//! back in canonical form (requirements sorted by key, `in` values sorted), exactly as Go's
//! `Selector.String()` does, so it can be sent to the API server as a `labelSelector`.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kube_codegen_apimachinery::labels::Selector;
//!
//! let sel: Selector = "tier in (frontend, web), env!=prod,!legacy".parse()?;
//! let labels = BTreeMap::from([("tier".to_string(), "web".to_string())]);
//! assert!(sel.matches(&labels));
//! assert_eq!(sel.to_string(), "env!=prod,!legacy,tier in (frontend,web)");
//!
//! // Errors say what Go's parser says, word for word (kube-apiserver answers with them).
//! let err = Selector::parse("a in (b").unwrap_err();
//! assert_eq!(err.to_string(), "unable to parse requirement: found '', expected: ',' or ')'");
//! # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

#[cfg(feature = "kube")]
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::validation;

/// The longest label name or value Kubernetes accepts.
///
/// ```
/// use kube_codegen_apimachinery::labels::{MAX_LABEL_LENGTH, Selector};
/// assert!(Selector::parse(&format!("a={}", "v".repeat(MAX_LABEL_LENGTH))).is_ok());
/// assert!(Selector::parse(&format!("a={}", "v".repeat(MAX_LABEL_LENGTH + 1))).is_err());
/// ```
pub const MAX_LABEL_LENGTH: usize = validation::LABEL_MAX_LENGTH;
/// The longest key prefix (a DNS-1123 subdomain) Kubernetes accepts.
///
/// ```
/// use kube_codegen_apimachinery::labels::{MAX_PREFIX_LENGTH, Selector};
/// let prefix = format!("{}.com", "a".repeat(MAX_PREFIX_LENGTH));
/// assert!(Selector::parse(&format!("{prefix}/name")).is_err());
/// ```
pub const MAX_PREFIX_LENGTH: usize = validation::DNS1123_SUBDOMAIN_MAX_LENGTH;

/// Why a selector, requirement, key or value is not valid. Each displays as
/// `k8s.io/apimachinery`'s `labels` package words it (`labels.Parse`, `NewRequirement`,
/// `LabelSelectorAsSelector`), which is what kube-apiserver answers a bad `labelSelector` with.
///
/// ```
/// use kube_codegen_apimachinery::labels::{Selector, SelectorError};
/// match Selector::parse("a in (b") {
///     Err(SelectorError::Syntax { position, .. }) => assert_eq!(position, 7),
///     other => panic!("{other:?}"),
/// }
/// let err = Selector::parse("a>b").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The text does not follow the selector grammar.
    #[error("{}", syntax_message(*in_requirement, found, expected))]
    Syntax {
        /// Byte offset in the input where the unexpected token starts.
        position: usize,
        /// The token found there, as written (empty at the end of the input).
        found: String,
        /// What the grammar allows at that point, in Go's words.
        expected: &'static str,
        /// Whether the error is inside one requirement (Go then says `unable to parse
        /// requirement: ` first) rather than between requirements.
        in_requirement: bool,
    },
    /// A requirement whose key, operator or values are not valid.
    #[error("{}", invalid_message(*parsing, issues))]
    Invalid {
        /// What is wrong, as Go's field errors, in Go's order.
        issues: Vec<Issue>,
        /// Whether the requirement was read from a selector's text (Go then says `unable to
        /// parse requirement: ` first) rather than built.
        parsing: bool,
    },
    /// A `LabelSelector` match expression with an operator other than In, NotIn, Exists and
    /// DoesNotExist.
    #[error("{operator:?} is not a valid label selector operator")]
    UnknownOperator {
        /// The operator as written in the `LabelSelector`.
        operator: String,
    },
}

/// One thing wrong with a requirement: Go's `field.Invalid` error.
///
/// ```
/// use kube_codegen_apimachinery::labels::{Operator, Requirement, SelectorError};
/// let Err(SelectorError::Invalid { issues, .. }) = Requirement::new("a", Operator::In, ["b_"]) else {
///     panic!("b_ is no label value");
/// };
/// assert_eq!(issues[0].field, "values[0][a]");
/// assert!(issues[0].to_string().starts_with("values[0][a]: Invalid value: \"b_\": a valid label must"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The field: `key`, `values`, `values[i]`, `values[i][key]`, or `<nil>` for the key of a
    /// requirement read from text.
    pub field: String,
    /// The value as Go prints it: a quoted string, or a list as `[]string{"a", "b"}`.
    pub value: String,
    /// Why it is not valid.
    pub detail: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: Invalid value: {}: {}",
            self.field, self.value, self.detail
        )
    }
}

const IN_REQUIREMENT: &str = "unable to parse requirement: ";

fn syntax_message(in_requirement: bool, found: &str, expected: &str) -> String {
    let prefix = if in_requirement { IN_REQUIREMENT } else { "" };
    // Go's parser writes this one without the comma.
    let sep = if expected == "'('" { "" } else { "," };
    format!("{prefix}found '{found}'{sep} expected: {expected}")
}

/// Go's aggregate of field errors: one alone, several in brackets (repeats once).
fn invalid_message(parsing: bool, issues: &[Issue]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for i in issues {
        let m = i.to_string();
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    let body = if seen.len() == 1 {
        seen.remove(0)
    } else {
        format!("[{}]", seen.join(", "))
    };
    if parsing {
        format!("{IN_REQUIREMENT}{body}")
    } else {
        body
    }
}

/// A string as Go's `%q` prints it (for the characters label keys and values hold: printable
/// text is kept, quotes, backslashes and control characters are escaped).
fn go_quote(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str(r#"\""#),
            '\\' => out.push_str(r"\\"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            c if c.is_control() => out.push_str(&format!(r"\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A list of strings as Go's `%#v` prints a `[]string`.
fn go_string_list(values: &[String]) -> String {
    if values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let items: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// How a [`Requirement`] compares a label with its values.
///
/// ```
/// use kube_codegen_apimachinery::labels::{Operator, Selector};
/// let sel = Selector::parse("env notin (prod)")?;
/// assert_eq!(sel.requirements()[0].operator(), Operator::NotIn);
/// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `key=value`: the label exists and equals the value.
    Equals,
    /// `key==value`: same as [`Operator::Equals`].
    DoubleEquals,
    /// `key!=value`: the label is absent or differs from the value.
    NotEquals,
    /// `key in (a,b)`: the label exists and is one of the values.
    In,
    /// `key notin (a,b)`: the label is absent or none of the values.
    NotIn,
    /// `key`: the label exists.
    Exists,
    /// `!key`: the label is absent.
    DoesNotExist,
    /// `key>n`: the label is an integer greater than `n`.
    GreaterThan,
    /// `key<n`: the label is an integer less than `n`.
    LessThan,
}

impl Operator {
    /// The operator as it is written in a selector string (`=`, ` in `, …).
    ///
    /// ```
    /// use kube_codegen_apimachinery::labels::Operator;
    /// assert_eq!(Operator::NotIn.as_str(), "notin");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One clause of a [`Selector`]: a key, an operator and (for most operators) values.
///
/// ```
/// use kube_codegen_apimachinery::labels::{Operator, Requirement};
/// let r = Requirement::new("app.kubernetes.io/name", Operator::In, ["web", "api"])?;
/// assert_eq!(r.to_string(), "app.kubernetes.io/name in (api,web)");
/// assert!(Requirement::new("app", Operator::Equals, ["a", "b"]).is_err());
/// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    /// Sorted and de-duplicated.
    values: Vec<String>,
}

impl Requirement {
    /// A validated requirement. `In`/`NotIn` need at least one value; `Equals`, `DoubleEquals`,
    /// `NotEquals`, `GreaterThan` and `LessThan` exactly one (an integer for the last two);
    /// `Exists`/`DoesNotExist` none.
    ///
    /// ```
    /// use kube_codegen_apimachinery::labels::{Operator, Requirement};
    /// let r = Requirement::new("env", Operator::Exists, Vec::<String>::new())?;
    /// assert_eq!(r.to_string(), "env");
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn new<I, S>(
        key: impl Into<String>,
        operator: Operator,
        values: I,
    ) -> Result<Self, SelectorError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let key = key.into();
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Requirement::checked(key, operator, values, false)
    }

    /// Go's `NewRequirement`: every check, each failure an [`Issue`] (`parsing`: read from a
    /// selector's text).
    fn checked(
        key: String,
        operator: Operator,
        mut values: Vec<String>,
        parsing: bool,
    ) -> Result<Self, SelectorError> {
        let mut issues = Vec::new();
        let errs = validation::is_qualified_name(&key);
        if !errs.is_empty() {
            issues.push(Issue {
                field: "key".into(),
                value: go_quote(&key),
                detail: errs.join("; "),
            });
        }
        let all = |detail: &str| Issue {
            field: "values".into(),
            value: go_string_list(&values),
            detail: detail.into(),
        };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                issues.push(all(
                    "for 'in', 'notin' operators, values set can't be empty",
                ));
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                issues.push(all("exact-match compatibility requires one single value"));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                issues.push(all(
                    "values set must be empty for exists and does not exist",
                ));
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    issues.push(all(
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        issues.push(Issue {
                            field: format!("values[{i}]"),
                            value: go_quote(v),
                            detail: "for 'Gt', 'Lt' operators, the value must be an integer".into(),
                        });
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let errs = validation::is_label_value(v);
            if !errs.is_empty() {
                issues.push(Issue {
                    field: format!("values[{i}][{key}]"),
                    value: go_quote(v),
                    detail: errs.join("; "),
                });
            }
        }
        if !issues.is_empty() {
            return Err(SelectorError::Invalid { issues, parsing });
        }
        values.sort();
        values.dedup();
        Ok(Requirement {
            key,
            operator,
            values,
        })
    }

    /// The label key.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// let sel = Selector::parse("a=b")?;
    /// assert_eq!(sel.requirements()[0].key(), "a");
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::{Operator, Selector};
    /// let sel = Selector::parse("a!=b")?;
    /// assert_eq!(sel.requirements()[0].operator(), Operator::NotEquals);
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted and without duplicates.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// let sel = Selector::parse("a in (c,b,c)")?;
    /// assert_eq!(sel.requirements()[0].values(), ["b", "c"]);
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn values(&self) -> &[String] {
        &self.values
    }

    fn has_value(&self, v: &str) -> bool {
        self.values.binary_search_by(|x| x.as_str().cmp(v)).is_ok()
    }

    /// Whether `labels` satisfy this requirement.
    ///
    /// ```
    /// # use std::collections::BTreeMap;
    /// # use kube_codegen_apimachinery::labels::{Operator, Requirement};
    /// let r = Requirement::new("size", Operator::GreaterThan, ["3"])?;
    /// assert!(r.matches(&BTreeMap::from([("size".into(), "10".into())])));
    /// assert!(!r.matches(&BTreeMap::new()));
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_value(labels.get(&self.key).map(String::as_str))
    }

    /// Whether an object whose label [`Requirement::key`] has the value `label` (`None`: the
    /// object has no such label) satisfies this requirement: [`Requirement::matches`] for labels
    /// kept in another form than a map.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::{Operator, Requirement};
    /// let r = Requirement::new("tier", Operator::NotIn, ["db"])?;
    /// assert!(r.matches_value(None));
    /// assert!(r.matches_value(Some("web")));
    /// assert!(!r.matches_value(Some("db")));
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn matches_value(&self, label: Option<&str>) -> bool {
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => {
                label.is_some_and(|v| self.has_value(v))
            }
            Operator::NotEquals | Operator::NotIn => label.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => label.is_some(),
            Operator::DoesNotExist => label.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), Some(want)) = (
                    label.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operator {
            Operator::Exists => return f.write_str(&self.key),
            Operator::DoesNotExist => return write!(f, "!{}", self.key),
            _ => {}
        }
        f.write_str(&self.key)?;
        let op = match self.operator {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
            Operator::Exists | Operator::DoesNotExist => "",
        };
        f.write_str(op)?;
        if matches!(self.operator, Operator::In | Operator::NotIn) {
            write!(f, "({})", self.values.join(","))
        } else {
            f.write_str(self.values.first().map(String::as_str).unwrap_or(""))
        }
    }
}

/// A parsed label selector: the conjunction of its [`Requirement`]s.
///
/// ```
/// use std::collections::BTreeMap;
/// use kube_codegen_apimachinery::labels::Selector;
///
/// let labels = BTreeMap::from([("app".to_string(), "web".to_string())]);
/// assert!(Selector::everything().matches(&labels));
/// assert!(!Selector::nothing().matches(&labels));
/// assert!(Selector::parse("app==web")?.matches(&labels));
/// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Selector {
    /// Sorted by key (stable, so requirements on one key keep their order).
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Selector {
    /// The selector that matches every object (the empty string).
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert!(Selector::everything().is_empty());
    /// assert_eq!(Selector::everything().to_string(), "");
    /// ```
    pub fn everything() -> Self {
        Selector::default()
    }

    /// The selector that matches no object (what a missing `LabelSelector` means in Go).
    ///
    /// ```
    /// # use std::collections::BTreeMap;
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert!(!Selector::nothing().matches(&BTreeMap::new()));
    /// assert!(!Selector::nothing().is_empty());
    /// ```
    pub fn nothing() -> Self {
        Selector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Parses a selector string; the empty (or all-blank) string selects everything.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert!(Selector::parse("x in (a,b),y").is_ok());
    /// assert!(Selector::parse("x in (a,b").is_err());
    /// assert!(Selector::parse("-x=y").is_err());
    /// ```
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        // Go's `labels.Parse`: requirements separated by commas, each read by
        // `Parser::requirement`; the error messages are Go's.
        let tokens = lex(input);
        let mut parser = Parser { tokens, pos: 0 };
        let mut requirements = Vec::new();
        loop {
            let t = parser.lookahead(Context::Values);
            match t.kind {
                Tok::Ident | Tok::Bang => {
                    requirements.push(parser.requirement()?);
                    let t = parser.consume(Context::Values);
                    match t.kind {
                        Tok::End => break,
                        Tok::Comma => {
                            let next = parser.lookahead(Context::Values);
                            if !matches!(next.kind, Tok::Ident | Tok::Bang) {
                                return Err(next.unexpected("identifier after ','", false));
                            }
                        }
                        _ => return Err(t.unexpected("',' or 'end of string'", false)),
                    }
                }
                Tok::End => break,
                _ => {
                    return Err(t.unexpected("!, identifier, or 'end of string'", false));
                }
            }
        }
        Ok(Selector::from_requirements(requirements))
    }

    /// A selector requiring every `key=value` pair of `labels` (Go's `SelectorFromValidatedSet`
    /// after validation).
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// let sel = Selector::from_set([("b", "2"), ("a", "1")])?;
    /// assert_eq!(sel.to_string(), "a=1,b=2");
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn from_set<I, K, V>(labels: I) -> Result<Self, SelectorError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let reqs = labels
            .into_iter()
            .map(|(k, v)| Requirement::new(k, Operator::Equals, [v]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selector::from_requirements(reqs))
    }

    /// A selector from already validated requirements.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::{Operator, Requirement, Selector};
    /// let sel = Selector::from_requirements([Requirement::new("a", Operator::Exists, Vec::<String>::new())?]);
    /// assert_eq!(sel.to_string(), "a");
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn from_requirements(requirements: impl IntoIterator<Item = Requirement>) -> Self {
        let mut requirements: Vec<Requirement> = requirements.into_iter().collect();
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Selector {
            requirements,
            nothing: false,
        }
    }

    /// This selector with one more requirement (Go's `Add`; turns [`Selector::nothing`] into a
    /// selector that matches only `requirement`).
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::{Operator, Requirement, Selector};
    /// let sel = Selector::everything().with(Requirement::new("a", Operator::Equals, ["b"])?);
    /// assert_eq!(sel.to_string(), "a=b");
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    #[must_use]
    pub fn with(mut self, requirement: Requirement) -> Self {
        self.nothing = false;
        let at = self
            .requirements
            .partition_point(|r| r.key <= requirement.key);
        self.requirements.insert(at, requirement);
        self
    }

    /// The requirements, sorted by key.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert_eq!(Selector::parse("b,a")?.requirements().len(), 2);
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether the selector selects everything (has no requirements).
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert!(Selector::parse("  ")?.is_empty());
    /// assert!(!Selector::parse("a")?.is_empty());
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether `labels` satisfy every requirement.
    ///
    /// ```
    /// # use std::collections::BTreeMap;
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// let sel = Selector::parse("env notin (prod)")?;
    /// assert!(sel.matches(&BTreeMap::new()));
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Like [`Selector::matches`], for an object's optional `metadata.labels`.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert!(Selector::parse("!a")?.matches_opt(None));
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn matches_opt(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        self.matches(labels.unwrap_or(&EMPTY))
    }

    /// Whether the labels that `label` looks up (key → value, `None` for a label the object
    /// lacks) match: [`Selector::matches`] for labels kept in another form than a map.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// let labels = [("app", "web")];
    /// let get = |k: &str| labels.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    /// assert!(Selector::parse("app=web,!tier")?.matches_by(get));
    /// assert!(!Selector::parse("app in (db)")?.matches_by(get));
    /// assert!(!Selector::nothing().matches_by(get));
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn matches_by<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        !self.nothing
            && self
                .requirements
                .iter()
                .all(|r| r.matches_value(label(&r.key)))
    }

    /// If the selector pins `key` to a single value (`key=v`, `key==v` or `key in (v)`), that
    /// value — what Go's `RequiresExactMatch` reports, useful for index look-ups.
    ///
    /// ```
    /// # use kube_codegen_apimachinery::labels::Selector;
    /// assert_eq!(Selector::parse("a in (x),b")?.requires_exact_match("a"), Some("x"));
    /// assert_eq!(Selector::parse("a!=x")?.requires_exact_match("a"), None);
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        self.requirements.iter().find_map(|r| match r.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In
                if r.key == key && r.values.len() == 1 =>
            {
                r.values.first().map(String::as_str)
            }
            _ => None,
        })
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl FromStr for Selector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Selector::parse(s)
    }
}

#[cfg(feature = "kube")]
#[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
impl TryFrom<&LabelSelector> for Selector {
    type Error = SelectorError;

    /// Converts a `metav1.LabelSelector` as Go's `LabelSelectorAsSelector` does: `matchLabels`
    /// become equality requirements, `matchExpressions` keep their operator; an empty selector
    /// selects everything.
    ///
    /// ```
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
    /// use kube_codegen_apimachinery::labels::Selector;
    ///
    /// let ls = LabelSelector {
    ///     match_labels: Some([("app".to_string(), "web".to_string())].into()),
    ///     match_expressions: Some(vec![LabelSelectorRequirement {
    ///         key: "tier".into(),
    ///         operator: "NotIn".into(),
    ///         values: Some(vec!["db".into()]),
    ///     }]),
    /// };
    /// assert_eq!(Selector::try_from(&ls)?.to_string(), "app=web,tier notin (db)");
    /// # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
    /// ```
    fn try_from(ls: &LabelSelector) -> Result<Self, Self::Error> {
        let mut reqs = Vec::new();
        for (k, v) in ls.match_labels.iter().flatten() {
            reqs.push(Requirement::new(k.clone(), Operator::Equals, [v.clone()])?);
        }
        for expr in ls.match_expressions.iter().flatten() {
            reqs.push(Requirement::try_from(expr)?);
        }
        Ok(Selector::from_requirements(reqs))
    }
}

#[cfg(feature = "kube")]
#[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
impl TryFrom<LabelSelector> for Selector {
    type Error = SelectorError;

    /// See the conversion from `&LabelSelector`.
    fn try_from(ls: LabelSelector) -> Result<Self, Self::Error> {
        Selector::try_from(&ls)
    }
}

#[cfg(feature = "kube")]
#[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
impl TryFrom<&LabelSelectorRequirement> for Requirement {
    type Error = SelectorError;

    /// Converts one `matchExpressions` entry (`In`, `NotIn`, `Exists`, `DoesNotExist`).
    fn try_from(expr: &LabelSelectorRequirement) -> Result<Self, Self::Error> {
        let op = match expr.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => {
                return Err(SelectorError::UnknownOperator {
                    operator: other.to_string(),
                });
            }
        };
        Requirement::new(expr.key.clone(), op, expr.values.iter().flatten().cloned())
    }
}

// ---------------------------------------------------------------------------------------------
// Validation (shared with the API server: crate::validation)

// ---------------------------------------------------------------------------------------------
// Lexer and parser

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Ident,
    In,
    NotIn,
    Bang,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    Comma,
    Open,
    Close,
    End,
}

#[derive(Debug, Clone)]
struct Token<'a> {
    kind: Tok,
    text: &'a str,
    position: usize,
}

impl Token<'_> {
    fn unexpected(&self, expected: &'static str, in_requirement: bool) -> SelectorError {
        SelectorError::Syntax {
            position: self.position,
            found: self.text.to_string(),
            expected,
            in_requirement,
        }
    }
}

/// Go's `isWhitespace`: the only characters that separate tokens besides the symbols.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn lex(input: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_blank(c) {
            chars.next();
            continue;
        }
        if is_special(c) {
            chars.next();
            let two = chars.peek().map(|&(_, n)| n);
            let (kind, len) = match (c, two) {
                ('!', Some('=')) => (Tok::NotEq, 2),
                ('=', Some('=')) => (Tok::DoubleEq, 2),
                ('!', _) => (Tok::Bang, 1),
                ('=', _) => (Tok::Eq, 1),
                ('(', _) => (Tok::Open, 1),
                (')', _) => (Tok::Close, 1),
                (',', _) => (Tok::Comma, 1),
                ('>', _) => (Tok::Gt, 1),
                _ => (Tok::Lt, 1),
            };
            if len == 2 {
                chars.next();
            }
            tokens.push(Token {
                kind,
                text: &input[start..start + len],
                position: start,
            });
            continue;
        }
        let mut end = input.len();
        while let Some(&(i, c)) = chars.peek() {
            if is_blank(c) || is_special(c) {
                end = i;
                break;
            }
            chars.next();
        }
        let text = &input[start..end];
        let kind = match text {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Ident,
        };
        tokens.push(Token {
            kind,
            text,
            position: start,
        });
    }
    tokens.push(Token {
        kind: Tok::End,
        text: "",
        position: input.len(),
    });
    tokens
}

/// Where the parser is (Go's `ParserContext`): `in` and `notin` are operators after a key and
/// plain words where a key or value may stand (`in in (in)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    /// The next token, read in `context`, without moving on.
    fn lookahead(&self, context: Context) -> Token<'a> {
        // The token list always ends with `End`, and `consume` never moves past it.
        let mut t = self
            .tokens
            .get(self.pos)
            .or(self.tokens.last())
            .cloned()
            .unwrap_or(Token {
                kind: Tok::End,
                text: "",
                position: 0,
            });
        if context == Context::Values && matches!(t.kind, Tok::In | Tok::NotIn) {
            t.kind = Tok::Ident;
        }
        t
    }

    /// The next token, read in `context`; moves on.
    fn consume(&mut self, context: Context) -> Token<'a> {
        let t = self.lookahead(context);
        if t.kind != Tok::End {
            self.pos += 1;
        }
        t
    }

    /// One requirement (Go's `parseRequirement`); its errors are marked as inside it.
    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        let mut t = self.consume(Context::Values);
        let mut operator = None;
        if t.kind == Tok::Bang {
            operator = Some(Operator::DoesNotExist);
            t = self.consume(Context::Values);
        }
        if t.kind != Tok::Ident {
            return Err(t.unexpected("identifier", true));
        }
        let key = t.text.to_string();
        let errs = validation::is_qualified_name(&key);
        if !errs.is_empty() {
            // Go checks the key here with the parser's (nil) field path first.
            return Err(SelectorError::Invalid {
                issues: vec![Issue {
                    field: "<nil>".into(),
                    value: go_quote(&key),
                    detail: errs.join("; "),
                }],
                parsing: true,
            });
        }
        if operator.is_none()
            && matches!(self.lookahead(Context::Values).kind, Tok::End | Tok::Comma)
        {
            operator = Some(Operator::Exists);
        }
        if let Some(op) = operator {
            return Requirement::checked(key, op, Vec::new(), true);
        }
        let t = self.consume(Context::KeyAndOperator);
        let op = match t.kind {
            Tok::In => Operator::In,
            Tok::Eq => Operator::Equals,
            Tok::DoubleEq => Operator::DoubleEquals,
            Tok::Gt => Operator::GreaterThan,
            Tok::Lt => Operator::LessThan,
            Tok::NotIn => Operator::NotIn,
            Tok::NotEq => Operator::NotEquals,
            _ => return Err(t.unexpected("in, notin, =, ==, !=, gt, lt", true)),
        };
        let values = if matches!(op, Operator::In | Operator::NotIn) {
            self.set_values()?
        } else {
            self.exact_value()?
        };
        // A set in Go: sorted, each value once.
        Requirement::checked(key, op, values.into_iter().collect(), true)
    }

    /// `( v1, v2, … )` (Go's `parseValues`); `()` and empty entries stand for the empty value.
    fn set_values(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let open = self.consume(Context::Values);
        if open.kind != Tok::Open {
            return Err(open.unexpected("'('", true));
        }
        let next = self.lookahead(Context::Values);
        match next.kind {
            Tok::Ident | Tok::Comma => {
                let values = self.identifiers()?;
                // `identifiers` stops before a `)`.
                self.consume(Context::Values);
                Ok(values)
            }
            Tok::Close => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(next.unexpected("',', ')' or identifier", true)),
        }
    }

    /// Comma-separated, possibly empty values up to a `)` (Go's `parseIdentifiersList`).
    fn identifiers(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        let mut values = BTreeSet::new();
        loop {
            let t = self.consume(Context::Values);
            match t.kind {
                Tok::Ident => {
                    values.insert(t.text.to_string());
                    let next = self.lookahead(Context::Values);
                    match next.kind {
                        Tok::Comma => {}
                        Tok::Close => return Ok(values),
                        _ => return Err(next.unexpected("',' or ')'", true)),
                    }
                }
                Tok::Comma => {
                    // `(,a`, `a,)` and `a,,b` hold the empty value.
                    if values.is_empty() {
                        values.insert(String::new());
                    }
                    match self.lookahead(Context::Values).kind {
                        Tok::Close => {
                            values.insert(String::new());
                            return Ok(values);
                        }
                        Tok::Comma => {
                            values.insert(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(t.unexpected("',', or identifier", true)),
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>` or `<` (Go's `parseExactValue`): empty when a
    /// comma or the end follows.
    fn exact_value(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        if matches!(self.lookahead(Context::Values).kind, Tok::End | Tok::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let t = self.consume(Context::Values);
        if t.kind == Tok::Ident {
            return Ok(BTreeSet::from([t.text.to_string()]));
        }
        Err(t.unexpected("identifier", true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_valid_selectors_to_canonical_form() {
        let cases = [
            ("", ""),
            ("   ", ""),
            ("x=a", "x=a"),
            ("x==a", "x==a"),
            ("x = a", "x=a"),
            ("x!=a", "x!=a"),
            ("x=", "x="),
            ("x", "x"),
            ("!x", "!x"),
            (" ! x ", "!x"),
            ("x>1", "x>1"),
            ("x<10", "x<10"),
            ("x in (b,a)", "x in (a,b)"),
            ("x in (a,a)", "x in (a)"),
            ("x notin (a)", "x notin (a)"),
            ("x in(a , b )", "x in (a,b)"),
            ("x in (a,)", "x in (,a)"),
            ("x in (,a)", "x in (,a)"),
            ("z=1,a=2,m", "a=2,m,z=1"),
            ("a!=1,a!=2", "a!=1,a!=2"),
            ("example.com/app=web", "example.com/app=web"),
            ("x=in", "x=in"),
            (
                "app.kubernetes.io/name in (web,api),!legacy",
                "app.kubernetes.io/name in (api,web),!legacy",
            ),
        ];
        for (input, want) in cases {
            let sel = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(sel.to_string(), want, "{input:?}");
            // Canonical output parses back to the same selector.
            assert_eq!(
                Selector::parse(&sel.to_string()).ok(),
                Some(sel),
                "{input:?}"
            );
        }
    }

    /// The messages kube-apiserver v1.37.1 answered for these `labelSelector`s (a list of
    /// ConfigMaps), and the others Go's parser has.
    #[test]
    fn rejects_invalid_selectors_with_gos_messages() {
        let key_rule = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
        let value_rule = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let cases: Vec<(&str, String)> = vec![
            ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'".into()),
            ("a,", "found '', expected: identifier after ','".into()),
            ("a=b,,c=d", "found ',', expected: identifier after ','".into()),
            ("!", "unable to parse requirement: found '', expected: identifier".into()),
            ("a=b=c", "found '=', expected: ',' or 'end of string'".into()),
            ("a notin", "unable to parse requirement: found '' expected: '('".into()),
            ("a in b", "unable to parse requirement: found 'b' expected: '('".into()),
            (
                "x/y/z=1",
                format!("unable to parse requirement: <nil>: Invalid value: \"x/y/z\": {key_rule}"),
            ),
            ("a=b c", "found 'c', expected: ',' or 'end of string'".into()),
            ("(", "found '(', expected: !, identifier, or 'end of string'".into()),
            ("a=b)", "found ')', expected: ',' or 'end of string'".into()),
            (
                "a>b",
                "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer".into(),
            ),
            (
                "a=-b",
                format!("unable to parse requirement: values[0][a]: Invalid value: \"-b\": {value_rule}"),
            ),
            (
                "a>x-",
                format!("unable to parse requirement: [values[0]: Invalid value: \"x-\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: \"x-\": {value_rule}]"),
            ),
            ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt".into()),
            ("a in (=", "unable to parse requirement: found '=', expected: ',', ')' or identifier".into()),
            ("a in (,=", "unable to parse requirement: found '=', expected: ',', or identifier".into()),
            ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'".into()),
            ("a=(b)", "unable to parse requirement: found '(', expected: identifier".into()),
            ("!a=b", "found '=', expected: ',' or 'end of string'".into()),
        ];
        for (input, want) in cases {
            match Selector::parse(input) {
                Ok(sel) => panic!("{input:?} parsed as {sel}"),
                Err(e) => assert_eq!(e.to_string(), want, "{input:?}"),
            }
        }
        let long = "a".repeat(64);
        for (input, part) in [
            (format!("{long}=b"), "must be no more than 63 bytes"),
            ("/a".to_string(), "prefix part must be non-empty"),
            ("Example.com/a".to_string(), "lowercase RFC 1123 subdomain"),
            (format!("a={long}"), "must be no more than 63 bytes"),
            (
                "a in (-b)".to_string(),
                "values[0][a]: Invalid value: \"-b\"",
            ),
        ] {
            let e = Selector::parse(&input).err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|e| e.contains(part)),
                "{input:?}: {e:?}"
            );
        }
    }

    #[test]
    fn accepts_what_go_accepts() {
        for (input, want) in [
            ("a in ()", "a in ()"),
            ("in in (in)", "in in (in)"),
            ("a in (,)", "a in ()"),
            ("a in (b,,c)", "a in (,b,c)"),
            ("a==", "a=="),
        ] {
            let sel = Selector::parse(input).map(|s| s.to_string());
            assert_eq!(sel.as_deref().ok(), Some(want), "{input:?}: {sel:?}");
        }
    }

    #[test]
    fn syntax_errors_carry_structured_position() {
        assert_eq!(
            Selector::parse("a in (b"),
            Err(SelectorError::Syntax {
                position: 7,
                found: String::new(),
                expected: "',' or ')'",
                in_requirement: true,
            })
        );
    }

    #[test]
    fn built_requirements_report_every_issue_as_go_does() {
        let e = Requirement::new("-a", Operator::GreaterThan, ["1", "x"]).err();
        assert_eq!(
            e.map(|e| e.to_string()).unwrap_or_default(),
            "[key: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), values: Invalid value: []string{\"1\", \"x\"}: for 'Gt', 'Lt' operators, exactly one value is required, values[1]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer]"
        );
        assert_eq!(
            Requirement::new("a", Operator::In, Vec::<String>::new())
                .err()
                .map(|e| e.to_string()),
            Some("values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty".to_string())
        );
    }

    #[test]
    fn matches_like_go() {
        let l = labels(&[("app", "web"), ("tier", "front"), ("n", "5"), ("empty", "")]);
        let cases = [
            ("", true),
            ("app=web", true),
            ("app==web", true),
            ("app=api", false),
            ("app!=api", true),
            ("app!=web", false),
            ("missing!=x", true),
            ("app in (api,web)", true),
            ("app in (api)", false),
            ("missing in (x)", false),
            ("app notin (api)", true),
            ("app notin (web)", false),
            ("missing notin (x)", true),
            ("app", true),
            ("missing", false),
            ("!missing", true),
            ("!app", false),
            ("n>4", true),
            ("n>5", false),
            ("n<6", true),
            ("app>1", false),
            ("missing<1", false),
            ("empty=", true),
            ("app=", false),
            ("app=web,tier=front", true),
            ("app=web,tier=back", false),
        ];
        for (input, want) in cases {
            let sel = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(sel.matches(&l), want, "{input:?}");
        }
        assert!(!Selector::nothing().matches(&l));
        assert!(Selector::parse("!x").is_ok_and(|s| s.matches_opt(None)));
    }

    #[cfg(feature = "kube")]
    #[test]
    fn converts_label_selectors() {
        let ls = LabelSelector {
            match_labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "In".into(),
                    values: Some(vec!["prod".into(), "dev".into()]),
                },
                LabelSelectorRequirement {
                    key: "legacy".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        let sel = Selector::try_from(&ls);
        assert_eq!(
            sel.as_ref().map(ToString::to_string).ok().as_deref(),
            Some("app=web,env in (dev,prod),!legacy")
        );
        assert!(Selector::try_from(LabelSelector::default()).is_ok_and(|s| s.is_empty()));
        let bad = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "a".into(),
                operator: "Gt".into(),
                values: Some(vec!["1".into()]),
            }]),
            ..Default::default()
        };
        assert!(matches!(
            Selector::try_from(&bad),
            Err(SelectorError::UnknownOperator { .. })
        ));
        let empty_in = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "a".into(),
                operator: "In".into(),
                values: None,
            }]),
            ..Default::default()
        };
        assert!(matches!(
            Selector::try_from(&empty_in),
            Err(SelectorError::Invalid { parsing: false, .. })
        ));
    }

    #[test]
    fn builds_programmatically() {
        let sel = Selector::nothing().with(
            Requirement::new("b", Operator::Exists, Vec::<String>::new())
                .unwrap_or_else(|e| panic!("{e}")),
        );
        assert_eq!(sel.to_string(), "b");
        assert!(sel.matches(&labels(&[("b", "")])));
        let sel = Selector::from_set([("x", "1")]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sel.requires_exact_match("x"), Some("1"));
        assert!(Selector::from_set([("x", "bad value")]).is_err());
    }
}
