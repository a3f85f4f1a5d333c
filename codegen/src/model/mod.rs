//! Stage 3, model: turn scanned sources and their tags into plain data — packages, kinds, verbs,
//! extension methods — and validate everything Go leaves to the compiler (`docs/generator.md`,
//! "What the model checks").
//!
//! Nothing here holds `syn` types; emitters work from this model alone.

pub(crate) mod markers;
pub(crate) mod types;

use kube_codegen_apimachinery::validation;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use syn::spanned::Spanned;

use crate::error::{Error, Location, Pos, Result};
use crate::namer::{self, PluralExceptions};
use crate::scan::{PackageSource, SourceFile};
use crate::tags::{self, Tag};

/// The Go interface name that makes a type a `runtime.Object` (here: a `kube::Resource`).
pub const RUNTIME_OBJECT: &str = "k8s.io/apimachinery/pkg/runtime.Object";

/// Options that change the model.
#[derive(Debug, Clone, Default)]
pub struct ModelOptions {
    /// `--plural-exceptions`.
    pub plural_exceptions: PluralExceptions,
}

/// Everything the emitters need, for all packages of one run.
#[derive(Debug, Clone)]
pub struct Model {
    /// Packages sorted by group folder, then in the order their versions were given.
    pub packages: Vec<Package>,
}

/// One API package: a version folder of a group.
#[derive(Debug, Clone)]
pub struct Package {
    /// The group folder name (`crddemo`, `example3.io`).
    pub group_dir: String,
    /// The Rust module name of the group folder (`example3_io`): non-identifier characters become
    /// `_`, then snake case. The apis tree must declare the folder under this name (with
    /// `#[path = "example3.io/mod.rs"]` where the folder name is not an identifier).
    pub group_module: String,
    /// The version (`v1`).
    pub version: String,
    /// The API group (`crddemo.k8s.io`; empty for the legacy core group).
    pub group_name: String,
    /// The group's type-name prefix, from `+groupGoName`/`+groupRustName` or the group name.
    pub group_go_name: String,
    /// The package folder.
    pub dir: PathBuf,
    /// Types that need a generated `Clone` (deep copy).
    pub clones: Vec<CloneType>,
    /// `runtime.Object` types that get `k8s_openapi::Resource` and `Metadata` impls.
    pub objects: Vec<ObjectType>,
    /// `+genclient` kinds.
    pub kinds: Vec<Kind>,
    /// Every source file read for this package.
    pub inputs: Vec<PathBuf>,
}

impl Package {
    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group_name.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group_name, self.version)
        }
    }

    /// `CrddemoV1`: the prefix of the group-version client's type name.
    pub fn group_version_camel(&self) -> String {
        format!("{}{}", self.group_go_name, namer::camel(&self.version))
    }

    /// `crddemo_v1`: the clientset's accessor for this group-version.
    pub fn group_version_snake(&self) -> String {
        format!("{}_{}", namer::snake(&self.group_go_name), self.version)
    }

    /// The Rust module name of the version folder.
    pub fn version_module(&self) -> String {
        namer::module_of_dir(&self.version)
    }
}

/// The shape of a type, enough to write a field-by-field `Clone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// `struct S { a, b }` — the field names.
    Named(Vec<String>),
    /// `struct S(A, B)` — the number of fields.
    Tuple(usize),
    /// `struct S;`
    Unit,
    /// `enum E { … }`.
    Enum(Vec<(String, Shape)>),
}

/// A type that gets a generated `Clone` impl.
#[derive(Debug, Clone)]
pub struct CloneType {
    /// The type's name.
    pub name: String,
    /// Lifetime parameters, without the `'`.
    pub lifetimes: Vec<String>,
    /// Type parameters (each gets a `Clone` bound).
    pub type_params: Vec<String>,
    /// The type's fields or variants.
    pub shape: Shape,
}

/// The scope of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Lives in a namespace.
    Namespaced,
    /// Cluster-wide.
    Cluster,
}

/// A type tagged as a `runtime.Object`: it gets `k8s_openapi::Resource`/`Metadata` (and through
/// kube's blanket impl, `kube::Resource`).
#[derive(Debug, Clone)]
pub struct ObjectType {
    /// The type (and kind) name.
    pub name: String,
    /// The REST resource (`mydemos`).
    pub resource: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// The list kind when a `<Name>List` type exists in the package.
    pub list_kind: Option<String>,
}

/// A verb of the generated typed client, in client-gen's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// POST to the collection.
    Create,
    /// PUT the object.
    Update,
    /// PUT the `status` subresource.
    UpdateStatus,
    /// DELETE the object.
    Delete,
    /// DELETE the collection.
    DeleteCollection,
    /// GET the object.
    Get,
    /// GET the collection.
    List,
    /// GET the collection with `watch=true`.
    Watch,
    /// PATCH the object.
    Patch,
    /// Server-side apply to the object.
    Apply,
    /// Server-side apply to the `status` subresource.
    ApplyStatus,
}

impl Verb {
    /// Every verb, in client-gen's interface order.
    pub const ALL: [Verb; 11] = [
        Verb::Create,
        Verb::Update,
        Verb::UpdateStatus,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Patch,
        Verb::Apply,
        Verb::ApplyStatus,
    ];

    /// The Go tag spelling (`updateStatus`).
    pub fn go_name(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::UpdateStatus => "updateStatus",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deleteCollection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Patch => "patch",
            Verb::Apply => "apply",
            Verb::ApplyStatus => "applyStatus",
        }
    }

    /// The Rust method name (`update_status`).
    pub fn rust_name(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::UpdateStatus => "update_status",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "delete_collection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Patch => "patch",
            Verb::Apply => "apply",
            Verb::ApplyStatus => "apply_status",
        }
    }

    /// Parses a Go verb name.
    pub fn parse(s: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.go_name() == s)
    }

    fn is_status(self) -> bool {
        matches!(self, Verb::UpdateStatus | Verb::ApplyStatus)
    }
}

/// The verb of a `+genclient:method` extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtVerb {
    /// GET the object or a subresource.
    Get,
    /// GET the collection or a subresource collection.
    List,
    /// POST to the collection or a subresource.
    Create,
    /// PUT the object or a subresource.
    Update,
    /// PATCH the object or a subresource.
    Patch,
    /// Server-side apply to the object or a subresource.
    Apply,
}

