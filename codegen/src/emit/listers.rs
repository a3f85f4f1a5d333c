//! The lister generator (lister-gen): per kind, `MydemoLister` (all namespaces, or the cluster
//! for cluster-scoped kinds) and `MydemoNamespaceLister`, thin wrappers over the runtime's
//! namespace-indexed `Lister`. Reads return `Arc`s shared with the informer's cache; a missing
//! object is a NotFound error shaped like the API server's.
//!
//! A lister is generated for every `+genclient` kind that keeps both `list` and `get`
//! (lister-gen's rule; `noVerbs` kinds therefore get none here).

use super::Ctx;
use super::text::{Src, Ty};
use crate::emit::Module;
use crate::model::{Kind, Package, Scope};
use crate::namer::ident;

/// The packages that get listers, with their lister kinds.
pub(crate) fn lister_kinds(pkg: &Package) -> Vec<&Kind> {
    pkg.kinds.iter().filter(|k| k.wants_lister()).collect()
}

/// Emits the listers tree's root and group modules.
pub(crate) fn global(ctx: &Ctx<'_>) -> Vec<Module> {
    let mut out = vec![Module::client(
        &["listers"],
        "Listers: typed, namespace-indexed reads from informer caches.",
        String::new(),
    )];
    let mut groups_seen: Vec<&str> = Vec::new();
    for pkg in &ctx.model.packages {
        if lister_kinds(pkg).is_empty() {
            continue;
        }
        if !groups_seen.contains(&pkg.group_module.as_str()) {
            groups_seen.push(&pkg.group_module);
            out.push(
                Module::client(
                    &["listers", &pkg.group_module],
                    format!("Listers of the `{}` API group.", group_label(pkg)),
                    String::new(),
                )
                .behind(ctx.group_feature(pkg)),
            );
        }
    }
    out
}

/// Emits the version module of `pkg`'s listers.
pub(crate) fn package(_ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let kinds = lister_kinds(pkg);
    if kinds.is_empty() {
        return Vec::new();
    }
    let reexports = kinds
        .iter()
        .map(|k| {
            let mut items = vec![format!("{}Lister", k.name)];
            if k.scope == Scope::Namespaced {
                items.push(format!("{}NamespaceLister", k.name));
            }
            (ident(&k.module()).to_string(), items)
        })
        .collect();
    let mut src = Src::new();
    src.reexports(reexports);
    vec![Module::client(
        &["listers", &pkg.group_module, &pkg.version_module()],
        format!("Listers of the `{}` API.", pkg.api_version()),
        src.finish(),
    )]
}

