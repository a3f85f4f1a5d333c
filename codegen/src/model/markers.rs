//! The one controller-gen marker the model reads, `+kubebuilder:resource` (names and scope every
//! generator agrees on); the CRD stage reads the rest ([`crate::crd`]).

use crate::error::{Error, Result};
use crate::model::Scope;
use crate::tags::Tag;
use crate::tags::markers::{args_of, list, parse_args, unquote};

/// What a `+kubebuilder:resource:path=…,singular=…,shortName=a;b,categories=c;d,scope=…` marker
/// sets; `None` for what it leaves alone.
#[derive(Debug, Default)]
pub(crate) struct ResourceMarker {
    pub(crate) short_names: Option<Vec<String>>,
    pub(crate) categories: Option<Vec<String>>,
    pub(crate) singular: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) scope: Option<Scope>,
}

/// Whether `v` is a valid resource name (lower case, digits, `-` and `.`).
fn is_resource_name(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// Reads a `+kubebuilder:resource…` marker.
pub(crate) fn resource(tag: &Tag) -> Result<ResourceMarker> {
    let err = |msg: String| {
        Error::at(
            tag.location.clone(),
            format!("+kubebuilder:resource: {msg}"),
        )
    };
    let mut out = ResourceMarker::default();
    let args = args_of(tag, "kubebuilder:resource").unwrap_or_default();
    for (k, raw) in parse_args(tag, &args)? {
        let names = |raw: &str| -> Result<Vec<String>> {
            let list = list(raw).map_err(&err)?;
            for n in &list {
                if !is_resource_name(n) {
                    return Err(err(format!("{k}: {n:?} is not a valid lower-case name")));
                }
            }
            Ok(list)
        };
        let one = |raw: &str| unquote(raw).map_err(&err);
        match k.as_str() {
            "shortName" => out.short_names = Some(names(&raw)?),
            "categories" => out.categories = Some(names(&raw)?),
            "singular" => {
                let v = one(&raw)?;
                if !is_resource_name(&v) {
                    return Err(err(format!(
                        "singular={v:?} is not a valid lower-case name"
                    )));
                }
                out.singular = Some(v);
            }
            "path" => {
                let v = one(&raw)?;
                if !is_resource_name(&v) {
                    return Err(err(format!("path={v:?} is not a valid resource name")));
                }
                out.path = Some(v);
            }
            "scope" => {
                out.scope = Some(match one(&raw)?.as_str() {
                    "Cluster" => Scope::Cluster,
                    "Namespaced" => Scope::Namespaced,
                    other => {
                        return Err(err(format!(
                            "scope={other:?}: expected Cluster or Namespaced"
                        )));
                    }
                });
            }
            other => {
                return Err(err(format!(
                    "unknown argument {other:?} (known: path, singular, shortName, categories, scope)"
                )));
            }
        }
    }
    Ok(out)
}