/// A type named by an extension's `input=` or `result=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeRef {
    /// The kind itself (the default).
    Kind,
    /// Another type of the same package, by name.
    Local(String),
    /// A Rust path (`k8s_openapi::api::autoscaling::v1::Scale`).
    Path(String),
}

/// A `+genclient:method=Name,verb=…` extension method.
#[derive(Debug, Clone)]
pub struct ExtMethod {
    /// The method name as tagged (`GetScale`).
    pub name: String,
    /// The Rust method name (`get_scale`).
    pub rust_name: String,
    /// What the method does.
    pub verb: ExtVerb,
    /// The subresource path, if any (`scale`).
    pub subresource: Option<String>,
    /// The body type (create, update, apply).
    pub input: TypeRef,
    /// The returned type.
    pub result: TypeRef,
}

/// A `+genclient` kind.
#[derive(Debug, Clone)]
pub struct Kind {
    /// The type and kind name (`Mydemo`).
    pub name: String,
    /// The plural in type-name case (`Mydemos`).
    pub plural: String,
    /// The REST resource (`mydemos`), from `+resourceName` or the plural.
    pub resource: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// Whether the kind has a status subresource (a `status` field and no `noStatus`).
    pub has_status: bool,
    /// The verbs of the typed client, in client-gen's order.
    pub verbs: Vec<Verb>,
    /// Extension methods, in tag order.
    pub methods: Vec<ExtMethod>,
    /// The `<Name>List` type, when the package has one.
    pub list_type: Option<String>,
    /// `+genclient:noVerbs`.
    pub no_verbs: bool,
    /// Every tag on the type (later generators, such as `crd`, read their own).
    pub tags: Vec<Tag>,
    /// Where the type is declared.
    pub location: Location,
    /// `+kubebuilder:resource:shortName=a;b`.
    pub short_names: Vec<String>,
    /// `+kubebuilder:resource:categories=a;b`.
    pub categories: Vec<String>,
    /// `+kubebuilder:resource:singular=…`, overriding the lower-case kind.
    pub singular_name: Option<String>,
    /// `Some(path)` for an external kind: a re-export (`pub use k8s_openapi::api::core::v1::Pod;`)
    /// or a type alias of a type defined elsewhere, which gets no deep copy, no `runtime.Object`
    /// impls and no CRD; its list type is `kube::api::ObjectList<Kind>`.
    pub external: Option<String>,
}

impl Kind {
    /// Whether the typed client has `verb`.
    pub fn has(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }

    /// The Rust module and file name (`cluster_test_type`).
    pub fn module(&self) -> String {
        namer::snake(&self.name)
    }

    /// The group client's accessor (`cluster_test_types`). A plural that is the kind plus `s`
    /// or `es` keeps the kind's words whole, so an acronym stays one word: `ServiceCIDRs` →
    /// `service_cidrs`, not `service_cid_rs`.
    pub fn accessor(&self) -> String {
        for suffix in ["s", "es"] {
            if self.plural.strip_suffix(suffix) == Some(self.name.as_str()) {
                return format!("{}{suffix}", namer::snake(&self.name));
            }
        }
        namer::snake(&self.plural)
    }

    /// The lower-case singular (`mydemo`), used in NotFound errors and CRD names.
    pub fn singular(&self) -> String {
        self.singular_name
            .clone()
            .unwrap_or_else(|| self.name.to_lowercase())
    }

    /// Whether a lister is generated: `list` and `get` both kept (lister-gen's rule).
    pub fn wants_lister(&self) -> bool {
        self.has(Verb::List) && self.has(Verb::Get)
    }

    /// Whether an informer is generated: not `noVerbs`, `list` and `watch` kept.
    pub fn wants_informer(&self) -> bool {
        !self.no_verbs && self.has(Verb::List) && self.has(Verb::Watch)
    }
}

/// A struct or enum found in a package, with what the model needs of it.
struct TypeDecl {
    name: String,
    location: Location,
    is_pub: bool,
    derives_clone: bool,
    fields: Vec<(String, String)>,
    shape: Shape,
    lifetimes: Vec<String>,
    type_params: Vec<String>,
    unsupported_generics: bool,
    tags: Vec<Tag>,
    /// For a re-export or type alias: the path of the type it names (`k8s_openapi::api::core::v1::Pod`),
    /// or the reason it cannot be a kind (a glob or a list of names).
    external: Option<std::result::Result<String, String>>,
}

/// Checks what spans packages (a group folder's name and Go name agree across its versions,
/// no two groups share a Go name) and orders the packages by group folder, keeping the given
/// order of versions (client-gen's ordering). Returns the model and, for each of its packages,
/// its index in `packages`.
pub(crate) fn finish(packages: Vec<Package>) -> Result<(Model, Vec<usize>)> {
    check_groups(&packages)?;
    let mut order: Vec<&str> = packages.iter().map(|p| p.group_dir.as_str()).collect();
    order.sort();
    order.dedup();
    let mut index: Vec<usize> = (0..packages.len()).collect();
    // A stable sort: versions of a group keep the order they were given in.
    index.sort_by_key(|&i| {
        order
            .binary_search(&packages[i].group_dir.as_str())
            .unwrap_or(usize::MAX)
    });
    let mut slots: Vec<Option<Package>> = packages.into_iter().map(Some).collect();
    let packages = index.iter().filter_map(|&i| slots[i].take()).collect();
    Ok((Model { packages }, index))
}

fn check_groups(packages: &[Package]) -> Result<()> {
    let mut by_dir: BTreeMap<&str, &Package> = BTreeMap::new();
    let mut by_go: BTreeMap<&str, &Package> = BTreeMap::new();
    for p in packages {
        let here = || {
            p.inputs
                .iter()
                .find(|f| f.file_stem().is_some_and(|s| s == "mod"))
                .map_or_else(|| Location::file(&p.dir), Location::file)
        };
        if let Some(prev) = by_dir.get(p.group_dir.as_str()) {
            if prev.group_name != p.group_name {
                return Err(Error::at(
                    here(),
                    format!(
                        "group folder {:?} declares +groupName={} here but +groupName={} in {}",
                        p.group_dir, p.group_name, prev.group_name, prev.version
                    ),
                ));
            }
            if prev.group_go_name != p.group_go_name {
                return Err(Error::at(
                    here(),
                    format!(
                        "group folder {:?} has Go name {} here but {} in {}",
                        p.group_dir, p.group_go_name, prev.group_go_name, prev.version
                    ),
                ));
            }
        }
        by_dir.insert(&p.group_dir, p);
        if let Some(prev) = by_go.get(p.group_go_name.as_str())
            && prev.group_name != p.group_name
        {
            return Err(Error::at(
                here(),
                format!(
                    "groups {} and {} both have the Go name {}; set +groupGoName= on one of them",
                    prev.group_name, p.group_name, p.group_go_name
                ),
            ));
        }
        by_go.insert(&p.group_go_name, p);
    }
    Ok(())
}

