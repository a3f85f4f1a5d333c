//! The crd generator: for every `+genclient` kind, an `apiextensions.k8s.io/v1`
//! CustomResourceDefinition — one per `<plural>.<group>`, with one `versions[]` entry per version
//! folder the kind appears in — written as YAML (`<plural>.<group>.yaml` by default), and
//! `zz_generated_crd.rs` beside the types implementing `kube::CustomResourceExt` with the very
//! same CRD.
//!
//! [`assemble`] builds the CRDs from the model and the package schemas; it is pure. The files:
//! `schema.rs` (a schema as plain data), `walk/` (the walk from the type table to a schema:
//! types, structs, enums), `known.rs` (the schemas of k8s-openapi's types), `markers.rs` (what
//! markers mean to a CRD), `yaml.rs` (the YAML writer). Kind markers (controller-gen's spelling):
//!
//! | marker | effect |
//! | --- | --- |
//! | `+kubebuilder:resource:path=…,singular=…,shortName=a;b,categories=c;d,scope=Cluster\|Namespaced` | names and scope (read by the model, so the client agrees) |
//! | `+kubebuilder:subresource:status` | accepted; the status subresource exists when the kind has a `status` field and no `+genclient:noStatus` |
//! | `+kubebuilder:subresource:scale:specpath=…,statuspath=…[,selectorpath=…]` | the scale subresource |
//! | `+kubebuilder:printcolumn:name=…,type=…,JSONPath=…[,description=…,priority=…,format=…]` | `additionalPrinterColumns` |
//! | `+kubebuilder:storageversion` | the storage version, required when a kind has several versions |
//! | `+kubebuilder:unservedversion` | `served: false` |
//! | `+kubebuilder:deprecatedversion[:warning="…"]` | `deprecated: true` and its warning |
//! | `+kubebuilder:metadata:annotations="k=v"` / `labels="k=v"` (kind or package) | CRD metadata |
//! | `+kube-codegen:webhook:conversion[:serviceName=…,serviceNamespace=…,path=…]` (any version of the kind) | `spec.conversion`: strategy `Webhook`, review version `v1`, the Service `webhook-service` in `system` at `/convert` by default; only on a kind with several versions |
//!
//! Groups under `k8s.io` and `kubernetes.io` need the `api-approved.kubernetes.io` annotation;
//! without a marker it defaults to `"unapproved, experimental-only"`, with a warning.

use kube_codegen_apimachinery::{group, version};
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::error::{Error, Location, Result};
use crate::generated::YAML_MARKER;
use crate::model::types::PackageTypes;
use crate::model::{Model, Package, Scope};

mod known;
pub(crate) mod markers;
pub(crate) mod schema;
mod walk;
pub(crate) mod yaml;

use markers::{KindMarkers, Metadata, kind_markers, metadata_markers};
use schema::Schema;
use walk::SchemaWalker;

/// The annotation kube-apiserver requires on CRDs of protected groups.
pub const APPROVAL_ANNOTATION: &str = group::API_APPROVED_ANNOTATION;

/// The approval value written when no marker gives one.
pub const DEFAULT_APPROVAL: &str = "unapproved, experimental-only";

/// `spec.versions[].subresources.scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scale {
    /// `specReplicasPath`.
    pub spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub status_replicas_path: String,
    /// `labelSelectorPath`.
    pub label_selector_path: Option<String>,
}

/// One of `spec.versions[].additionalPrinterColumns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// `name`.
    pub name: String,
    /// `type`: `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: String,
    /// `jsonPath`.
    pub json_path: String,
    /// `description`.
    pub description: Option<String>,
    /// `priority`.
    pub priority: Option<i32>,
    /// `format`.
    pub format: Option<String>,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdVersion {
    /// The version (`v1`).
    pub name: String,
    /// The group folder of the package the kind was found in (for the Rust impls).
    pub group_dir: String,
    /// `served`.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `deprecated`.
    pub deprecated: bool,
    /// `deprecationWarning`.
    pub deprecation_warning: Option<String>,
    /// `schema.openAPIV3Schema`.
    pub schema: Schema,
    /// `subresources.status`.
    pub status: bool,
    /// `subresources.scale`.
    pub scale: Option<Scale>,
    /// `additionalPrinterColumns`.
    pub columns: Vec<PrinterColumn>,
}

