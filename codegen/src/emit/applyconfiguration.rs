//! The apply-configuration generator (applyconfiguration-gen): for every kind that keeps
//! `apply` or `applyStatus` and every package struct it reaches,
//! `applyconfiguration::<group>::<version>::<Type>ApplyConfiguration` — every field optional and
//! serialized only when set, `with_*` setters (lists append, maps merge) — and for kinds a
//! constructor that sets apiVersion and kind, the runtime's `ApplyConfiguration` impl, and
//! `extract_<kind>` / `extract_<kind>_status` / `extract_<kind>_from`, which read what one field
//! manager owns from `metadata.managedFields` (no OpenAPI document needed). The analysis is the
//! `applyconfig` stage.

use super::Ctx;
use super::text::{self, Src, Ty};
use crate::applyconfig::{AcField, AcKind, AcPackage, AcTy, AcType, PathRoot};
use crate::emit::Module;
use crate::model::Package;
use crate::namer::{ident, snake};

/// The folder (and module) of the generated tree.
pub(crate) const DIR: &str = "applyconfiguration";

fn configs<'a>(ctx: &'a Ctx<'_>, pkg: &Package) -> Option<&'a AcPackage> {
    ctx.apply_configs
        .get(&(pkg.group_dir.clone(), pkg.version.clone()))
        .filter(|p| !p.types.is_empty())
}

/// The root and group modules.
pub(crate) fn global(ctx: &Ctx<'_>) -> Vec<Module> {
    let mut out = vec![Module::client(
        &[DIR],
        "Apply configurations for server-side apply: one per kind and per type it reaches, each \
         serializing only the fields that were set, and `extract_<kind>` functions that read \
         what a field manager owns.",
        String::new(),
    )
    .behind(ctx.apply_feature.clone())];
    let mut groups_seen: Vec<&str> = Vec::new();
    let needed = if ctx.group_features {
        needed_by(ctx)
    } else {
        Default::default()
    };
    for pkg in &ctx.model.packages {
        if configs(ctx, pkg).is_none() || groups_seen.contains(&pkg.group_module.as_str()) {
            continue;
        }
        groups_seen.push(&pkg.group_module);
        out.push(
            Module::client(
                &[DIR, &pkg.group_module],
                format!(
                    "Apply configurations of the `{}` API group.",
                    super::listers::group_label(pkg)
                ),
                String::new(),
            )
            .behind_any(needed.get(&pkg.group_module).cloned().unwrap_or_default()),
        );
    }
    out
}

/// The feature a kind's `ApplyConfiguration` impl and `extract_*` functions are behind, when
/// its group's configurations are also compiled for other groups (core's with `apps`, for the
/// Pod template and a StatefulSet's PersistentVolumeClaim templates): those name the kind's
/// type, which exists only with the kind's own group; the configuration struct itself does not.
fn kind_gate(ctx: &Ctx<'_>, pkg: &Package) -> Option<String> {
    if !ctx.group_features {
        return None;
    }
    let users = needed_by(ctx).remove(&pkg.group_module).unwrap_or_default();
    users
        .iter()
        .any(|g| *g != pkg.group_module)
        .then(|| pkg.group_module.clone())
}