struct PackageTags {
    group_name: Option<String>,
    go_name: Option<String>,
    deepcopy_all: bool,
}

fn package_tags(src: &PackageHead) -> Result<PackageTags> {
    let Some((_, mod_tags)) = &src.mod_file else {
        return Err(Error::file(
            &src.dir,
            "package has no mod.rs; package tags such as +groupName= live in its //! lines",
        ));
    };
    let mut out = PackageTags {
        group_name: None,
        go_name: None,
        deepcopy_all: false,
    };
    let mut deepcopy_seen = false;
    for tag in mod_tags.iter().cloned() {
        let value = tag.value.clone();
        match tag.key.as_str() {
            "groupName" => {
                let v = value.unwrap_or_default();
                if out.group_name.as_ref().is_some_and(|g| *g != v) {
                    return Err(Error::at(tag.location, "conflicting +groupName tags"));
                }
                let problems = if v.is_empty() {
                    Vec::new()
                } else {
                    validation::is_dns1123_subdomain(&v)
                };
                if !problems.is_empty() {
                    return Err(Error::at(
                        tag.location,
                        format!(
                            "+groupName={v} is not a valid DNS subdomain: {}",
                            problems.join("; ")
                        ),
                    ));
                }
                out.group_name = Some(v);
            }
            "groupGoName" | "groupRustName" => {
                let v = value.unwrap_or_default();
                if !namer::is_identifier(&v) {
                    return Err(Error::at(
                        tag.location,
                        format!("+{}={v:?} is not a valid identifier", tag.key),
                    ));
                }
                if out.go_name.as_ref().is_some_and(|g| *g != v) {
                    return Err(Error::at(
                        tag.location,
                        "conflicting +groupGoName/+groupRustName tags",
                    ));
                }
                out.go_name = Some(v);
            }
            "k8s:deepcopy-gen" => {
                if deepcopy_seen {
                    return Err(Error::at(tag.location, "+k8s:deepcopy-gen given twice"));
                }
                deepcopy_seen = true;
                let v = value.unwrap_or_default();
                let mode = v.split(',').next().unwrap_or_default().trim();
                out.deepcopy_all = match mode {
                    "package" => true,
                    "false" => false,
                    other => {
                        return Err(Error::at(
                            tag.location,
                            format!(
                                "package-level +k8s:deepcopy-gen={other:?}: expected \"package\" or \"false\""
                            ),
                        ));
                    }
                };
            }
            _ => {}
        }
    }
    Ok(out)
}

/// What the model reads of one source file, or of one piece of a large file: plain data, so
/// that pieces parsed on different threads can be put together ([`FileFacts::append`]).
pub(crate) struct FileFacts {
    /// The type declarations, or the first error among them.
    decls: Result<Vec<TypeDecl>>,
    /// Re-exports and type aliases.
    externals: Vec<TypeDecl>,
    /// Types with a hand-written `impl Clone`.
    manual_clone: BTreeSet<String>,
}

impl FileFacts {
    /// The facts of a parsed file (or piece).
    pub(crate) fn of(file: &SourceFile) -> FileFacts {
        let mut decls = Vec::new();
        let mut manual_clone = BTreeSet::new();
        let decls = collect_decls(file, &mut decls, &mut manual_clone).map(|()| decls);
        let mut externals = Vec::new();
        collect_externals(file, &mut externals);
        FileFacts {
            decls,
            externals,
            manual_clone,
        }
    }

    /// Adds the facts of the piece of the same file that follows this one.
    pub(crate) fn append(&mut self, next: FileFacts) {
        match (&mut self.decls, next.decls) {
            (Ok(d), Ok(n)) => d.extend(n),
            (Ok(_), Err(e)) => self.decls = Err(e),
            (Err(_), _) => {}
        }
        self.externals.extend(next.externals);
        self.manual_clone.extend(next.manual_clone);
    }
}

/// Where a package is and what its `mod.rs` says: what the model needs besides the files' facts.
pub(crate) struct PackageHead {
    /// The group's folder name.
    pub group_dir: String,
    /// The version folder name.
    pub version: String,
    /// The package folder.
    pub dir: PathBuf,
    /// The `mod.rs` and its package tags, if the package has one.
    pub mod_file: Option<(PathBuf, Vec<Tag>)>,
    /// Every source file, in order.
    pub inputs: Vec<PathBuf>,
}

impl PackageHead {
    /// The head of a package read as text.
    pub(crate) fn of_text(text: &crate::scan::PackageText) -> PackageHead {
        PackageHead {
            group_dir: text.group_dir.clone(),
            version: text.version.clone(),
            dir: text.dir.clone(),
            mod_file: text
                .mod_file()
                .map(|(p, t)| (p.to_path_buf(), tags::package_tags(p, t))),
            inputs: text.files.iter().map(|(p, _)| p.clone()).collect(),
        }
    }

    /// The head of a parsed package.
    pub(crate) fn of_source(src: &PackageSource) -> PackageHead {
        PackageHead {
            group_dir: src.group_dir.clone(),
            version: src.version.clone(),
            dir: src.dir.clone(),
            mod_file: src
                .mod_file()
                .map(|m| (m.path.clone(), tags::package_tags(&m.path, &m.text))),
            inputs: src.files.iter().map(|f| f.path.clone()).collect(),
        }
    }
}

/// Builds and validates the model of one scanned package.
pub(crate) fn build_package(src: &PackageSource, opts: &ModelOptions) -> Result<Package> {
    let facts = src.files.iter().map(FileFacts::of).collect();
    package_of(&PackageHead::of_source(src), facts, opts)
}