/// `spec.conversion` of a CRD whose versions a webhook converts (strategy `Webhook`,
/// `conversionReviewVersions: [v1]`, a Service reference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversion {
    /// The Service's name (default `webhook-service`, Kubebuilder's).
    pub service_name: String,
    /// The Service's namespace (default `system`, replaced by kustomize or by hand).
    pub service_namespace: String,
    /// The path (default `/convert`, where the manager's webhook server serves conversion).
    pub path: String,
}

impl Default for Conversion {
    fn default() -> Self {
        Conversion {
            service_name: "webhook-service".into(),
            service_namespace: "system".into(),
            path: "/convert".into(),
        }
    }
}

/// A CustomResourceDefinition, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Crd {
    /// `spec.group`.
    pub group: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.names.singular`.
    pub singular: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.listKind`.
    pub list_kind: String,
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.categories`.
    pub categories: Vec<String>,
    /// `spec.scope`.
    pub scope: Scope,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `spec.versions`, highest priority first (`v2`, `v1`, `v1beta1`, `v1alpha1`).
    pub versions: Vec<CrdVersion>,
    /// `spec.conversion` when a webhook converts between the versions (else `None`).
    pub conversion: Option<Conversion>,
    /// Where the kind is declared (in the first version seen).
    pub location: Location,
}

impl Crd {
    /// `metadata.name`: `<plural>.<group>`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// The CRD as JSON (k8s-openapi's `CustomResourceDefinition` shape).
    pub fn to_json(&self) -> Value {
        let mut metadata = Map::new();
        metadata.insert("name".into(), Value::String(self.name()));
        if !self.annotations.is_empty() {
            metadata.insert("annotations".into(), string_map(&self.annotations));
        }
        if !self.labels.is_empty() {
            metadata.insert("labels".into(), string_map(&self.labels));
        }
        let mut names = Map::new();
        names.insert("plural".into(), Value::String(self.plural.clone()));
        names.insert("singular".into(), Value::String(self.singular.clone()));
        names.insert("kind".into(), Value::String(self.kind.clone()));
        names.insert("listKind".into(), Value::String(self.list_kind.clone()));
        if !self.short_names.is_empty() {
            names.insert("shortNames".into(), json!(self.short_names));
        }
        if !self.categories.is_empty() {
            names.insert("categories".into(), json!(self.categories));
        }
        let versions: Vec<Value> = self.versions.iter().map(version_json).collect();
        let mut doc = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": metadata,
            "spec": {
                "group": self.group,
                "names": names,
                "scope": match self.scope {
                    Scope::Namespaced => "Namespaced",
                    Scope::Cluster => "Cluster",
                },
                "versions": versions,
            },
        });
        if let (Some(c), Some(spec)) = (&self.conversion, doc.get_mut("spec")) {
            spec["conversion"] = json!({
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {
                            "name": c.service_name,
                            "namespace": c.service_namespace,
                            "path": c.path,
                        },
                    },
                    "conversionReviewVersions": ["v1"],
                },
            });
        }
        doc
    }

    /// The YAML file: the generated marker, the boilerplate as `#` comments, the document.
    pub fn to_yaml(&self, boilerplate: &str) -> String {
        let mut out = String::from(YAML_MARKER);
        out.push('\n');
        let header = yaml_comment(boilerplate);
        if !header.is_empty() {
            out.push_str("#\n");
            out.push_str(&header);
        }
        out.push_str(&yaml::to_yaml(&self.to_json()));
        out
    }

    /// The file name from a template with `{plural}`, `{group}`, `{singular}` and `{kind}`.
    pub fn file_name(&self, template: &str) -> std::result::Result<String, String> {
        let name = template
            .replace("{plural}", &self.plural)
            .replace("{group}", &self.group)
            .replace("{singular}", &self.singular)
            .replace("{kind}", &self.kind);
        if name.contains(['{', '}']) {
            return Err(format!(
                "CRD file name template {template:?}: unknown placeholder (known: {{plural}}, {{group}}, {{singular}}, {{kind}})"
            ));
        }
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(format!(
                "CRD file name template {template:?} gives {name:?}, which is not a file name"
            ));
        }
        Ok(name)
    }
}

