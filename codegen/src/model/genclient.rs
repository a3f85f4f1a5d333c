//! The tags of one type, checked: `+genclient` and its options, verbs and extension methods
//! (`+genclient:method=…`), the deep-copy and `runtime.Object` tags.

use std::collections::BTreeSet;

use super::decls::TypeDecl;
use super::{ExtMethod, ExtVerb, RUNTIME_OBJECT, Scope, TypeRef, Verb, markers};
use crate::error::{Error, Result};
use crate::namer;
use crate::tags::{self, Tag};

/// The tags of one type, checked.
pub(super) struct TypeTags {
    pub(super) genclient: bool,
    pub(super) non_namespaced: bool,
    pub(super) no_verbs: bool,
    pub(super) no_status: bool,
    pub(super) only: Option<BTreeSet<Verb>>,
    pub(super) skip: BTreeSet<Verb>,
    pub(super) methods: Vec<(Tag, String)>,
    pub(super) deepcopy: Option<bool>,
    pub(super) runtime_object: bool,
    pub(super) resource_name: Option<String>,
    pub(super) short_names: Vec<String>,
    pub(super) categories: Vec<String>,
    pub(super) singular: Option<String>,
    /// `+kube-codegen:external:status=true|false`: whether an external kind's type has a
    /// `status` field (what client-gen reads from a Go struct, which a re-export cannot show).
    pub(super) external_status: Option<(bool, Tag)>,
}

impl TypeTags {
    /// `+kubebuilder:resource:…`: names for the CRD, scope and plural for every generator.
    pub(super) fn apply_resource_marker(
        &mut self,
        tag: &Tag,
        scope: &mut Option<(Scope, Tag)>,
        path: &mut Option<(String, Tag)>,
    ) -> Result<()> {
        let m = markers::resource(tag)?;
        if let Some(v) = m.short_names {
            self.short_names = v;
        }
        if let Some(v) = m.categories {
            self.categories = v;
        }
        if let Some(v) = m.singular {
            self.singular = Some(v);
        }
        if let Some(v) = m.path {
            *path = Some((v, tag.clone()));
        }
        if let Some(v) = m.scope {
            *scope = Some((v, tag.clone()));
        }
        Ok(())
    }

