//! Stage 3, model: turn scanned sources and their tags into plain data — packages, kinds, verbs,
//! extension methods — and validate everything Go leaves to the compiler (`docs/generator.md`,
//! "What the model checks").
//!
//! Nothing here holds `syn` types; emitters work from this model alone. This file holds the
//! model's types and the checks across packages ([`finish`]); `package.rs` builds one package
//! from its files' facts, `genclient.rs` reads a type's `+genclient` tags, `decls.rs` is the only
//! part that reads `syn` items, `markers.rs` reads `+kubebuilder:resource`, and `types.rs` is the
//! type table.

mod decls;
mod genclient;
pub(crate) mod markers;
mod package;
pub(crate) mod types;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{Error, Location, Result};
use crate::namer::{self, PluralExceptions};
use crate::tags::Tag;

pub(crate) use package::{FileFacts, PackageHead, build_package, package_of};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{PackageSource, parse_source};
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