/// Builds and validates the model of one package from its head and its files' facts (in file
/// order).
pub(crate) fn package_of(
    src: &PackageHead,
    files: Vec<FileFacts>,
    opts: &ModelOptions,
) -> Result<Package> {
    let ptags = package_tags(src)?;
    let mod_path = src
        .mod_file
        .as_ref()
        .map(|(p, _)| p.clone())
        .unwrap_or_else(|| src.dir.clone());
    let Some(group_name) = ptags.group_name else {
        return Err(Error::file(
            &mod_path,
            "missing +groupName= tag (add `//! +groupName=<group>` to mod.rs; an empty value means the legacy core group)",
        ));
    };
    let group_go_name = match ptags.go_name {
        Some(g) => g,
        None => {
            let base = if group_name.is_empty() {
                src.group_dir.as_str()
            } else {
                group_name.split('.').next().unwrap_or_default()
            };
            let g = namer::upper_first(base);
            if !namer::is_identifier(&g) {
                return Err(Error::file(
                    &mod_path,
                    format!(
                        "group {group_name:?} gives the name {g:?}, which is not an identifier; set +groupGoName=<Name>"
                    ),
                ));
            }
            g
        }
    };

    let mut decls: Vec<TypeDecl> = Vec::new();
    let mut manual_clone: BTreeSet<String> = BTreeSet::new();
    for file in files {
        decls.extend(file.decls?);
        decls.extend(file.externals);
        manual_clone.extend(file.manual_clone);
    }
    // Re-exports that are no kinds (`pub use types::*;`) are not declarations of this package.
    decls.retain(|d| d.external.is_none() || d.tags.iter().any(|t| t.key.starts_with("genclient")));
    let mut type_names = BTreeSet::new();
    for d in &decls {
        if !type_names.insert(d.name.clone()) {
            return Err(Error::at(
                d.location.clone(),
                format!("type {} is declared twice in this package", d.name),
            ));
        }
    }

    let mut clones = Vec::new();
    let mut objects = Vec::new();
    let mut kinds: Vec<Kind> = Vec::new();
    for d in &decls {
        let t = TypeTags::parse(d)?;
        if let Some(external) = &d.external {
            if let Some(kind) = external_kind(d, external, &t, &type_names, opts)? {
                if let Some(prev) = kinds.iter().find(|k| k.resource == kind.resource) {
                    return Err(Error::at(
                        d.location.clone(),
                        format!(
                            "kinds {} and {} have the same plural resource {:?}; set +resourceName= or --plural-exceptions",
                            prev.name, d.name, kind.resource
                        ),
                    ));
                }
                kinds.push(kind);
            }
            continue;
        }
        if let Some((_, tag)) = &t.external_status {
            return Err(Error::at(
                tag.location.clone(),
                format!(
                    "+kube-codegen:external:status is for re-exported kinds; {} is a struct of this package, whose `status` field says it",
                    d.name
                ),
            ));
        }
        // Deep copy: package-wide opt-in or type-level =true, minus =false; exported types only.
        let copy = match t.deepcopy {
            Some(v) => v,
            None => ptags.deepcopy_all,
        } && d.is_pub;
        if copy && !d.derives_clone && !manual_clone.contains(&d.name) {
            if d.unsupported_generics {
                return Err(Error::at(
                    d.location.clone(),
                    format!(
                        "cannot generate Clone for {}: const generics and where-clauses are not supported; derive Clone instead",
                        d.name
                    ),
                ));
            }
            clones.push(CloneType {
                name: d.name.clone(),
                lifetimes: d.lifetimes.clone(),
                type_params: d.type_params.clone(),
                shape: d.shape.clone(),
            });
        }
        let scope = if t.non_namespaced {
            Scope::Cluster
        } else {
            Scope::Namespaced
        };
        let plural = namer::plural(&d.name, &opts.plural_exceptions);
        let resource = t
            .resource_name
            .clone()
            .unwrap_or_else(|| plural.to_lowercase());
        let list_name = format!("{}List", d.name);
        let list_type = type_names.contains(&list_name).then_some(list_name);
        let metadata = d.fields.iter().find(|(n, _)| n == "metadata");
        let has_object_meta = metadata.is_some_and(|(_, ty)| ty == "ObjectMeta");
        if t.genclient && !has_object_meta {
            return Err(Error::at(
                d.location.clone(),
                format!(
                    "+genclient type {} needs a `metadata: ObjectMeta` field (k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)",
                    d.name
                ),
            ));
        }
        if t.runtime_object {
            let is_list = metadata.is_some_and(|(_, ty)| ty == "ListMeta");
            if has_object_meta {
                objects.push(ObjectType {
                    name: d.name.clone(),
                    resource: resource.clone(),
                    scope,
                    list_kind: list_type.clone(),
                });
            } else if !is_list {
                return Err(Error::at(
                    d.location.clone(),
                    format!(
                        "{} is tagged as a runtime.Object but has no `metadata: ObjectMeta` (or `metadata: ListMeta` for a list)",
                        d.name
                    ),
                ));
            }
        }
        if !t.genclient {
            continue;
        }
        if !d.is_pub {
            return Err(Error::at(
                d.location.clone(),
                format!("+genclient type {} must be `pub`", d.name),
            ));
        }
        let has_status_field = d.fields.iter().any(|(n, _)| n == "status");
        let has_status = has_status_field && !t.no_status;
        let verbs = t.verbs(has_status);
        if (verbs.contains(&Verb::List) || verbs.contains(&Verb::DeleteCollection))
            && list_type.is_none()
        {
            return Err(Error::at(
                d.location.clone(),
                format!(
                    "+genclient type {} needs a {}List type (with `metadata: ListMeta` and `items: Vec<{}>`) for its list verbs; or restrict them with +genclient:skipVerbs=list,deleteCollection",
                    d.name, d.name, d.name
                ),
            ));
        }
        let methods = kind_methods(&t, &verbs, &type_names)?;
        if let Some(prev) = kinds.iter().find(|k| k.resource == resource) {
            return Err(Error::at(
                d.location.clone(),
                format!(
                    "kinds {} and {} have the same plural resource {resource:?}; set +resourceName= or --plural-exceptions",
                    prev.name, d.name
                ),
            ));
        }
        kinds.push(Kind {
            name: d.name.clone(),
            plural,
            resource,
            scope,
            has_status,
            verbs,
            methods,
            list_type,
            no_verbs: t.no_verbs,
            tags: d.tags.clone(),
            location: d.location.clone(),
            short_names: t.short_names.clone(),
            categories: t.categories.clone(),
            singular_name: t.singular.clone(),
            external: None,
        });
    }
    kinds.sort_by(|a, b| a.name.cmp(&b.name));
    objects.sort_by(|a, b| a.name.cmp(&b.name));
    clones.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Package {
        // snake case first: it would drop the `_` that makes `3d` a module name.
        group_module: namer::module_of_dir(&namer::snake(&src.group_dir)),
        group_dir: src.group_dir.clone(),
        version: src.version.clone(),
        group_name,
        group_go_name,
        dir: src.dir.clone(),
        clones,
        objects,
        kinds,
        inputs: src.inputs.clone(),
    })
}

