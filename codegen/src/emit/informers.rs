//! The informer generator (informer-gen): `informers::externalversions::SharedInformerFactory`,
//! a typed front to the runtime's factory with `factory.crddemo().v1().mydemos()` accessors and a
//! generic lookup by group-version-resource, and per kind a `MydemoInformer` with `informer()`
//! and `lister()`. Every accessor asks the factory for its one shared informer per type, so any
//! number of callers share one watch.
//!
//! An informer is generated for every `+genclient` kind that is not `noVerbs` and keeps `list`
//! and `watch` (informer-gen's rule).

use super::Ctx;
use super::text::{self, Src, Ty};
use crate::emit::Module;
use crate::model::{Kind, Package};
use crate::namer::{ident, snake};

use super::listers::group_label;

fn informer_kinds(pkg: &Package) -> Vec<&Kind> {
    pkg.kinds.iter().filter(|k| k.wants_informer()).collect()
}

fn group_struct(pkg: &Package) -> String {
    format!("{}Informers", pkg.group_go_name)
}

fn version_struct(pkg: &Package) -> String {
    format!("{}Informers", pkg.group_version_camel())
}

/// `pub struct {name}<'a>` over a runtime factory and its impl: `new`, then what `accessors`
/// writes. What a group's and a version's informers are.
fn factory_view(
    src: &mut Src,
    rt: &str,
    doc: &str,
    name: &str,
    new_doc: &str,
    accessors: impl FnOnce(&mut Src),
) {
    src.doc(doc);
    src.line("#[derive(Clone, Copy)]");
    src.block(&format!("pub struct {name}<'a>"), |s| {
        s.field(
            "factory",
            &Ty::new(format!("&'a {rt}::factory::SharedInformerFactory")),
        );
    });
    src.blank();
    src.block(&format!("impl<'a> {name}<'a>"), |s| {
        s.method(
            new_doc,
            "pub fn new",
            &[],
            &[Ty::new(format!(
                "factory: &'a {rt}::factory::SharedInformerFactory"
            ))],
            Some(&Ty::new("Self")),
            |s| s.line("Self { factory }"),
        );
        accessors(s);
    });
}

/// A method `{head}(&self) -> {ty}{lifetime}` whose body is `{ty}::new({arg})`, after `attrs`.
fn accessor(src: &mut Src, attrs: &[String], head: &str, ty: &str, lifetime: &str, arg: &str) {
    for a in attrs {
        src.line(a);
    }
    src.line("#[inline]");
    src.func(
        head,
        &[],
        &[Ty::new("&self")],
        Some(&Ty::new(format!("{ty}{lifetime}"))),
        |s| s.call("", &format!("{ty}::new"), &[arg], ""),
    );
}

/// Emits the informers tree's modules that span packages: the root, the factory and the group
/// modules.
pub(crate) fn global(ctx: &Ctx<'_>) -> Vec<Module> {
    let rt = ctx.rt();
    let packages: Vec<&Package> = ctx
        .model
        .packages
        .iter()
        .filter(|p| !informer_kinds(p).is_empty())
        .collect();
    let mut out = vec![Module::client(
        &["informers"],
        "Informers: shared, cached watches of every generated kind.",
        String::new(),
    )];
    out.push(factory(ctx, &packages));

    let mut groups: Vec<(&str, Vec<&Package>)> = Vec::new();
    for pkg in &packages {
        match groups.iter_mut().find(|(g, _)| *g == pkg.group_module) {
            Some((_, v)) => v.push(pkg),
            None => groups.push((&pkg.group_module, vec![pkg])),
        }
    }
    for (group_module, versions) in &groups {
        let first = versions[0];
        let gs = group_struct(first);
        let mut src = Src::new();
        factory_view(
            &mut src,
            &rt,
            &format!(
                "Informers of the `{}` API group, one accessor per version.",
                group_label(first)
            ),
            &gs,
            "The group's informers on `factory`.",
            |s| {
                for p in versions {
                    let m = ident(&p.version_module()).to_string();
                    s.blank();
                    s.doc(&format!("Informers of the `{}` API.", p.api_version()));
                    accessor(
                        s,
                        &[],
                        &format!("pub fn {m}"),
                        &format!("self::{m}::{}", version_struct(p)),
                        "<'a>",
                        "self.factory",
                    );
                }
            },
        );
        out.push(
            Module::client(
                &["informers", "externalversions", group_module],
                format!("Informers of the `{}` API group.", group_label(first)),
                src.finish(),
            )
            .behind(ctx.group_feature(first)),
        );
    }
    out
}