/// The version module of `pkg` and one module per type.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let Some(acs) = configs(ctx, pkg) else {
        return Vec::new();
    };
    let gate = kind_gate(ctx, pkg);
    // (module, items always there, the kind's items: behind `gate` when there is one)
    let entries: Vec<(String, Vec<String>, Vec<String>)> = acs
        .types
        .iter()
        .map(|t| {
            let ac = format!("{}ApplyConfiguration", t.name);
            let kind_items = match &t.kind {
                Some(k) => {
                    let s = snake(&t.name);
                    let mut items = vec![format!("extract_{s}"), format!("extract_{s}_from")];
                    if k.has_status {
                        items.push(format!("extract_{s}_status"));
                    }
                    items
                }
                None => Vec::new(),
            };
            (ident(&snake(&t.name)).to_string(), vec![ac], kind_items)
        })
        .collect();
    let mut src = Src::new();
    match &gate {
        None => src.reexports(
            entries
                .into_iter()
                .map(|(m, mut items, kind_items)| {
                    items.extend(kind_items);
                    (m, items)
                })
                .collect(),
        ),
        Some(feature) => {
            let gated: Vec<(String, Vec<String>)> = entries
                .iter()
                .filter(|(_, _, k)| !k.is_empty())
                .map(|(m, _, k)| (m.clone(), k.clone()))
                .collect();
            src.reexports(
                entries
                    .into_iter()
                    .map(|(m, items, _)| (m, items))
                    .collect(),
            );
            for entry in gated {
                src.line(&format!("#[cfg(feature = \"{feature}\")]"));
                src.reexports(vec![entry]);
            }
        }
    }
    let mut out = vec![Module::client(
        &[DIR, &pkg.group_module, &pkg.version_module()],
        format!("Apply configurations of the `{}` API.", pkg.api_version()),
        src.finish(),
    )];
    // The kinds' own modules are emitted with the kinds (`kind`), spread over the workers.
    for t in acs.types.iter().filter(|t| t.kind.is_none()) {
        out.push(type_module(ctx, pkg, t));
    }
    out
}

/// The apply configuration module of `kind`, when it has one.
pub(crate) fn kind(ctx: &Ctx<'_>, pkg: &Package, kind: &crate::model::Kind) -> Vec<Module> {
    configs(ctx, pkg)
        .and_then(|acs| {
            acs.types
                .iter()
                .find(|t| t.kind.is_some() && t.name == kind.name)
        })
        .map(|t| type_module(ctx, pkg, t))
        .into_iter()
        .collect()
}

/// Where the generated code finds things, as text.
struct Names<'c> {
    /// The runtime crate (`::kube_codegen_runtime`).
    rt: String,
    /// The API package (`crate::pkg::apis::crddemo::v1`).
    package: String,
    ctx: &'c Ctx<'c>,
}

impl<'c> Names<'c> {
    fn new(ctx: &'c Ctx<'c>, pkg: &Package) -> Self {
        Names {
            rt: ctx.rt(),
            package: ctx.package_path(pkg),
            ctx,
        }
    }
}

/// The package of the run and the struct that `crate::<segments>` names, when that struct has
/// an apply configuration: a type of another package (`crate::apis::core::v1::PodTemplateSpec`
/// in `apps/v1`), whose configuration is used, as client-go's apply configurations use each
/// other's across packages.
fn foreign<'a>(ctx: &'a Ctx<'_>, segments: &[String]) -> Option<(&'a Package, &'a AcType)> {
    let (name, module) = segments.split_last()?;
    let module = format!("crate::{}", module.join("::"));
    let pkg = ctx
        .model
        .packages
        .iter()
        .find(|p| ctx.package_path(p) == module)?;
    let t = configs(ctx, pkg)?.types.iter().find(|t| t.name == *name)?;
    Some((pkg, t))
}

/// The groups whose apply configurations use configurations of another group, directly or
/// through others: for each group module, every group module that needs it (itself included).
/// A group's configurations are compiled when any of those groups' features is on, so that a
/// program using only `core` compiles `core`'s alone, and one using `apps` gets `core`'s too.
fn needed_by(ctx: &Ctx<'_>) -> std::collections::BTreeMap<String, Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    fn refs<'a>(ctx: &'a Ctx<'_>, t: &AcTy, out: &mut BTreeSet<&'a str>) {
        match t {
            AcTy::Path {
                root: PathRoot::Crate,
                segments,
                ..
            } => {
                if let Some((p, _)) = foreign(ctx, segments) {
                    out.insert(&p.group_module);
                }
            }
            AcTy::Path { args, .. } => args.iter().for_each(|a| refs(ctx, a, out)),
            AcTy::List(e) | AcTy::Boxed(e) | AcTy::Optional(e) => refs(ctx, e, out),
            AcTy::Map(k, v) => {
                refs(ctx, k, out);
                refs(ctx, v, out);
            }
            AcTy::Local(_) | AcTy::Meta(_) | AcTy::External(_) => {}
        }
    }
    // group → the groups its configurations use.
    let mut uses: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for pkg in &ctx.model.packages {
        let Some(acs) = configs(ctx, pkg) else {
            continue;
        };
        let set = uses.entry(&pkg.group_module).or_default();
        for f in acs.types.iter().flat_map(|t| &t.fields) {
            refs(ctx, &f.ty, set);
        }
    }
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &user in uses.keys() {
        // Everything `user` reaches needs `user`'s feature to count.
        let mut seen = BTreeSet::from([user]);
        let mut todo = vec![user];
        while let Some(g) = todo.pop() {
            for &next in uses.get(g).into_iter().flatten() {
                if seen.insert(next) {
                    todo.push(next);
                }
            }
        }
        for g in seen {
            out.entry(g.to_string()).or_default().push(user.to_string());
        }
    }
    out
}