/// The kind an external declaration (a re-export or type alias) stands for, if it is tagged
/// `+genclient`: verbs and scope from the tags, plural from the namer, the status verbs from
/// `+kube-codegen:external:status`, the list type kube's `ObjectList`.
fn external_kind(
    d: &TypeDecl,
    external: &std::result::Result<String, String>,
    t: &TypeTags,
    type_names: &BTreeSet<String>,
    opts: &ModelOptions,
) -> Result<Option<Kind>> {
    if !t.genclient {
        return Ok(None);
    }
    let path = match external {
        Ok(p) => p.clone(),
        Err(why) => {
            return Err(Error::at(
                d.location.clone(),
                format!("a +genclient re-export must name one type: {why}"),
            ));
        }
    };
    if !d.is_pub {
        return Err(Error::at(
            d.location.clone(),
            format!("+genclient re-export {} must be `pub`", d.name),
        ));
    }
    if t.runtime_object || t.deepcopy == Some(true) {
        return Err(Error::at(
            d.location.clone(),
            format!(
                "{} is re-exported from {path}: it gets no deep copy or runtime.Object impls (its own crate has them); remove the +k8s:deepcopy-gen tags",
                d.name
            ),
        ));
    }
    let Some((status_field, _)) = t.external_status.clone() else {
        return Err(Error::at(
            d.location.clone(),
            format!(
                "+genclient re-export {} needs +kube-codegen:external:status=true or =false: whether {path} has a `status` field (client-gen reads it from the struct, which a re-export does not show)",
                d.name
            ),
        ));
    };
    let scope = if t.non_namespaced {
        Scope::Cluster
    } else {
        Scope::Namespaced
    };
    let plural = namer::plural(&d.name, &opts.plural_exceptions);
    let resource = t
        .resource_name
        .clone()
        .unwrap_or_else(|| plural.to_lowercase());
    let has_status = status_field && !t.no_status;
    let verbs = t.verbs(has_status);
    let methods = kind_methods(t, &verbs, type_names)?;
    Ok(Some(Kind {
        name: d.name.clone(),
        plural,
        resource,
        scope,
        has_status,
        verbs,
        methods,
        list_type: None,
        no_verbs: t.no_verbs,
        tags: d.tags.clone(),
        location: d.location.clone(),
        short_names: t.short_names.clone(),
        categories: t.categories.clone(),
        singular_name: t.singular.clone(),
        external: Some(path),
    }))
}

/// A kind's `+genclient:method` extensions, checked against its verbs and each other.
fn kind_methods(
    t: &TypeTags,
    verbs: &[Verb],
    type_names: &BTreeSet<String>,
) -> Result<Vec<ExtMethod>> {
    let mut methods: Vec<ExtMethod> = Vec::new();
    for (tag, value) in &t.methods {
        let m = parse_method(tag, value, type_names)?;
        let clash = verbs.iter().any(|v| v.rust_name() == m.rust_name)
            || methods.iter().any(|o| o.rust_name == m.rust_name)
            || ["new", "api", "client", "namespace"].contains(&m.rust_name.as_str());
        if clash {
            return Err(Error::at(
                tag.location.clone(),
                format!(
                    "extension method {} clashes with another method named {}",
                    m.name, m.rust_name
                ),
            ));
        }
        methods.push(m);
    }
    Ok(methods)
}

/// The tags of one type, checked.
struct TypeTags {
    genclient: bool,
    non_namespaced: bool,
    no_verbs: bool,
    no_status: bool,
    only: Option<BTreeSet<Verb>>,
    skip: BTreeSet<Verb>,
    methods: Vec<(Tag, String)>,
    deepcopy: Option<bool>,
    runtime_object: bool,
    resource_name: Option<String>,
    short_names: Vec<String>,
    categories: Vec<String>,
    singular: Option<String>,
    /// `+kube-codegen:external:status=true|false`: whether an external kind's type has a
    /// `status` field (what client-gen reads from a Go struct, which a re-export cannot show).
    external_status: Option<(bool, Tag)>,
}