/// Emits the lister of `kind`, if it gets one.
pub(crate) fn kind(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Vec<Module> {
    if kind.wants_lister() {
        vec![lister(ctx, pkg, kind)]
    } else {
        Vec::new()
    }
}

/// `crddemo.k8s.io`, or `core` for the legacy group.
pub(crate) fn group_label(pkg: &Package) -> String {
    if pkg.group_name.is_empty() {
        "core".into()
    } else {
        pkg.group_name.clone()
    }
}

/// The lister module of `kind`, written as text (see [`text`](super::text)).
fn lister(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Module {
    let rt = ctx.rt();
    let k = ident(&kind.name).to_string();
    let lister = format!("{}Lister", kind.name);
    let ns_lister = format!("{}NamespaceLister", kind.name);
    let name = &kind.name;
    let resource = &kind.resource;
    let generic = Ty::generic(format!("{rt}::lister::Lister"), vec![Ty::new(k.as_str())]);
    let arcs = Ty::generic("Vec", vec![Ty::generic("Arc", vec![Ty::new(k.as_str())])]);
    let selector = Ty::new(format!("selector: &{rt}::labels::Selector"));
    let this = || Ty::new("&self");
    let get = |src: &mut Src| {
        src.method(
            &format!("The `{name}` called `name`, or a NotFound error like the API server's."),
            "pub fn get",
            &[],
            &[this(), Ty::new("name: &str")],
            Some(&Ty::generic(
                "Result",
                vec![
                    Ty::generic("Arc", vec![Ty::new(k.as_str())]),
                    Ty::new("kube::Error"),
                ],
            )),
            |s| s.chain("self", &[".inner", ".get(name)"], ""),
        );
    };
    let list = |src: &mut Src, doc: &str| {
        src.method(
            doc,
            "pub fn list",
            &[],
            &[this(), selector.clone()],
            Some(&arcs),
            |s| s.chain("self", &[".inner", ".list(selector)"], ""),
        );
    };

    let mut src = Src::new();
    // One import per group: rustfmt reorders imports only within a group.
    src.line("use ::std::sync::Arc;");
    src.blank();
    src.line(&format!("use {rt}::kube;"));
    src.blank();
    src.line(&format!("use {}::{k};", ctx.package_path(pkg)));
    src.blank();
    src.doc(&format!(
        "Reads `{name}` objects from an informer's cache.\n\nResults are `Arc`s shared with the \
         cache: treat them as read-only."
    ));
    src.line("#[derive(Clone)]");
    src.block(&format!("pub struct {lister}"), |s| {
        s.field("inner", &generic)
    });
    src.blank();
    src.block(&format!("impl {lister}"), |s| {
        s.method(
            &format!(
                "A lister over `store` (usually the one of the `{name}` informer: \
                 `{name}Informer::lister()`)."
            ),
            "pub fn new",
            &[],
            &[Ty::generic(
                format!("store: {rt}::store::Store"),
                vec![Ty::new(k.as_str())],
            )],
            Some(&Ty::new("Self")),
            |s| {
                s.block("Self", |s| {
                    let group = format!("{:?}", pkg.group_name);
                    let plural = format!("{resource:?}");
                    let new = format!("{rt}::lister::Lister::new");
                    s.call("inner: ", &new, &["store", &group, &plural], ",");
                });
            },
        );
        s.blank();
        s.method(
            "The generic lister this wraps (store access, custom indexes).",
            "pub fn generic",
            &[],
            &[this()],
            Some(&generic.clone().prefixed("&")),
            |s| s.line("&self.inner"),
        );
        s.blank();
        match kind.scope {
            Scope::Namespaced => {
                list(
                    s,
                    &format!("Every `{name}` in every namespace that `selector` matches."),
                );
                s.blank();
                s.method(
                    &format!(
                        "`{name}` objects in `namespace`, read through the namespace index (no \
                         full scan)."
                    ),
                    "pub fn namespaced",
                    &[Ty::new("'a")],
                    &[Ty::new("&'a self"), Ty::new("namespace: &'a str")],
                    Some(&Ty::generic(ns_lister.as_str(), vec![Ty::new("'a")])),
                    |s| {
                        s.block(&ns_lister, |s| {
                            s.chain("inner: self", &[".inner", ".namespaced(namespace)"], ",");
                        });
                    },
                );
            }
            Scope::Cluster => {
                list(s, &format!("Every `{name}` that `selector` matches."));
                s.blank();
                get(s);
            }
        }
    });
    if kind.scope == Scope::Namespaced {
        src.blank();
        src.doc(&format!(
            "Reads `{name}` objects of one namespace from an informer's cache."
        ));
        src.block(&format!("pub struct {ns_lister}<'a>"), |s| {
            s.field(
                "inner",
                &Ty::generic(
                    format!("{rt}::lister::NamespaceLister"),
                    vec![Ty::new("'a"), Ty::new(k.as_str())],
                ),
            );
        });
        src.blank();
        src.block(&format!("impl {ns_lister}<'_>"), |s| {
            get(s);
            s.blank();
            list(
                s,
                &format!("The `{name}` objects of this namespace that `selector` matches."),
            );
        });
    }
    Module::client(
        &[
            "listers",
            &pkg.group_module,
            &pkg.version_module(),
            &kind.module(),
        ],
        format!(
            "The lister of `{name}` (`{resource}.{}`).",
            group_label(pkg)
        ),
        src.finish(),
    )
}
