//! One package's model: its package tags (`+groupName`, `+k8s:deepcopy-gen=package`), the
//! facts of each file ([`FileFacts`], plain data, so that pieces of a large file parsed on
//! several threads can be put together), and the package they make ([`package_of`]): kinds,
//! objects, deep-copy types, external kinds and extension methods, checked.

use kube_codegen_apimachinery::validation;
use std::collections::BTreeSet;
use std::path::PathBuf;

use super::decls::{TypeDecl, collect_decls, collect_externals};
use super::genclient::{TypeTags, parse_method};
use super::{CloneType, ExtMethod, Kind, ModelOptions, ObjectType, Package, Scope, Verb};
use crate::error::{Error, Result};
use crate::namer;
use crate::scan::{PackageSource, SourceFile};
use crate::tags::{self, Tag};

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