impl TypeTags {
    /// `+kubebuilder:resource:…`: names for the CRD, scope and plural for every generator.
    fn apply_resource_marker(
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

    fn parse(d: &TypeDecl) -> Result<TypeTags> {
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
                k if k.starts_with("kube-codegen:") => {
                    return Err(Error::at(
                        tag.location.clone(),
                        format!(
                            "unknown tag +{k}: the known kube-codegen tag is +kube-codegen:external:status"
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

    fn verbs(&self, has_status: bool) -> Vec<Verb> {
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

fn parse_verbs(tag: &Tag) -> Result<Vec<Verb>> {
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

fn parse_method(tag: &Tag, value: &str, local_types: &BTreeSet<String>) -> Result<ExtMethod> {
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

fn parse_type_ref(v: &str, local_types: &BTreeSet<String>) -> std::result::Result<TypeRef, String> {
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

fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

/// The line of a written visibility; 0 (ignored) for an inherited one, whose span is the call
/// site rather than a place in the file.
fn vis_line(vis: &syn::Visibility) -> usize {
    match vis {
        syn::Visibility::Inherited => 0,
        v => line_of(v.span()),
    }
}

fn collect_decls(
    file: &SourceFile,
    out: &mut Vec<TypeDecl>,
    manual_clone: &mut BTreeSet<String>,
) -> Result<()> {
    for item in &file.ast.items {
        let (attrs, vis, ident, generics, kw_span, shape, fields) = match item {
            syn::Item::Struct(s) => {
                let fields: Vec<(String, String)> = s
                    .fields
                    .iter()
                    .filter_map(|f| Some((f.ident.as_ref()?.to_string(), type_tail(&f.ty))))
                    .collect();
                (
                    &s.attrs,
                    &s.vis,
                    &s.ident,
                    &s.generics,
                    s.struct_token.span,
                    shape_of(&s.fields),
                    fields,
                )
            }
            syn::Item::Enum(e) => {
                let variants = e
                    .variants
                    .iter()
                    .map(|v| (v.ident.to_string(), shape_of(&v.fields)))
                    .collect();
                (
                    &e.attrs,
                    &e.vis,
                    &e.ident,
                    &e.generics,
                    e.enum_token.span,
                    Shape::Enum(variants),
                    Vec::new(),
                )
            }
            syn::Item::Impl(imp) => {
                let is_clone = imp
                    .trait_
                    .as_ref()
                    .and_then(|(_, p, _)| p.segments.last())
                    .is_some_and(|s| s.ident == "Clone");
                if let (true, syn::Type::Path(tp)) = (is_clone, &*imp.self_ty)
                    && let Some(seg) = tp.path.segments.last()
                {
                    manual_clone.insert(seg.ident.to_string());
                }
                continue;
            }
            _ => continue,
        };
        let name_line = line_of(ident.span());
        let first_line = attrs
            .iter()
            .map(|a| line_of(a.pound_token.span))
            .chain([vis_line(vis), line_of(kw_span), name_line])
            .filter(|&l| l > 0)
            .min()
            .unwrap_or(name_line);
        let derives_clone = attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.parse_args_with(
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|paths| {
                    paths
                        .iter()
                        .any(|p| p.segments.last().is_some_and(|s| s.ident == "Clone"))
                })
        });
        let lifetimes = generics
            .lifetimes()
            .map(|l| l.lifetime.ident.to_string())
            .collect();
        let type_params = generics
            .type_params()
            .map(|t| t.ident.to_string())
            .collect();
        let unsupported_generics =
            generics.const_params().next().is_some() || generics.where_clause.is_some();
        out.push(TypeDecl {
            name: ident.to_string(),
            location: Location::new(&file.path, Pos::of_span(ident.span())),
            is_pub: matches!(vis, syn::Visibility::Public(_)),
            derives_clone,
            fields,
            shape,
            lifetimes,
            type_params,
            unsupported_generics,
            tags: tags::item_tags(&file.path, &file.text, &file.lines, first_line, name_line),
            external: None,
        });
    }
    Ok(())
}

/// `(name, path or why not, span of the name)` of a `use` tree that re-exports one type:
/// `a::b::Pod` or `a::b::Pod as Other`.
fn use_target(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
) -> Option<(
    String,
    std::result::Result<String, String>,
    proc_macro2::Span,
)> {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_target(&p.tree, prefix)
        }
        syn::UseTree::Name(n) => {
            prefix.push(n.ident.to_string());
            Some((n.ident.to_string(), Ok(prefix.join("::")), n.ident.span()))
        }
        syn::UseTree::Rename(r) => {
            prefix.push(r.ident.to_string());
            Some((r.rename.to_string(), Ok(prefix.join("::")), r.rename.span()))
        }
        syn::UseTree::Glob(g) => Some((
            "*".into(),
            Err(format!("`{}::*` is a glob", prefix.join("::"))),
            g.star_token.span,
        )),
        syn::UseTree::Group(g) => Some((
            "{…}".into(),
            Err(format!(
                "`{}::{{…}}` names several items",
                prefix.join("::")
            )),
            g.brace_token.span.join(),
        )),
    }
}

/// External declarations: `pub use path::Kind;` and `pub type Kind = path;`, which name a type
/// defined elsewhere (kinds with no struct body here).
fn collect_externals(file: &SourceFile, out: &mut Vec<TypeDecl>) {
    for item in &file.ast.items {
        let (attrs, vis, first, name, target, name_span) = match item {
            syn::Item::Use(u) => {
                let mut prefix = Vec::new();
                if u.leading_colon.is_some() {
                    prefix.push(String::new());
                }
                let Some((name, target, span)) = use_target(&u.tree, &mut prefix) else {
                    continue;
                };
                (&u.attrs, &u.vis, u.use_token.span, name, target, span)
            }
            syn::Item::Type(t) if t.generics.params.is_empty() => {
                let target = match &*t.ty {
                    syn::Type::Path(p) if p.qself.is_none() => {
                        let segments: Vec<String> = p
                            .path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect();
                        let lead = if p.path.leading_colon.is_some() {
                            "::"
                        } else {
                            ""
                        };
                        Ok(format!("{lead}{}", segments.join("::")))
                    }
                    _ => Err("the alias is not a plain type path".to_string()),
                };
                (
                    &t.attrs,
                    &t.vis,
                    t.type_token.span,
                    t.ident.to_string(),
                    target,
                    t.ident.span(),
                )
            }
            _ => continue,
        };
        let name_line = line_of(name_span);
        let first_line = attrs
            .iter()
            .map(|a| line_of(a.pound_token.span))
            .chain([vis_line(vis), line_of(first), name_line])
            .filter(|&l| l > 0)
            .min()
            .unwrap_or(name_line);
        out.push(TypeDecl {
            name,
            location: Location::new(&file.path, Pos::of_span(name_span)),
            is_pub: matches!(vis, syn::Visibility::Public(_)),
            derives_clone: true,
            fields: Vec::new(),
            shape: Shape::Unit,
            lifetimes: Vec::new(),
            type_params: Vec::new(),
            unsupported_generics: false,
            tags: tags::item_tags(&file.path, &file.text, &file.lines, first_line, name_line),
            external: Some(target),
        });
    }
}

fn shape_of(fields: &syn::Fields) -> Shape {
    match fields {
        syn::Fields::Named(n) => Shape::Named(
            n.named
                .iter()
                .filter_map(|f| f.ident.as_ref().map(|i| i.to_string()))
                .collect(),
        ),
        syn::Fields::Unnamed(u) => Shape::Tuple(u.unnamed.len()),
        syn::Fields::Unit => Shape::Unit,
    }
}

/// The last path segment of a field type (`ObjectMeta` for `meta::v1::ObjectMeta`).
fn type_tail(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::parse_source;
    use std::path::Path;

    fn pkg(mod_rs: &str, types: &str) -> Result<Package> {
        let files = vec![
            parse_source(Path::new("apis/g/v1/mod.rs"), mod_rs.into())?,
            parse_source(Path::new("apis/g/v1/types.rs"), types.into())?,
        ];
        let src = PackageSource {
            group_dir: "g".into(),
            version: "v1".into(),
            dir: "apis/g/v1".into(),
            files,
        };
        build_package(&src, &ModelOptions::default())
    }

    const MOD: &str = "//! +groupName=g.example.com\n//! +k8s:deepcopy-gen=package\nmod types;\n";

    fn kind(tags: &str) -> Result<Kind> {
        let src = format!(
            "{tags}\npub struct Foo {{ pub metadata: ObjectMeta, pub status: Option<S> }}\npub struct FooList {{ pub metadata: ListMeta, pub items: Vec<Foo> }}\n"
        );
        pkg(MOD, &src).map(|p| p.kinds[0].clone())
    }

    fn verbs(k: &Kind) -> Vec<&'static str> {
        k.verbs.iter().map(|v| v.go_name()).collect()
    }

    #[test]
    fn verb_filters() {
        assert_eq!(kind("// +genclient").unwrap().verbs.len(), 11);
        assert_eq!(
            verbs(&kind("// +genclient\n// +genclient:noStatus").unwrap()),
            [
                "create",
                "update",
                "delete",
                "deleteCollection",
                "get",
                "list",
                "watch",
                "patch",
                "apply"
            ]
        );
        assert_eq!(
            verbs(&kind("// +genclient\n// +genclient:readonly").unwrap()),
            ["get", "list", "watch"]
        );
        assert_eq!(
            verbs(&kind("// +genclient\n// +genclient:onlyVerbs=create,get").unwrap()),
            ["create", "get"]
        );
        assert_eq!(
            verbs(
                &kind(
                    "// +genclient\n// +genclient:skipVerbs=watch,apply,applyStatus,updateStatus"
                )
                .unwrap()
            ),
            [
                "create",
                "update",
                "delete",
                "deleteCollection",
                "get",
                "list",
                "patch"
            ]
        );
        assert!(
            kind("// +genclient\n// +genclient:noVerbs")
                .unwrap()
                .verbs
                .is_empty()
        );
    }

    #[test]
    fn rejects_bad_tags() {
        let e =
            kind("// +genclient\n// +genclient:noVerbs\n// +genclient:onlyVerbs=get").unwrap_err();
        assert!(e.to_string().contains("conflicts"), "{e}");
        let e = kind("// +genclient\n// +genclient:bogus").unwrap_err();
        assert!(
            e.to_string().contains("unknown tag +genclient:bogus"),
            "{e}"
        );
        let e = kind("// +genclient\n// +genclient:onlyVerbs=get,fetch").unwrap_err();
        assert!(e.to_string().contains("unknown verb \"fetch\""), "{e}");
        let e = kind("// +genclient=true").unwrap_err();
        assert!(e.to_string().contains("takes no value"), "{e}");
        let e = kind("// +genclient\n// +genclient:method=Evict,verb=delete").unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
        let e = kind("// +genclient\n// +genclient:method=GetX,verb=get,input=Foo").unwrap_err();
        assert!(e.to_string().contains("input= is only allowed"), "{e}");
        let e = kind("// +genclient\n// +genclient:method=GetX,verb=get,result=k8s.io/api/autoscaling/v1.Scale").unwrap_err();
        assert!(e.to_string().contains("Go import path"), "{e}");
        assert!(
            e.to_string().starts_with("apis/g/v1/types.rs:2:4: error:"),
            "{e}"
        );
    }

    #[test]
    fn extension_methods() {
        let k = kind("// +genclient\n// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s_openapi::api::autoscaling::v1::Scale\n// +genclient:method=UpdateFoo,verb=update,input=Foo").unwrap();
        assert_eq!(k.methods.len(), 2);
        assert_eq!(k.methods[0].rust_name, "get_scale");
        assert_eq!(k.methods[0].subresource.as_deref(), Some("scale"));
        assert_eq!(
            k.methods[0].result,
            TypeRef::Path("k8s_openapi::api::autoscaling::v1::Scale".into())
        );
        assert_eq!(k.methods[1].input, TypeRef::Local("Foo".into()));
    }

    #[test]
    fn package_level_errors() {
        let e = pkg("mod types;\n", "pub struct A;").unwrap_err();
        assert!(e.to_string().contains("missing +groupName"), "{e}");
        let core = pkg("//! +groupName=\n", "pub struct A;").unwrap();
        assert_eq!(core.group_name, "");
        assert_eq!(core.group_go_name, "G");
        assert_eq!(core.api_version(), "v1");
        let e = pkg("//! +groupName=ex-group.io\n", "pub struct A;").unwrap_err();
        assert!(e.to_string().contains("+groupGoName"), "{e}");
        let ok = pkg(
            "//! +groupName=ex-group.io\n//! +groupGoName=ExGroup\n",
            "pub struct A;",
        )
        .unwrap();
        assert_eq!(ok.group_version_snake(), "ex_group_v1");
        // +groupRustName= is an alias of +groupGoName=; the two must agree.
        let rust = pkg(
            "//! +groupName=ex-group.io\n//! +groupRustName=ExGroup\n",
            "pub struct A;",
        )
        .unwrap();
        assert_eq!(rust.group_go_name, "ExGroup");
        assert_eq!(rust.group_version_snake(), "ex_group_v1");
        let e = pkg(
            "//! +groupName=ex-group.io\n//! +groupGoName=ExGroup\n//! +groupRustName=Other\n",
            "pub struct A;",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("conflicting +groupGoName/+groupRustName"),
            "{e}"
        );
        let e = pkg(
            "//! +groupName=a.io\n//! +groupRustName=not-ident\n",
            "pub struct A;",
        )
        .unwrap_err();
        assert!(e.to_string().contains("not-ident"), "{e}");
    }

    #[test]
    fn kind_requirements() {
        let e = pkg(MOD, "// +genclient\npub struct Foo { pub spec: u8 }").unwrap_err();
        assert!(e.to_string().contains("metadata: ObjectMeta"), "{e}");
        let e = pkg(
            MOD,
            "// +genclient\npub struct Foo { pub metadata: ObjectMeta }",
        )
        .unwrap_err();
        assert!(e.to_string().contains("FooList"), "{e}");
        let e = pkg(
            MOD,
            "// +genclient\n// +genclient:onlyVerbs=get\npub struct Foo { pub metadata: ObjectMeta }\n// +genclient\n// +genclient:onlyVerbs=get\n// +resourceName=foos\npub struct Bar { pub metadata: ObjectMeta }",
        )
        .unwrap_err();
        assert!(e.to_string().contains("same plural"), "{e}");
    }

    #[test]
    fn private_items_do_not_take_tags_from_the_top_of_the_file() {
        let p = pkg(
            MOD,
            "// +genclient\n// +genclient:onlyVerbs=get\npub struct Foo { pub metadata: ObjectMeta }\nstruct Private;\n",
        )
        .unwrap();
        assert_eq!(p.kinds.len(), 1);
    }

    #[test]
    fn deepcopy_selection() {
        let p = pkg(
            MOD,
            "#[derive(Clone)] pub struct A;\npub struct B { pub x: u8 }\n// +k8s:deepcopy-gen=false\npub struct C;\nstruct D;\npub struct E<'a, T>(&'a T);\nimpl Clone for F { fn clone(&self) -> F { F } }\npub struct F;\n",
        )
        .unwrap();
        let names: Vec<&str> = p.clones.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["B", "E"]);
        assert_eq!(p.clones[1].lifetimes, ["a"]);
        assert_eq!(p.clones[1].type_params, ["T"]);
    }

    #[test]
    fn deepcopy_opt_in_without_the_package_tag() {
        let p = pkg(
            "//! +groupName=g.io\n",
            "// +k8s:deepcopy-gen=true\npub struct In { pub x: u8 }\npub struct Out { pub x: u8 }\n",
        )
        .unwrap();
        let names: Vec<&str> = p.clones.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["In"], "only the opted-in type gets a deep copy");
    }

    #[test]
    fn re_exports_and_aliases_are_external_kinds() {
        let p = pkg(
            "//! +groupName=\npub use types::*;\nmod types;\n",
            "// +genclient\n// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s_openapi::api::autoscaling::v1::Scale\n// +kube-codegen:external:status=true\npub use k8s_openapi::api::core::v1::ReplicationController;\n\n// +genclient\n// +genclient:nonNamespaced\n// +genclient:skipVerbs=deleteCollection\n// +kube-codegen:external:status=false\npub type Thing = ::other::v1::Thing;\n\n// not a kind: no tags\npub use k8s_openapi::api::core::v1::Pod;\npub struct Local;\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            p.clones.iter().all(|c| c.name == "Local"),
            "no deep copy of re-exports"
        );
        assert!(p.objects.is_empty());
        let rc = &p.kinds[0];
        assert_eq!(rc.name, "ReplicationController");
        assert_eq!(
            rc.external.as_deref(),
            Some("k8s_openapi::api::core::v1::ReplicationController")
        );
        assert_eq!(rc.resource, "replicationcontrollers");
        assert!(rc.has_status && rc.has(Verb::UpdateStatus) && rc.has(Verb::List));
        assert_eq!(rc.list_type, None, "the list type is kube's ObjectList");
        assert_eq!(rc.methods[0].rust_name, "get_scale");
        let thing = &p.kinds[1];
        assert_eq!(thing.external.as_deref(), Some("::other::v1::Thing"));
        assert_eq!(thing.scope, Scope::Cluster);
        assert!(!thing.has_status && !thing.has(Verb::DeleteCollection));
    }

    #[test]
    fn external_kinds_are_checked() {
        let err = |types: &str| {
            pkg("//! +groupName=\nmod types;\n", types)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let e = err("// +genclient\npub use k8s_openapi::api::core::v1::Pod;\n");
        assert!(
            e.contains("apis/g/v1/types.rs:2:")
                && e.contains("needs +kube-codegen:external:status=true or =false"),
            "{e}"
        );
        let e = err(
            "// +genclient\n// +kube-codegen:external:status=true\npub use k8s_openapi::api::core::v1::*;\n",
        );
        assert!(
            e.contains("must name one type: `k8s_openapi::api::core::v1::*` is a glob"),
            "{e}"
        );
        let e = err(
            "// +genclient\n// +kube-codegen:external:status=true\npub use k8s_openapi::api::core::v1::{Pod, Node};\n",
        );
        assert!(e.contains("names several items"), "{e}");
        let e = err("// +genclient\n// +kube-codegen:external:status=maybe\npub use a::Pod;\n");
        assert!(e.contains("expected true or false"), "{e}");
        let e = err(
            "// +genclient\n// +kube-codegen:external:status=true\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\npub use a::Pod;\n",
        );
        assert!(
            e.contains("gets no deep copy or runtime.Object impls"),
            "{e}"
        );
        let e = err("// +genclient\n// +kube-codegen:external:status=true\nuse a::Pod;\n");
        assert!(e.contains("must be `pub`"), "{e}");
        let e = err(
            "// +genclient\n// +kube-codegen:external:status=true\npub struct Foo { pub metadata: ObjectMeta }\n",
        );
        assert!(e.contains("is for re-exported kinds"), "{e}");
        let e = err("// +genclient\n// +kube-codegen:external:state=true\npub use a::Pod;\n");
        assert!(
            e.contains("unknown tag +kube-codegen:external:state"),
            "{e}"
        );
        let e = err(
            "// +genclient\n// +kube-codegen:external:status=true\npub use a::Pod;\n// +genclient\n// +kube-codegen:external:status=true\npub type Pod2 = b::Pod;\n// +resourceName=pods\n",
        );
        assert!(e.is_empty(), "{e}");
        let e = err(
            "// +genclient\n// +kube-codegen:external:status=true\npub use a::Pod;\n\n// +genclient\n// +resourceName=pods\n// +kube-codegen:external:status=true\npub type Other = b::Pod;\n",
        );
        assert!(e.contains("have the same plural resource \"pods\""), "{e}");
    }
}