/// The Rust type of a configuration element.
fn ty(n: &Names, t: &AcTy) -> Ty {
    if let AcTy::Path {
        root: PathRoot::Crate,
        segments,
        ..
    } = t
        && let Some((pkg, t)) = foreign(n.ctx, segments)
    {
        return Ty::new(n.ctx.client_path(&[
            DIR,
            &pkg.group_module,
            &pkg.version_module(),
            &format!("{}ApplyConfiguration", t.name),
        ]));
    }
    match t {
        AcTy::Path {
            root,
            segments,
            args,
        } => {
            let mut head = match root {
                PathRoot::Prelude => String::new(),
                PathRoot::Package => format!("{}::", n.package),
                PathRoot::Runtime => format!("{}::", n.rt),
                PathRoot::Crate => "crate::".to_string(),
                PathRoot::Global => "::".to_string(),
            };
            let segs: Vec<String> = segments.iter().map(|s| ident(s).to_string()).collect();
            head.push_str(&segs.join("::"));
            Ty::generic(head, args.iter().map(|a| ty(n, a)).collect())
        }
        AcTy::Local(name) => Ty::new(format!("super::{name}ApplyConfiguration")),
        AcTy::Meta(m) => Ty::new(format!("{}::apply::meta::{m}ApplyConfiguration", n.rt)),
        AcTy::External(path) => Ty::new(path.clone()),
        AcTy::List(e) => Ty::generic("::std::vec::Vec", vec![ty(n, e)]),
        AcTy::Map(k, v) => Ty::generic("::std::collections::BTreeMap", vec![ty(n, k), ty(n, v)]),
        AcTy::Boxed(e) => Ty::generic("::std::boxed::Box", vec![ty(n, e)]),
        AcTy::Optional(e) => Ty::generic("::core::option::Option", vec![ty(n, e)]),
    }
}

/// `::core::option::Option<t>`.
fn option(t: Ty) -> Ty {
    Ty::generic("::core::option::Option", vec![t])
}

/// `::core::convert::Into<t>` after `prefix` (`value: impl `, `I: `).
fn into(prefix: &str, t: Ty) -> Ty {
    Ty::generic("::core::convert::Into", vec![t]).prefixed(prefix)
}

/// The struct field of `f`.
fn field_decl(src: &mut Src, n: &Names, f: &AcField) {
    let id = ident(&f.rust).to_string();
    match &f.doc {
        Some(d) => src.doc(d),
        // The API documents every field; a crate that denies missing docs still compiles.
        None => src.doc(&format!("The `{}` field.", f.json)),
    }
    let t = ty(n, &f.ty);
    if f.flatten {
        src.attr_list("serde", &["flatten", "default"]);
        src.field(&format!("pub {id}"), &t);
    } else {
        let rename = format!("rename = \"{}\"", f.json.escape_default());
        src.attr_list(
            "serde",
            &[
                &rename,
                "default",
                "skip_serializing_if = \"Option::is_none\"",
            ],
        );
        src.field(&format!("pub {id}"), &option(t));
    }
}