    pub(super) fn parse(d: &TypeDecl) -> Result<TypeTags> {
        let mut t = TypeTags {
            genclient: false,
            non_namespaced: false,
            no_verbs: false,
            no_status: false,
            only: None,
            skip: BTreeSet::new(),
            methods: Vec::new(),
            deepcopy: None,
            runtime_object: false,
            resource_name: None,
            short_names: Vec::new(),
            categories: Vec::new(),
            singular: None,
            external_status: None,
        };
        let mut kb_scope: Option<(Scope, Tag)> = None;
        let mut kb_path: Option<(String, Tag)> = None;
        let mut readonly: Option<Tag> = None;
        let mut only_tag: Option<Tag> = None;
        let mut skip_tag: Option<Tag> = None;
        let mut no_verbs_tag: Option<Tag> = None;
        // `+genclient:…` options only count on `+genclient` types (Go ignores them elsewhere, e.g.
        // `+genclient:nonNamespaced` on a List type) but are checked everywhere.
        for tag in &d.tags {
            let flag = || -> Result<bool> {
                match tag.value.as_deref() {
                    None | Some("true") => Ok(true),
                    Some(v) => Err(Error::at(
                        tag.location.clone(),
                        format!("+{} takes no value (found {v:?})", tag.key),
                    )),
                }
            };
            match tag.key.as_str() {
                "genclient" => {
                    if let Some(v) = &tag.value {
                        return Err(Error::at(
                            tag.location.clone(),
                            format!(
                                "+genclient takes no value (found +genclient={v}); remove the tag to skip the type"
                            ),
                        ));
                    }
                    t.genclient = true;
                }
                "genclient:nonNamespaced" => t.non_namespaced = flag()?,
                "genclient:noStatus" => t.no_status = flag()?,
                "genclient:noVerbs" => {
                    t.no_verbs = flag()?;
                    no_verbs_tag = Some(tag.clone());
                }
                "genclient:readonly" => {
                    flag()?;
                    readonly = Some(tag.clone());
                }
                "genclient:onlyVerbs" | "genclient:skipVerbs" => {
                    let verbs = parse_verbs(tag)?;
                    if tag.key.ends_with("onlyVerbs") {
                        t.only.get_or_insert_with(BTreeSet::new).extend(verbs);
                        only_tag = Some(tag.clone());
                    } else {
                        t.skip.extend(verbs);
                        skip_tag = Some(tag.clone());
                    }
                }
                "genclient:method" => {
                    let v = tag.value.clone().unwrap_or_default();
                    t.methods.push((tag.clone(), v));
                }
                k if k.starts_with("genclient") => {
                    return Err(Error::at(
                        tag.location.clone(),
                        format!(
                            "unknown tag +{k}: known options are nonNamespaced, noVerbs, onlyVerbs, skipVerbs, noStatus, readonly, method"
                        ),
                    ));
                }
                "nonNamespaced" | "readonly" | "noStatus" => {
                    return Err(Error::at(
                        tag.location.clone(),
                        format!(
                            "legacy tag +{}: write +genclient:{} instead",
                            tag.key, tag.key
                        ),
                    ));
                }
                "k8s:deepcopy-gen" => {
                    if t.deepcopy.is_some() {
                        return Err(Error::at(
                            tag.location.clone(),
                            "+k8s:deepcopy-gen given twice",
                        ));
                    }
                    t.deepcopy = Some(match tag.value.as_deref() {
                        Some("true") => true,
                        Some("false") => false,
                        other => {
                            return Err(Error::at(
                                tag.location.clone(),
                                format!(
                                    "type-level +k8s:deepcopy-gen={other:?}: expected true or false"
                                ),
                            ));
                        }
                    });
                }
                "k8s:deepcopy-gen:interfaces" => {
                    for iface in tag.value.as_deref().unwrap_or_default().split(',') {
                        if iface.trim() != RUNTIME_OBJECT {
                            return Err(Error::at(
                                tag.location.clone(),
                                format!(
                                    "unsupported deepcopy interface {:?}: only {RUNTIME_OBJECT} has a Rust meaning (kube::Resource)",
                                    iface.trim()
                                ),
                            ));
                        }
                        t.runtime_object = true;
                    }
                }
                "resourceName" => {
                    let v = tag.value.clone().unwrap_or_default();
                    if v.is_empty()
                        || !v.chars().all(|c| {
                            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'
                        })
                    {
                        return Err(Error::at(
                            tag.location.clone(),
                            format!("+resourceName={v:?} is not a valid resource name"),
                        ));
                    }
                    t.resource_name = Some(v);
                }
                k if k.starts_with("kubebuilder:resource:") || k == "kubebuilder:resource" => {
                    t.apply_resource_marker(tag, &mut kb_scope, &mut kb_path)?;
                }
                "kube-codegen:external:status" => {
                    let v = match tag.value.as_deref() {
                        Some("true") => true,
                        Some("false") => false,
                        other => {
                            return Err(Error::at(
                                tag.location.clone(),
                                format!(
                                    "+kube-codegen:external:status={}: expected true or false",
                                    other.unwrap_or_default()
                                ),
                            ));
                        }
                    };
                    t.external_status = Some((v, tag.clone()));
                }
                k if k == "kube-codegen:webhook:conversion"
                    || k.starts_with("kube-codegen:webhook:conversion:") =>
                {
                    // The CRD's conversion webhook: read by the crd generator.
                }
                k if k.starts_with("kube-codegen:") => {
                    return Err(Error::at(
                        tag.location.clone(),
                        format!(
                            "unknown tag +{k}: the known kube-codegen tags are +kube-codegen:external:status and +kube-codegen:webhook:conversion"
                        ),
                    ));
                }
                _ => {}
            }
        }
        if let Some((scope, tag)) = kb_scope {
            match scope {
                Scope::Cluster => t.non_namespaced = true,
                Scope::Namespaced if t.non_namespaced => {
                    return Err(Error::at(
                        tag.location,
                        "+kubebuilder:resource:scope=Namespaced conflicts with +genclient:nonNamespaced",
                    ));
                }
                Scope::Namespaced => {}
            }
        }
        if let Some((path, tag)) = kb_path {
            if t.resource_name.as_ref().is_some_and(|r| *r != path) {
                return Err(Error::at(
                    tag.location,
                    "+kubebuilder:resource:path= conflicts with +resourceName=; keep one",
                ));
            }
            t.resource_name = Some(path);
        }
        if !t.genclient {
            t.methods.clear();
            return Ok(t);
        }
        if let (Some(nv), true) = (
            &no_verbs_tag,
            only_tag.is_some() || readonly.is_some() || skip_tag.is_some(),
        ) {
            return Err(Error::at(
                nv.location.clone(),
                "+genclient:noVerbs conflicts with +genclient:onlyVerbs, :skipVerbs and :readonly",
            ));
        }
        if let (Some(sk), true) = (&skip_tag, only_tag.is_some() || readonly.is_some()) {
            return Err(Error::at(
                sk.location.clone(),
                "+genclient:skipVerbs conflicts with +genclient:onlyVerbs and :readonly; use one of them",
            ));
        }
        if readonly.is_some() {
            t.only
                .get_or_insert_with(BTreeSet::new)
                .extend([Verb::Get, Verb::List, Verb::Watch]);
        }
        Ok(t)
    }

