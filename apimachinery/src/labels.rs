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
//! let err = Selector::parse("a in (b").unwrap_err();
//! assert_eq!(err.to_string(), "unable to parse label selector at position 7: found end of string, expected ',' or ')'");
//! # Ok::<(), kube_codegen_apimachinery::labels::SelectorError>(())
//! ```

use std::collections::BTreeMap;
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

/// Why a selector, requirement, key or value is not valid.
///
/// ```
/// use kube_codegen_apimachinery::labels::{Selector, SelectorError};
/// match Selector::parse("a in (b") {
///     Err(SelectorError::Syntax { position, .. }) => assert_eq!(position, 7),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The text does not follow the selector grammar.
    #[error(
        "unable to parse label selector at position {position}: found {found}, expected {expected}"
    )]
    Syntax {
        /// Byte offset in the input where the unexpected token starts.
        position: usize,
        /// The token found there (quoted), or `end of string`.
        found: String,
        /// What the grammar allows at that point.
        expected: &'static str,
    },
    /// A key that is not a Kubernetes qualified name.
    #[error("invalid label key {key:?}: {reason}")]
    InvalidKey {
        /// The offending key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value that is not a valid label value.
    #[error("invalid label value {value:?} for key {key:?}: {reason}")]
    InvalidValue {
        /// The key the value belongs to.
        key: String,
        /// The offending value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The operator was given the wrong number (or kind) of values.
    #[error("invalid values for {key:?} with operator '{operator}': {reason}")]
    InvalidValues {
        /// The requirement's key.
        key: String,
        /// The operator.
        operator: Operator,
        /// What is wrong.
        reason: &'static str,
    },
    /// A `LabelSelector` match expression with an operator other than In, NotIn, Exists and
    /// DoesNotExist.
    #[error("{operator:?} is not a valid label selector operator")]
    UnknownOperator {
        /// The operator as written in the `LabelSelector`.
        operator: String,
    },
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
        validate_key(&key)?;
        let mut values: Vec<String> = values.into_iter().map(Into::into).collect();
        let invalid = |reason| SelectorError::InvalidValues {
            key: key.clone(),
            operator,
            reason,
        };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(invalid("the values set can't be empty"));
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                return Err(invalid("exactly one value is required"));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(invalid("values set must be empty"));
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    return Err(invalid("exactly one value is required"));
                }
                if values[0].parse::<i64>().is_err() {
                    return Err(invalid("the value must be an integer"));
                }
            }
            _ => {}
        }
        for v in &values {
            validate_value(&key, v)?;
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
        let tokens = lex(input);
        let mut parser = Parser { tokens, pos: 0 };
        let mut requirements = Vec::new();
        if parser.peek().kind == Tok::End {
            return Ok(Selector::everything());
        }
        loop {
            requirements.push(parser.requirement()?);
            let t = parser.next();
            match t.kind {
                Tok::End => break,
                Tok::Comma => continue,
                _ => return Err(t.unexpected("',' or end of string")),
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

fn validate_key(key: &str) -> Result<(), SelectorError> {
    let errs = validation::is_qualified_name(key);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(SelectorError::InvalidKey {
            key: key.to_string(),
            reason: errs.join("; "),
        })
    }
}

fn validate_value(key: &str, value: &str) -> Result<(), SelectorError> {
    let errs = validation::is_label_value(value);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(SelectorError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason: errs.join("; "),
        })
    }
}

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
    fn unexpected(&self, expected: &'static str) -> SelectorError {
        SelectorError::Syntax {
            position: self.position,
            found: if self.kind == Tok::End {
                "end of string".to_string()
            } else {
                format!("'{}'", self.text)
            },
            expected,
        }
    }

    /// Identifiers, and the keywords `in`/`notin` where a value is expected.
    fn as_value(&self) -> Option<&str> {
        matches!(self.kind, Tok::Ident | Tok::In | Tok::NotIn).then_some(self.text)
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn lex(input: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
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
            if c.is_whitespace() || is_special(c) {
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

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Token<'a> {
        // The token list always ends with `End`, and `next` never moves past it.
        self.tokens
            .get(self.pos)
            .or(self.tokens.last())
            .cloned()
            .unwrap_or(Token {
                kind: Tok::End,
                text: "",
                position: 0,
            })
    }

    fn next(&mut self) -> Token<'a> {
        let t = self.peek();
        if t.kind != Tok::End {
            self.pos += 1;
        }
        t
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        let mut t = self.next();
        let negated = t.kind == Tok::Bang;
        if negated {
            t = self.next();
        }
        if t.kind != Tok::Ident {
            return Err(t.unexpected("identifier"));
        }
        let key = t.text;
        validate_key(key)?;
        if negated {
            return Requirement::new(key, Operator::DoesNotExist, Vec::<String>::new());
        }
        let op_tok = self.peek();
        let op = match op_tok.kind {
            Tok::End | Tok::Comma => {
                return Requirement::new(key, Operator::Exists, Vec::<String>::new());
            }
            Tok::Eq => Operator::Equals,
            Tok::DoubleEq => Operator::DoubleEquals,
            Tok::NotEq => Operator::NotEquals,
            Tok::Gt => Operator::GreaterThan,
            Tok::Lt => Operator::LessThan,
            Tok::In => Operator::In,
            Tok::NotIn => Operator::NotIn,
            _ => return Err(op_tok.unexpected("one of '=', '==', '!=', 'in', 'notin', '>', '<'")),
        };
        self.next();
        let values = if matches!(op, Operator::In | Operator::NotIn) {
            self.set_values()?
        } else {
            let t = self.peek();
            match t.kind {
                // `key=` means the empty value, as in Go.
                Tok::End | Tok::Comma => vec![String::new()],
                _ => match t.as_value() {
                    Some(v) => {
                        self.next();
                        vec![v.to_string()]
                    }
                    None => return Err(t.unexpected("a value")),
                },
            }
        };
        Requirement::new(key, op, values)
    }

    /// `( v1, v2, … )`; empty entries (`(a,)`) stand for the empty value, as in Go.
    fn set_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let open = self.next();
        if open.kind != Tok::Open {
            return Err(open.unexpected("'('"));
        }
        let mut values = Vec::new();
        let mut expect_value = true;
        loop {
            let t = self.next();
            match t.kind {
                Tok::Close => {
                    if expect_value && !values.is_empty() {
                        values.push(String::new());
                    }
                    return Ok(values);
                }
                Tok::Comma => {
                    if expect_value {
                        values.push(String::new());
                    }
                    expect_value = true;
                }
                _ => match t.as_value() {
                    Some(v) if expect_value => {
                        values.push(v.to_string());
                        expect_value = false;
                    }
                    _ if expect_value => return Err(t.unexpected("a value, ',' or ')'")),
                    _ => return Err(t.unexpected("',' or ')'")),
                },
            }
        }
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

    #[test]
    fn rejects_invalid_selectors_with_position_and_cause() {
        let long = "a".repeat(64);
        let cases: Vec<(String, &str)> = vec![
            (
                "a in (b".into(),
                "position 7: found end of string, expected ',' or ')'",
            ),
            ("a in b".into(), "position 5: found 'b', expected '('"),
            ("a in ()".into(), "the values set can't be empty"),
            (
                "a=b=c".into(),
                "position 3: found '=', expected ',' or end of string",
            ),
            ("a b".into(), "position 2: found 'b', expected one of"),
            (",a".into(), "position 0: found ',', expected identifier"),
            (
                "a,".into(),
                "position 2: found end of string, expected identifier",
            ),
            ("a,,b".into(), "position 2: found ',', expected identifier"),
            ("=a".into(), "position 0: found '=', expected identifier"),
            (
                "!".into(),
                "position 1: found end of string, expected identifier",
            ),
            (
                "!a=b".into(),
                "position 2: found '=', expected ',' or end of string",
            ),
            ("a=(b)".into(), "position 2: found '(', expected a value"),
            (
                "a in (b c)".into(),
                "position 8: found 'c', expected ',' or ')'",
            ),
            (
                "a in (b,(c))".into(),
                "position 8: found '(', expected a value, ',' or ')'",
            ),
            ("-a=b".into(), "invalid label key \"-a\""),
            (
                "a/b/c".into(),
                "with an optional DNS subdomain prefix and '/'",
            ),
            ("/a".into(), "prefix part must be non-empty"),
            ("Example.com/a".into(), "lowercase RFC 1123 subdomain"),
            (format!("{long}=b"), "no more than 63 bytes"),
            (format!("a={long}"), "invalid label value"),
            ("a=b_".into(), "invalid label value \"b_\""),
            ("a>b".into(), "must be an integer"),
            ("a in (-b)".into(), "invalid label value"),
            ("a<-1".into(), "invalid label value"),
        ];
        for (input, want) in cases {
            match Selector::parse(&input) {
                Ok(sel) => panic!("{input:?} parsed as {sel}"),
                Err(e) => assert!(
                    e.to_string().contains(want),
                    "{input:?}: {e} does not contain {want:?}"
                ),
            }
        }
    }

    #[test]
    fn syntax_errors_carry_structured_position() {
        assert_eq!(
            Selector::parse("a in (b"),
            Err(SelectorError::Syntax {
                position: 7,
                found: "end of string".into(),
                expected: "',' or ')'",
            })
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
            Err(SelectorError::InvalidValues { .. })
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