fn string_map(m: &BTreeMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn version_json(v: &CrdVersion) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), Value::String(v.name.clone()));
    out.insert("served".into(), Value::Bool(v.served));
    out.insert("storage".into(), Value::Bool(v.storage));
    if v.deprecated {
        out.insert("deprecated".into(), Value::Bool(true));
    }
    if let Some(w) = &v.deprecation_warning {
        out.insert("deprecationWarning".into(), Value::String(w.clone()));
    }
    out.insert(
        "schema".into(),
        json!({ "openAPIV3Schema": v.schema.to_json() }),
    );
    let mut subs = Map::new();
    if v.status {
        subs.insert("status".into(), json!({}));
    }
    if let Some(s) = &v.scale {
        let mut scale = Map::new();
        scale.insert(
            "specReplicasPath".into(),
            Value::String(s.spec_replicas_path.clone()),
        );
        scale.insert(
            "statusReplicasPath".into(),
            Value::String(s.status_replicas_path.clone()),
        );
        if let Some(l) = &s.label_selector_path {
            scale.insert("labelSelectorPath".into(), Value::String(l.clone()));
        }
        subs.insert("scale".into(), Value::Object(scale));
    }
    if !subs.is_empty() {
        out.insert("subresources".into(), Value::Object(subs));
    }
    if !v.columns.is_empty() {
        let cols = v
            .columns
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("name".into(), Value::String(c.name.clone()));
                m.insert("type".into(), Value::String(c.type_.clone()));
                m.insert("jsonPath".into(), Value::String(c.json_path.clone()));
                if let Some(d) = &c.description {
                    m.insert("description".into(), Value::String(d.clone()));
                }
                if let Some(p) = c.priority {
                    m.insert("priority".into(), Value::from(p));
                }
                if let Some(f) = &c.format {
                    m.insert("format".into(), Value::String(f.clone()));
                }
                Value::Object(m)
            })
            .collect();
        out.insert("additionalPrinterColumns".into(), Value::Array(cols));
    }
    Value::Object(out)
}