    pub(super) fn verbs(&self, has_status: bool) -> Vec<Verb> {
        if self.no_verbs {
            return Vec::new();
        }
        Verb::ALL
            .into_iter()
            .filter(|v| self.only.as_ref().is_none_or(|o| o.contains(v)))
            .filter(|v| !self.skip.contains(v))
            .filter(|v| has_status || !v.is_status())
            .collect()
    }
}

pub(super) fn parse_verbs(tag: &Tag) -> Result<Vec<Verb>> {
    let value = tag.value.as_deref().unwrap_or_default();
    let mut out = Vec::new();
    for v in value.split(',').map(str::trim) {
        match Verb::parse(v) {
            Some(verb) => out.push(verb),
            None => {
                let known: Vec<&str> = Verb::ALL.iter().map(|v| v.go_name()).collect();
                return Err(Error::at(
                    tag.location.clone(),
                    format!(
                        "+{}: unknown verb {v:?} (known: {})",
                        tag.key,
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

pub(super) fn parse_method(
    tag: &Tag,
    value: &str,
    local_types: &BTreeSet<String>,
) -> Result<ExtMethod> {
    let err = |msg: String| Error::at(tag.location.clone(), format!("+genclient:method: {msg}"));
    let (name, args) = tags::parse_args(tag, value)?;
    let name = name
        .filter(|n| !n.is_empty())
        .ok_or_else(|| err("the first field must be the method name, e.g. GetScale".into()))?;
    if !namer::is_identifier(name) {
        return Err(err(format!("{name:?} is not a valid method name")));
    }
    let mut verb = None;
    let mut subresource = None;
    let mut input = None;
    let mut result = None;
    for (k, v) in args {
        match k {
            "verb" => verb = Some(v),
            "subresource" => {
                if !v
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                {
                    return Err(err(format!("invalid subresource {v:?}")));
                }
                subresource = Some(v.to_string());
            }
            "input" => input = Some(parse_type_ref(v, local_types).map_err(&err)?),
            "result" => result = Some(parse_type_ref(v, local_types).map_err(&err)?),
            other => {
                return Err(err(format!(
                    "unknown key {other:?} (known: verb, subresource, input, result)"
                )));
            }
        }
    }
    let verb = match verb.ok_or_else(|| err(format!("{name}: verb= is required")))? {
        "get" => ExtVerb::Get,
        "list" => ExtVerb::List,
        "create" => ExtVerb::Create,
        "update" => ExtVerb::Update,
        "patch" => ExtVerb::Patch,
        "apply" => ExtVerb::Apply,
        v @ ("updateStatus" | "deleteCollection" | "watch" | "delete" | "applyStatus") => {
            return Err(err(format!(
                "verb {v:?} is not supported by the extension generator"
            )));
        }
        v => {
            return Err(err(format!(
                "unknown verb {v:?} (supported: get, list, create, update, patch, apply)"
            )));
        }
    };
    if input.is_some() && !matches!(verb, ExtVerb::Create | ExtVerb::Update | ExtVerb::Apply) {
        return Err(err(
            "input= is only allowed for create, update and apply".into()
        ));
    }
    Ok(ExtMethod {
        rust_name: namer::snake(name),
        name: name.to_string(),
        verb,
        subresource,
        input: input.unwrap_or(TypeRef::Kind),
        result: result.unwrap_or(TypeRef::Kind),
    })
}

pub(super) fn parse_type_ref(
    v: &str,
    local_types: &BTreeSet<String>,
) -> std::result::Result<TypeRef, String> {
    if v.contains('/') || (v.contains('.') && !v.contains("::")) {
        return Err(format!(
            "{v:?} is a Go import path; name a Rust type such as k8s_openapi::api::autoscaling::v1::Scale"
        ));
    }
    if !v.contains("::") {
        if !local_types.contains(v) {
            return Err(format!("type {v:?} is not declared in this package"));
        }
        return Ok(TypeRef::Local(v.to_string()));
    }
    syn::parse_str::<syn::Path>(v).map_err(|e| format!("{v:?} is not a Rust path: {e}"))?;
    Ok(TypeRef::Path(v.to_string()))
}