/// The setter of `f`: lists append, maps merge, anything else is replaced.
fn setter(src: &mut Src, n: &Names, f: &AcField) {
    let id = ident(&f.rust).to_string();
    let head = format!("pub fn {}", ident(&format!("with_{}", f.rust)));
    let json = &f.json;
    let target = format!(".{id}");
    let this = Ty::new("mut self");
    let ret = Ty::new("Self");
    let lhs = format!("self.{id}");
    // A builder method: its doc, `#[must_use]`, then the body that sets the field and returns
    // `self`.
    let mut builder = |doc: &str, generics: &[Ty], value: Ty, set: &dyn Fn(&mut Src)| {
        src.doc(doc);
        src.line("#[must_use]");
        src.func(&head, generics, &[this.clone(), value], Some(&ret), |s| {
            set(s);
            s.line("self");
        });
    };
    match &f.ty {
        AcTy::List(e) => {
            let item = Ty::generic("::core::iter::IntoIterator", vec![Ty::new("Item = I")]);
            let mut links = vec![target.as_str()];
            if !f.flatten {
                links.push(".get_or_insert_with(::std::vec::Vec::new)");
            }
            links.push(".extend(values.into_iter().map(::core::convert::Into::into))");
            builder(
                &format!("Appends `values` to `{json}` (creating the list when unset)."),
                &[into("I: ", ty(n, e))],
                item.prefixed("values: impl "),
                &|s| s.chain("self", &links, ";"),
            );
        }
        AcTy::Map(k, v) => {
            let item = Ty::generic("::core::iter::IntoIterator", vec![Ty::new("Item = (K, V)")]);
            let mut links = vec![target.as_str()];
            if !f.flatten {
                links.push(".get_or_insert_with(::std::collections::BTreeMap::new)");
            }
            links.push(".extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())))");
            builder(
                &format!("Merges `entries` into `{json}` (a later value for a key wins)."),
                &[into("K: ", ty(n, k)), into("V: ", ty(n, v))],
                item.prefixed("entries: impl "),
                &|s| s.chain("self", &links, ";"),
            );
        }
        AcTy::Boxed(inner) => builder(
            &format!("Sets `{json}`; the last call wins."),
            &[],
            ty(n, inner).prefixed("value: "),
            &|s| {
                s.assign(
                    &lhs,
                    "::core::option::Option::Some(::std::boxed::Box::new(value))",
                )
            },
        ),
        AcTy::Local(_) | AcTy::Meta(_) | AcTy::External(_) => {
            let rhs = if f.flatten {
                "value"
            } else {
                "::core::option::Option::Some(value)"
            };
            builder(
                &format!("Sets `{json}`; the last call wins."),
                &[],
                ty(n, &f.ty).prefixed("value: "),
                &|s| s.assign(&lhs, rhs),
            );
        }
        AcTy::Path { .. } | AcTy::Optional(_) => builder(
            &format!("Sets `{json}`; the last call wins."),
            &[],
            into("value: impl ", ty(n, &f.ty)),
            &|s| s.assign(&lhs, "::core::option::Option::Some(value.into())"),
        ),
    }
}

/// ObjectMeta's setters a kind's configuration gets (`with_name` … `with_finalizers`): the
/// runtime's `object_meta_setters!` writes them, delegating to the kind's `metadata`.
const META_SETTERS: &[&str] = &[
    "with_name",
    "with_generate_name",
    "with_namespace",
    "with_uid",
    "with_resource_version",
    "with_generation",
    "with_deletion_grace_period_seconds",
    "with_creation_timestamp",
    "with_deletion_timestamp",
    "with_labels",
    "with_annotations",
    "with_owner_references",
    "with_finalizers",
];

/// The `object_meta_setters!` call for a kind: every ObjectMeta setter whose name no field
/// setter of the kind already takes, a few per line.
fn meta_setters(src: &mut Src, n: &Names, k: &AcKind, taken: &[String]) {
    src.scope(&format!("{}::object_meta_setters!(", n.rt), ");", |src| {
        let mut line = format!("{}:", ident(&k.metadata_field));
        for s in META_SETTERS
            .iter()
            .filter(|s| !taken.iter().any(|t| t == *s))
        {
            if src.col() + line.len() + 1 + s.len() > text::MAX_WIDTH {
                src.line(&line);
                line.clear();
            } else {
                line.push(' ');
            }
            line.push_str(s);
        }
        src.line(&line);
    });
}