/// The boilerplate (a Rust comment header) as `#` comment lines.
fn yaml_comment(boilerplate: &str) -> String {
    let mut out = String::new();
    for line in boilerplate.lines() {
        let t = line.trim_end();
        let s = t.trim_start();
        let text = if let Some(rest) = s.strip_prefix("//") {
            rest.to_string()
        } else if s == "/*" || s == "*/" {
            continue;
        } else if let Some(rest) = s.strip_prefix('*') {
            rest.to_string()
        } else if s.is_empty() {
            String::new()
        } else {
            format!(" {s}")
        };
        out.push('#');
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

struct Draft {
    crd: Crd,
    metadata: Metadata,
    storage_markers: Vec<(String, Location)>,
    conversion_markers: Vec<(Conversion, Location)>,
}

fn union(into: &mut Vec<String>, from: &[String]) {
    for s in from {
        if !into.contains(s) {
            into.push(s.clone());
        }
    }
}

/// What the CRD stage needs of one package's sources: the package's metadata markers and, per
/// kind (in the model's order), its version markers and schema. Computed by the worker that
/// read the package, so the syntax trees can be dropped there; plain data.
#[derive(Debug)]
pub(crate) struct PackageCrds {
    metadata: Result<Metadata>,
    /// One entry per kind until the first that fails.
    kinds: Vec<Result<(KindMarkers, Schema)>>,
}

/// Reads the CRD inputs of one package: `None` when its kinds get no CRD (no kinds, the core
/// group, or a group without a dot, which [`assemble`] reports).
pub(crate) fn package_crds(types: &PackageTypes, pkg: &Package) -> Option<PackageCrds> {
    if local_kinds(pkg).next().is_none() || !pkg.group_name.contains('.') {
        return None;
    }
    let walker = SchemaWalker::new(types);
    let mut metadata = Metadata::default();
    let meta = metadata_markers(&types.package_tags, &mut metadata);
    let mut kinds = Vec::with_capacity(pkg.kinds.len());
    for kind in local_kinds(pkg) {
        let one = kind_markers(kind).and_then(|km| Ok((km, walker.kind_schema(&kind.name)?)));
        let failed = one.is_err();
        kinds.push(one);
        if failed {
            break;
        }
    }
    Some(PackageCrds {
        metadata: meta.map(|()| metadata),
        kinds,
    })
}

/// The kinds of `pkg` that are types of the package: external kinds (re-exports of types
/// defined elsewhere, such as k8s-openapi's) are no custom resources.
fn local_kinds(pkg: &Package) -> impl Iterator<Item = &crate::model::Kind> {
    pkg.kinds.iter().filter(|k| k.external.is_none())
}

/// Assembles the CRDs of every `+genclient` kind in `model` from the packages' [`PackageCrds`]
/// (`inputs[i]` belongs to `model.packages[i]`). Kinds of the legacy core group (no group
/// name) and of groups without a dot cannot be custom resources and are skipped (the latter
/// with a warning). Warnings, as `path:line:col: warning: …` lines, are pushed onto `warnings`:
/// every front door shows them its own way (the CLI logs them, `build.rs` prints
/// `cargo:warning=`).
pub(crate) fn assemble(
    model: &Model,
    inputs: Vec<Option<PackageCrds>>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Crd>> {
    let mut drafts: BTreeMap<(String, String), Draft> = BTreeMap::new();
    for (pkg, input) in model.packages.iter().zip(inputs) {
        if local_kinds(pkg).next().is_none() {
            continue;
        }
        if pkg.group_name.is_empty() {
            tracing::info!(
                package = %pkg.dir.display(),
                "no CRDs for the legacy core group"
            );
            continue;
        }
        if !pkg.group_name.contains('.') {
            warnings.push(format!(
                "{}: warning: no CRDs for group {}: a CustomResourceDefinition's group must be a domain with a dot",
                pkg.dir.display(),
                pkg.group_name
            ));
            continue;
        }
        let Some(input) = input else {
            continue;
        };
        let pkg_meta = input.metadata?;
        for (kind, one) in local_kinds(pkg).zip(input.kinds) {
            let (km, schema) = one?;
            let version = CrdVersion {
                name: pkg.version.clone(),
                group_dir: pkg.group_dir.clone(),
                served: km.served,
                storage: false,
                deprecated: km.deprecated,
                deprecation_warning: km.deprecation_warning,
                schema,
                status: kind.has_status,
                scale: km.scale,
                columns: km.columns,
            };
            let key = (pkg.group_name.clone(), kind.resource.clone());
            let draft = drafts.entry(key).or_insert_with(|| Draft {
                crd: Crd {
                    group: pkg.group_name.clone(),
                    plural: kind.resource.clone(),
                    singular: kind.singular(),
                    kind: kind.name.clone(),
                    list_kind: format!("{}List", kind.name),
                    short_names: Vec::new(),
                    categories: Vec::new(),
                    scope: kind.scope,
                    annotations: BTreeMap::new(),
                    labels: BTreeMap::new(),
                    versions: Vec::new(),
                    conversion: None,
                    location: kind.location.clone(),
                },
                metadata: Metadata::default(),
                storage_markers: Vec::new(),
                conversion_markers: Vec::new(),
            });
            let crd = &mut draft.crd;
            if crd.kind != kind.name {
                return Err(Error::at(
                    kind.location.clone(),
                    format!(
                        "kinds {} and {} both claim the resource {}.{}",
                        crd.kind, kind.name, crd.plural, crd.group
                    ),
                ));
            }
            if crd.scope != kind.scope {
                return Err(Error::at(
                    kind.location.clone(),
                    format!(
                        "{} is namespaced in one version and cluster-scoped in another",
                        kind.name
                    ),
                ));
            }
            if crd.singular != kind.singular() {
                return Err(Error::at(
                    kind.location.clone(),
                    format!(
                        "{} has the singular {:?} here and {:?} in another version",
                        kind.name,
                        kind.singular(),
                        crd.singular
                    ),
                ));
            }
            if crd.versions.iter().any(|v| v.name == pkg.version) {
                return Err(Error::at(
                    kind.location.clone(),
                    format!(
                        "{} is declared twice for version {} of {}",
                        kind.name, pkg.version, crd.group
                    ),
                ));
            }
            union(&mut crd.short_names, &kind.short_names);
            union(&mut crd.categories, &kind.categories);
            crd.versions.push(version);
            if let Some(loc) = km.storage {
                draft.storage_markers.push((pkg.version.clone(), loc));
            }
            if let Some(c) = km.conversion {
                draft.conversion_markers.push(c);
            }
            // Package markers first, then the kind's: the same key twice must agree.
            let mut meta = draft.metadata.clone();
            for (k, (v, loc)) in pkg_meta.annotations.iter() {
                merge_meta(&mut meta.annotations, k, v, loc)?;
            }
            for (k, (v, loc)) in pkg_meta.labels.iter() {
                merge_meta(&mut meta.labels, k, v, loc)?;
            }
            let mut kind_meta = Metadata::default();
            metadata_markers(&kind.tags, &mut kind_meta)?;
            for (k, (v, loc)) in kind_meta.annotations.iter() {
                merge_meta(&mut meta.annotations, k, v, loc)?;
            }
            for (k, (v, loc)) in kind_meta.labels.iter() {
                merge_meta(&mut meta.labels, k, v, loc)?;
            }
            draft.metadata = meta;
        }
    }
    drafts.into_values().map(|d| finish(d, warnings)).collect()
}

fn merge_meta(
    into: &mut BTreeMap<String, (String, Location)>,
    k: &str,
    v: &str,
    loc: &Location,
) -> Result<()> {
    match into.get(k) {
        Some((prev, _)) if prev != v => Err(Error::at(
            loc.clone(),
            format!("{k} is set to {v:?} here but {prev:?} for another version"),
        )),
        _ => {
            into.insert(k.to_string(), (v.to_string(), loc.clone()));
            Ok(())
        }
    }
}

fn finish(mut d: Draft, warnings: &mut Vec<String>) -> Result<Crd> {
    let crd = &mut d.crd;
    crd.versions
        .sort_by(|a, b| version::compare_priority(&a.name, &b.name));
    match (crd.versions.len(), d.storage_markers.as_slice()) {
        (1, _) => crd.versions[0].storage = true,
        (_, [(v, _)]) => {
            for version in &mut crd.versions {
                version.storage = version.name == *v;
            }
        }
        (_, []) => {
            let names: Vec<&str> = crd.versions.iter().map(|v| v.name.as_str()).collect();
            return Err(Error::at(
                crd.location.clone(),
                format!(
                    "{} is served in versions {}: mark exactly one with +kubebuilder:storageversion",
                    crd.kind,
                    names.join(", ")
                ),
            ));
        }
        (_, [_, (v, loc), ..]) => {
            return Err(Error::at(
                loc.clone(),
                format!(
                    "+kubebuilder:storageversion: {} has more than one storage version ({v} too)",
                    crd.kind
                ),
            ));
        }
    }
    match d.conversion_markers.as_slice() {
        [] => {}
        [(_, loc), ..] if crd.versions.len() < 2 => {
            return Err(Error::at(
                loc.clone(),
                format!(
                    "+{}: {} has only the version {}; a conversion webhook converts between versions, so add another version (and mark the stored one +kubebuilder:storageversion)",
                    markers::CONVERSION_MARKER,
                    crd.kind,
                    crd.versions
                        .first()
                        .map(|v| v.name.as_str())
                        .unwrap_or_default()
                ),
            ));
        }
        [(first, first_loc), rest @ ..] => {
            if let Some((_, loc)) = rest.iter().find(|(c, _)| c != first) {
                return Err(Error::at(
                    loc.clone(),
                    format!(
                        "+{}: {} asks for another conversion webhook than at {first_loc}; one CRD has one",
                        markers::CONVERSION_MARKER,
                        crd.kind
                    ),
                ));
            }
            crd.conversion = Some(first.clone());
        }
    }
    if crd.versions.iter().all(|v| !v.served) {
        return Err(Error::at(
            crd.location.clone(),
            format!(
                "{}: every version is +kubebuilder:unservedversion",
                crd.kind
            ),
        ));
    }
    let protected = group::is_protected_group(&crd.group);
    match d.metadata.annotations.get(APPROVAL_ANNOTATION) {
        Some((_, loc)) if !protected => {
            return Err(Error::at(
                loc.clone(),
                format!(
                    "{APPROVAL_ANNOTATION} is only allowed for groups under k8s.io and kubernetes.io; kube-apiserver rejects it on {}",
                    crd.group
                ),
            ));
        }
        Some((v, loc))
            if !(v.starts_with("unapproved")
                || v.starts_with("https://")
                || v.starts_with("http://")) =>
        {
            return Err(Error::at(
                loc.clone(),
                format!(
                    "{APPROVAL_ANNOTATION}={v:?}: must be the URL of the API review or start with \"unapproved\""
                ),
            ));
        }
        Some(_) => {}
        None if protected => {
            warnings.push(format!(
                "{}: warning: {}: group {} is protected by kube-apiserver: writing {APPROVAL_ANNOTATION}: {DEFAULT_APPROVAL:?}; set +kubebuilder:metadata:annotations=\"{APPROVAL_ANNOTATION}=<review URL or unapproved…>\" to choose",
                crd.location,
                crd.name(),
                crd.group
            ));
            d.metadata.annotations.insert(
                APPROVAL_ANNOTATION.into(),
                (DEFAULT_APPROVAL.into(), crd.location.clone()),
            );
        }
        None => {}
    }
    crd.annotations = d
        .metadata
        .annotations
        .into_iter()
        .map(|(k, (v, _))| (k, v))
        .collect();
    crd.labels = d
        .metadata
        .labels
        .into_iter()
        .map(|(k, (v, _))| (k, v))
        .collect();
    Ok(d.crd)
}

/// One rendered CRD file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdFile {
    /// The file name, from the template (`mydemos.crddemo.k8s.io.yaml`).
    pub file_name: String,
    /// The CRD's `metadata.name`.
    pub crd_name: String,
    /// The file's content, header included.
    pub text: String,
}

/// Renders every CRD as a YAML file named by `template`; two CRDs with one file name are an
/// error.
pub fn render(crds: &[Crd], template: &str, boilerplate: &str) -> Result<Vec<CrdFile>> {
    let mut files: Vec<CrdFile> = Vec::with_capacity(crds.len());
    for crd in crds {
        let file_name = crd
            .file_name(template)
            .map_err(|e| Error::at(crd.location.clone(), e))?;
        if let Some(prev) = files.iter().find(|f| f.file_name == file_name) {
            return Err(Error::at(
                crd.location.clone(),
                format!(
                    "CRDs {} and {} would both be written to {file_name}; use a CRD file name template with {{plural}} and {{group}}",
                    prev.crd_name,
                    crd.name()
                ),
            ));
        }
        files.push(CrdFile {
            file_name,
            crd_name: crd.name(),
            text: crd.to_yaml(boilerplate),
        });
    }
    files.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::Tag;

    #[test]
    fn the_group_of_a_written_file() {
        let crd = Crd {
            group: "a.example.com".into(),
            plural: "foos".into(),
            singular: "foo".into(),
            kind: "Foo".into(),
            list_kind: "FooList".into(),
            short_names: Vec::new(),
            categories: Vec::new(),
            scope: Scope::Namespaced,
            annotations: BTreeMap::new(),
            labels: BTreeMap::new(),
            versions: Vec::new(),
            conversion: None,
            location: Location::file("t.rs"),
        };
        let text = crd.to_yaml("// Header.\n");
        assert_eq!(
            crate::write::written_group(&text).as_deref(),
            Some("a.example.com")
        );
        assert_eq!(crate::write::written_group("kind: Namespace\n"), None);
    }

    #[test]
    fn yaml_header_from_rust_boilerplate() {
        assert_eq!(
            yaml_comment("// Copyright A.\n//\n// SPDX: X\n"),
            "# Copyright A.\n#\n# SPDX: X\n"
        );
        assert_eq!(yaml_comment("/*\n * Licensed.\n */\n"), "# Licensed.\n");
    }

    #[test]
    fn columns_and_scale_are_checked() {
        use markers::{parse_column, parse_scale};
        let tag = |text: &str| {
            let (k, v) = text.split_once('=').unwrap();
            Tag {
                key: k.into(),
                value: Some(v.into()),
                location: Location::file("t.rs"),
            }
        };
        let t = tag(
            "kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`,priority=1",
        );
        let c = parse_column(
            &t,
            &crate::tags::markers::args_of(&t, "kubebuilder:printcolumn").unwrap(),
        )
        .unwrap();
        assert_eq!(c.json_path, ".metadata.creationTimestamp");
        assert_eq!(c.priority, Some(1));
        let t = tag("kubebuilder:printcolumn:name=Age,type=time,JSONPath=.x");
        assert!(
            parse_column(
                &t,
                &crate::tags::markers::args_of(&t, "kubebuilder:printcolumn").unwrap()
            )
            .is_err()
        );
        let t = tag(
            "kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas",
        );
        let s = parse_scale(
            &t,
            &crate::tags::markers::args_of(&t, "kubebuilder:subresource:scale").unwrap(),
        )
        .unwrap();
        assert_eq!(s.label_selector_path, None);
        let t = tag(
            "kubebuilder:subresource:scale:specpath=.status.replicas,statuspath=.status.replicas",
        );
        assert!(
            parse_scale(
                &t,
                &crate::tags::markers::args_of(&t, "kubebuilder:subresource:scale").unwrap()
            )
            .is_err()
        );
    }
}