/// Emits the version module of `pkg`'s informers.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let kinds = informer_kinds(pkg);
    if kinds.is_empty() {
        return Vec::new();
    }
    vec![version_module(ctx, pkg)]
}

/// Emits the informer of `kind`, if it gets one.
pub(crate) fn kind(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Vec<Module> {
    if kind.wants_informer() {
        vec![kind_informer(ctx, pkg, kind)]
    } else {
        Vec::new()
    }
}

fn factory(ctx: &Ctx<'_>, packages: &[&Package]) -> Module {
    let rt = ctx.rt();
    let clientset = ctx.client_path(&["clientset", "versioned", "Clientset"]);
    let runtime_factory = format!("{rt}::factory::SharedInformerFactory");
    let mut seen = Vec::new();
    let groups: Vec<&&Package> = packages
        .iter()
        .filter(|p| {
            let new = !seen.contains(&p.group_module);
            seen.push(p.group_module.clone());
            new
        })
        .collect();
    // (method, group struct's path) of each group; the struct borrows the factory (`<'_>`).
    let group_names = |p: &Package| {
        let m = ident(&p.group_module).to_string();
        let method = ident(&snake(&p.group_go_name)).to_string();
        (method, format!("self::{m}::{}", group_struct(p)))
    };
    let mut src = Src::new();
    src.doc(
        "The shared informer factory of this clientset: one informer (one watch) per kind\n\
         however many callers ask, started, synced and shut down together.\n\n\
         Every method of the runtime factory (`start`, `wait_for_cache_sync`, `shutdown`,\n\
         `informer_for::<K>()` for any other kind such as `Service`) is available through\n\
         `Deref`; the generated accessors add typed paths such as `crddemo().v1().mydemos()`.",
    );
    src.line("#[derive(Clone, Debug)]");
    src.block("pub struct SharedInformerFactory", |s| {
        s.field("inner", &Ty::new(runtime_factory.as_str()));
    });
    src.blank();
    src.block("impl SharedInformerFactory", |s| {
        let by_clientset = Ty::new(format!("clientset: &{clientset}"));
        s.method(
            "A factory over `clientset` with the defaults: all namespaces, no resync.",
            "pub fn new",
            &[],
            std::slice::from_ref(&by_clientset),
            Some(&Ty::new("Self")),
            |s| s.chain("Self::builder(clientset)", &[".build()"], ""),
        );
        s.blank();
        s.method(
            "A builder over `clientset`: `namespace(..)`, `tweak_list_params(..)`,\n\
             `default_resync(..)`, `resync_for::<K>(..)`, `transform(..)` …, then `build()`.",
            "pub fn builder",
            &[],
            std::slice::from_ref(&by_clientset),
            Some(&Ty::generic(
                format!("{rt}::factory::FactoryBuilder"),
                vec![Ty::new("Self")],
            )),
            |s| {
                s.chain("let client = clientset", &[".client()", ".clone()"], ";");
                s.chain(
                    &format!("{runtime_factory}::builder(client)"),
                    &[".typed()"],
                    "",
                );
            },
        );
        s.blank();
        s.method(
            "The runtime factory this wraps.",
            "pub fn factory",
            &[],
            &[Ty::new("&self")],
            Some(&Ty::new(format!("&{runtime_factory}"))),
            |s| s.line("&self.inner"),
        );
        s.blank();
        s.method(
            "The informer of a resource named by group, version and resource (client-go's\n\
             `ForResource`), for every kind of this clientset and any other kind the factory\n\
             has an informer of. A kind costs compile time here only where this is called.",
            "pub fn for_resource",
            &[],
            &[
                Ty::new("&self"),
                Ty::new(format!("gvr: &{rt}::kube::core::GroupVersionResource")),
            ],
            Some(&Ty::generic(
                "Result",
                vec![
                    Ty::new(format!("{rt}::factory::GenericInformer")),
                    Ty::new(format!("{rt}::factory::FactoryError")),
                ],
            )),
            |s| {
                s.block("match (&*gvr.group, &*gvr.version, &*gvr.resource)", |s| {
                    for p in packages {
                        for k in informer_kinds(p) {
                            for_resource_arm(ctx, s, p, k);
                        }
                    }
                    s.line("_ => self.inner.for_resource(gvr),");
                });
            },
        );
        for p in &groups {
            let (method, ty) = group_names(p);
            s.blank();
            s.doc(&format!("Informers of the `{}` API group.", group_label(p)));
            accessor(
                s,
                ctx.group_cfg(p).as_slice(),
                &format!("pub fn {method}"),
                &ty,
                "<'_>",
                "&self.inner",
            );
        }
    });
    src.blank();
    src.impl_for(
        &format!("From<{runtime_factory}>"),
        "SharedInformerFactory",
        |s| {
            s.line("#[inline]");
            s.func(
                "fn from",
                &[],
                &[Ty::new(format!("factory: {runtime_factory}"))],
                Some(&Ty::new("Self")),
                |s| s.line("Self { inner: factory }"),
            );
        },
    );
    src.blank();
    src.impl_for("::core::ops::Deref", "SharedInformerFactory", |s| {
        s.assign("type Target", &runtime_factory);
        s.blank();
        s.line("#[inline]");
        s.block("fn deref(&self) -> &Self::Target", |s| {
            s.line("&self.inner")
        });
    });
    src.blank();
    src.doc(
        "This clientset's group accessors on any runtime factory, so that every factory\n\
         that derefs to one (another clientset's generated factory, say) reaches these kinds\n\
         too, with the very informers this factory would hand out: one watch, one cache per\n\
         kind. Import the trait to use it.",
    );
    src.block("pub trait InformerGroups", |s| {
        for (i, p) in groups.iter().enumerate() {
            let (method, ty) = group_names(p);
            if i > 0 {
                s.blank();
            }
            s.doc(&format!("Informers of the `{}` API group.", group_label(p)));
            if let Some(a) = ctx.group_cfg(p) {
                s.line(&a);
            }
            s.fn_decl(
                &format!("fn {method}"),
                &[],
                &[Ty::new("&self")],
                Some(&Ty::new(format!("{ty}<'_>"))),
            );
        }
    });
    src.blank();
    src.impl_for("InformerGroups", &runtime_factory, |s| {
        for (i, p) in groups.iter().enumerate() {
            let (method, ty) = group_names(p);
            if i > 0 {
                s.blank();
            }
            let cfg = ctx.group_cfg(p);
            accessor(
                s,
                cfg.as_slice(),
                &format!("fn {method}"),
                &ty,
                "<'_>",
                "self",
            );
        }
    });
    Module::client(
        &["informers", "externalversions"],
        "Informers of the versioned clientset's kinds, and their shared factory.",
        src.finish(),
    )
}

/// The arm of `for_resource`'s match for kind `k` of package `p`.
fn for_resource_arm(ctx: &Ctx<'_>, src: &mut Src, p: &Package, k: &Kind) {
    if let Some(a) = ctx.group_cfg(p) {
        src.line(&a);
    }
    let pattern = format!("({:?}, {:?}, {:?})", p.group_name, p.version, k.resource);
    let body = |s: &mut Src| {
        s.line(&format!(
            "use {}::{} as K;",
            ctx.package_path(p),
            ident(&k.name)
        ));
        s.line("Ok(self.inner.generic_informer_for::<K>())");
    };
    if src.col() + pattern.len() + " => {".len() <= text::MAX_WIDTH {
        src.block(&format!("{pattern} =>"), body);
    } else {
        // The tuple pattern broken one part per line, the arm's block opening on its last.
        src.scope("(", ") => {", |s| {
            for part in [&p.group_name, &p.version, &k.resource] {
                s.line(&format!("{part:?},"));
            }
        });
        src.indented(body);
        src.line("}");
    }
}

fn version_module(ctx: &Ctx<'_>, pkg: &Package) -> Module {
    let rt = ctx.rt();
    let kinds = informer_kinds(pkg);
    let mut src = Src::new();
    src.reexports(
        kinds
            .iter()
            .map(|k| {
                (
                    ident(&k.module()).to_string(),
                    vec![format!("{}Informer", k.name)],
                )
            })
            .collect(),
    );
    src.blank();
    factory_view(
        &mut src,
        &rt,
        &format!(
            "Informers of the `{}` API, one accessor per kind.",
            pkg.api_version()
        ),
        &version_struct(pkg),
        "The version's informers on `factory`.",
        |s| {
            for k in &kinds {
                s.blank();
                s.doc(&format!("The shared informer of `{}`.", k.name));
                accessor(
                    s,
                    &[],
                    &format!("pub fn {}", ident(&k.accessor())),
                    &format!("{}Informer", k.name),
                    "",
                    "self.factory",
                );
            }
        },
    );
    Module::client(
        &[
            "informers",
            "externalversions",
            &pkg.group_module,
            &pkg.version_module(),
        ],
        format!("Informers of the `{}` API.", pkg.api_version()),
        src.finish(),
    )
}

/// The informer module of `kind`, written as text (see [`text`]).
fn kind_informer(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Module {
    let rt = ctx.rt();
    let k = ident(&kind.name).to_string();
    let informer = format!("{}Informer", kind.name);
    let name = &kind.name;
    let shared = Ty::generic(
        format!("{rt}::informer::SharedIndexInformer"),
        vec![Ty::new(k.as_str())],
    );
    let mut src = Src::new();
    src.line(&format!("use {}::{k};", ctx.package_path(pkg)));
    src.blank();
    src.doc(&format!(
        "The shared informer of `{name}` and its lister. Cheap to clone; every clone and every \
         other caller of the factory's `{}()` shares one watch.",
        kind.accessor()
    ));
    src.line("#[derive(Clone)]");
    src.block(&format!("pub struct {informer}"), |s| {
        s.field("informer", &shared)
    });
    src.blank();
    src.block(&format!("impl {informer}"), |s| {
        s.method(
            "The factory's shared informer of this kind (created on first use).",
            "pub fn new",
            &[],
            &[Ty::new(format!(
                "factory: &{rt}::factory::SharedInformerFactory"
            ))],
            Some(&Ty::new("Self")),
            |s| {
                s.block("Self", |s| {
                    let informer_for = format!(".informer_for::<{k}>()");
                    s.chain("informer: factory", &[&informer_for], ",");
                });
            },
        );
        s.blank();
        s.method(
            "The informer: event handlers, indexers, sync state, cache.",
            "pub fn informer",
            &[],
            &[Ty::new("&self")],
            Some(&shared.clone().prefixed("&")),
            |s| s.line("&self.informer"),
        );
        if kind.wants_lister() {
            let lister = ctx.client_path(&[
                "listers",
                &pkg.group_module,
                &pkg.version_module(),
                &format!("{}Lister", kind.name),
            ]);
            s.blank();
            s.method(
                &format!("A lister over this informer's store of `{name}` objects."),
                "pub fn lister",
                &[],
                &[Ty::new("&self")],
                Some(&Ty::new(lister.as_str())),
                |s| {
                    s.call(
                        "",
                        &format!("{lister}::new"),
                        &["self.informer.store()"],
                        "",
                    )
                },
            );
        }
    });
    Module::client(
        &[
            "informers",
            "externalversions",
            &pkg.group_module,
            &pkg.version_module(),
            &kind.module(),
        ],
        format!(
            "The informer of `{name}` (`{}.{}`).",
            kind.resource,
            group_label(pkg)
        ),
        src.finish(),
    )
}