/// The module of one type's configuration, written as text (see [`text`]).
fn type_module(ctx: &Ctx<'_>, pkg: &Package, t: &AcType) -> Module {
    let n = Names::new(ctx, pkg);
    let ac = format!("{}ApplyConfiguration", t.name);
    let mut src = Src::new();
    let mut intro = format!(
        "The apply configuration of `{}`: every field optional and serialized only when set, so \
         that an apply claims exactly the fields it sets.",
        t.name
    );
    if let Some(d) = &t.doc {
        intro.push_str("\n\n");
        intro.push_str(d);
    }
    src.doc(&intro);
    let serialize = format!("{}::serde::Serialize", n.rt);
    let deserialize = format!("{}::serde::Deserialize", n.rt);
    src.derive(&[
        "Debug",
        "Clone",
        "Default",
        "PartialEq",
        &serialize,
        &deserialize,
    ]);
    let serde_crate = format!("crate = \"{}::serde\"", n.rt);
    src.attr_list("serde", &[&serde_crate]);
    src.block(&format!("pub struct {ac}"), |s| {
        if t.kind.is_some() {
            let string = || option(Ty::new("::std::string::String"));
            for (field, json) in [("api_version", "apiVersion"), ("kind", "kind")] {
                s.doc(&format!("`{json}`: set by the constructor."));
                let rename = format!("rename = \"{json}\"");
                s.attr_list(
                    "serde",
                    &[
                        &rename,
                        "default",
                        "skip_serializing_if = \"Option::is_none\"",
                    ],
                );
                s.field(&format!("pub {field}"), &string());
            }
        }
        for f in &t.fields {
            field_decl(s, &n, f);
        }
    });
    src.block(&format!("impl {ac}"), |s| {
        for f in &t.fields {
            setter(s, &n, f);
        }
    });
    if let Some(k) = &t.kind {
        kind_parts(&mut src, &n, pkg, t, k, kind_gate(ctx, pkg).as_deref());
    }
    let what = match &t.kind {
        Some(_) => format!(
            "The apply configuration of the `{}` kind (`{}`) and its `extract_{}` functions.",
            t.name,
            pkg.api_version(),
            snake(&t.name)
        ),
        None => format!(
            "The apply configuration of `{}` (`{}`).",
            t.name,
            pkg.api_version()
        ),
    };
    Module::client(
        &[
            DIR,
            &pkg.group_module,
            &pkg.version_module(),
            &snake(&t.name),
        ],
        what,
        src.finish(),
    )
}

/// What a kind's configuration adds: the constructor, the apiVersion and kind setters, the
/// `ApplyConfiguration` impl and the `extract_*` functions.
fn kind_parts(src: &mut Src, n: &Names, pkg: &Package, t: &AcType, k: &AcKind, gate: Option<&str>) {
    let cfg = |src: &mut Src| {
        if let Some(feature) = gate {
            src.line(&format!("#[cfg(feature = \"{feature}\")]"));
        }
    };
    let rt = &n.rt;
    let ac = format!("{}ApplyConfiguration", t.name);
    let obj = format!("{}::{}", n.package, ident(&t.name));
    let api_version = pkg.api_version();
    let kind = &t.name;
    let m = ident(&k.metadata_field).to_string();
    let string_into = |p: &str| into(p, Ty::new("::std::string::String"));
    let taken: Vec<String> = t
        .fields
        .iter()
        .map(|f| format!("with_{}", f.rust))
        .chain(["with_api_version".into(), "with_kind".into()])
        .collect();

    let meta_root = format!("{rt}::apply::meta::ObjectMetaApplyConfiguration::default()");
    let (ctor_doc, params, links): (String, Vec<Ty>, &[&str]) = if k.namespaced {
        (
            format!(
                "A configuration of the `{kind}` called `name` in `namespace`, with apiVersion \
                 `{api_version}` and kind `{kind}` set (client-go's `{kind}(name, namespace)`)."
            ),
            vec![string_into("name: impl "), string_into("namespace: impl ")],
            &[".with_name(name)", ".with_namespace(namespace)"],
        )
    } else {
        (
            format!(
                "A configuration of the `{kind}` called `name`, with apiVersion `{api_version}` \
                 and kind `{kind}` set (client-go's `{kind}(name)`)."
            ),
            vec![string_into("name: impl ")],
            &[".with_name(name)"],
        )
    };
    src.block(&format!("impl {ac}"), |s| {
        s.doc(&ctor_doc);
        s.func("pub fn new", &[], &params, Some(&Ty::new("Self")), |s| {
            s.block("Self", |s| {
                let some = "::core::option::Option::Some";
                let lit = |s: &str| format!("\"{}\".into()", s.escape_default());
                s.call("api_version: ", some, &[&lit(&api_version)], ",");
                s.call("kind: ", some, &[&lit(kind)], ",");
                s.call_with_chain(&format!("{m}: "), some, &meta_root, links, ",");
                s.line("..::core::default::Default::default()");
            });
        });
        for (field, json) in [("api_version", "apiVersion"), ("kind", "kind")] {
            s.doc(&format!("Sets `{json}`."));
            s.line("#[must_use]");
            s.func(
                &format!("pub fn with_{field}"),
                &[],
                &[Ty::new("mut self"), string_into("value: impl ")],
                Some(&Ty::new("Self")),
                |s| {
                    let lhs = format!("self.{field}");
                    s.assign(&lhs, "::core::option::Option::Some(value.into())");
                    s.line("self");
                },
            );
        }
        meta_setters(s, n, k, &taken);
    });

    cfg(src);
    src.impl_for(&format!("{rt}::apply::ApplyConfiguration"), &ac, |s| {
        s.assign("type Object", &obj);
        let opt_str = Ty::new("::core::option::Option<&str>");
        let meta = format!(".{m}");
        for (name, links) in [
            (
                "name",
                [meta.as_str(), ".as_ref()?", ".name", ".as_deref()"].as_slice(),
            ),
            (
                "namespace",
                &[meta.as_str(), ".as_ref()?", ".namespace", ".as_deref()"],
            ),
            ("api_version", &[".api_version", ".as_deref()"]),
            ("kind", &[".kind", ".as_deref()"]),
        ] {
            let head = format!("fn {name}");
            s.func(&head, &[], &[Ty::new("&self")], Some(&opt_str), |s| {
                s.chain("self", links, "")
            });
        }
    });

    let e = format!("extract_{}", snake(&t.name));
    let arg = ident(&snake(&t.name)).to_string();
    let result = Ty::generic(
        "::core::result::Result",
        vec![
            Ty::new(ac.as_str()),
            Ty::new(format!("{rt}::apply::ExtractError")),
        ],
    );
    let extract = |src: &mut Src, name: &str, doc: &str, subresource: Option<&str>| {
        let mut params = vec![
            Ty::new(format!("{arg}: &{obj}")),
            Ty::new("field_manager: &str"),
        ];
        if subresource.is_none() {
            params.push(Ty::new("subresource: &str"));
        }
        let sub = subresource.map_or_else(|| "subresource".to_string(), |s| format!("\"{s}\""));
        let head = format!("pub fn {name}");
        cfg(src);
        src.method(doc, &head, &[], &params, Some(&result), |s| {
            let args = [arg.as_str(), "field_manager", &sub];
            s.call("", &format!("{rt}::apply::extract"), &args, "");
        });
    };
    extract(
        src,
        &e,
        &format!(
            "client-go's `Extract{kind}`: the apply configuration holding exactly the fields of \
             `{arg}` that `field_manager` owns through apply on the main resource, with their \
             current values (plus apiVersion, kind, name and namespace), read from \
             `metadata.managedFields`.\n\nUse it to read-modify-apply without taking or dropping \
             other managers' fields. `{arg}` must be as the API server returned it (with its \
             managed fields); one without any is an error rather than an empty configuration."
        ),
        Some(""),
    );
    if k.has_status {
        extract(
            src,
            &format!("{e}_status"),
            &format!(
                "client-go's `Extract{kind}Status`: as [`{e}`], for the fields `field_manager` \
                 owns through apply on the `status` subresource."
            ),
            Some("status"),
        );
    }
    extract(
        src,
        &format!("{e}_from"),
        &format!(
            "client-go's `Extract{kind}From`: as [`{e}`], for the fields applied through \
             `subresource` (`\"\"` for the main resource, `\"status\"` …)."
        ),
        None,
    );
}
