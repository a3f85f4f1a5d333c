//! The informer generator (informer-gen): `informers::externalversions::SharedInformerFactory`,
//! a typed front to the runtime's factory with `factory.crddemo().v1().mydemos()` accessors and a
//! generic lookup by group-version-resource, and per kind a `MydemoInformer` with `informer()`
//! and `lister()`. Every accessor asks the factory for its one shared informer per type, so any
//! number of callers share one watch.
//!
//! An informer is generated for every `+genclient` kind that is not `noVerbs` and keeps `list`
//! and `watch` (informer-gen's rule).

use quote::{format_ident, quote};

use super::text::{Src, Ty};
use super::{Ctx, docs};
use crate::model::{Kind, Package};
use crate::namer::{ident, snake};
use crate::output::Module;

use super::listers::group_label;

fn informer_kinds(pkg: &Package) -> Vec<&Kind> {
    pkg.kinds.iter().filter(|k| k.wants_informer()).collect()
}

fn group_struct(pkg: &Package) -> proc_macro2::Ident {
    format_ident!("{}Informers", pkg.group_go_name)
}

fn version_struct(pkg: &Package) -> proc_macro2::Ident {
    format_ident!("{}Informers", pkg.group_version_camel())
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
        quote!(),
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
        let accessors = versions.iter().map(|p| {
            let m = ident(&p.version_module());
            let vs = version_struct(p);
            let doc = docs(&format!("Informers of the `{}` API.", p.api_version()));
            quote! {
                #doc
                #[inline]
                pub fn #m(&self) -> self::#m::#vs<'a> {
                    self::#m::#vs::new(self.factory)
                }
            }
        });
        let doc = docs(&format!(
            "Informers of the `{}` API group, one accessor per version.",
            group_label(first)
        ));
        out.push(
            Module::client(
                &["informers", "externalversions", group_module],
                format!("Informers of the `{}` API group.", group_label(first)),
                quote! {
                    #doc
                    #[derive(Clone, Copy)]
                    pub struct #gs<'a> {
                        factory: &'a #rt::factory::SharedInformerFactory,
                    }

                    impl<'a> #gs<'a> {
                        /// The group's informers on `factory`.
                        #[inline]
                        pub fn new(factory: &'a #rt::factory::SharedInformerFactory) -> Self {
                            Self { factory }
                        }

                        #(#accessors)*
                    }
                },
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
    let mut seen = Vec::new();
    let groups = packages.iter().filter(|p| {
        let new = !seen.contains(&p.group_module);
        seen.push(p.group_module.clone());
        new
    });
    let groups: Vec<&&Package> = groups.collect();
    let accessors = groups.iter().map(|p| {
        let m = ident(&p.group_module);
        let method = ident(&snake(&p.group_go_name));
        let gs = group_struct(p);
        let doc = docs(&format!("Informers of the `{}` API group.", group_label(p)));
        let cfg = ctx.group_cfg(p);
        quote! {
            #doc
            #cfg
            #[inline]
            pub fn #method(&self) -> self::#m::#gs<'_> {
                self::#m::#gs::new(&self.inner)
            }
        }
    });
    let group_trait_methods = groups.iter().map(|p| {
        let m = ident(&p.group_module);
        let method = ident(&snake(&p.group_go_name));
        let gs = group_struct(p);
        let doc = docs(&format!("Informers of the `{}` API group.", group_label(p)));
        let cfg = ctx.group_cfg(p);
        quote! {
            #doc
            #cfg
            fn #method(&self) -> self::#m::#gs<'_>;
        }
    });
    let group_trait_impls = groups.iter().map(|p| {
        let m = ident(&p.group_module);
        let method = ident(&snake(&p.group_go_name));
        let gs = group_struct(p);
        let cfg = ctx.group_cfg(p);
        quote! {
            #cfg
            #[inline]
            fn #method(&self) -> self::#m::#gs<'_> {
                self::#m::#gs::new(self)
            }
        }
    });
    let arms = packages.iter().flat_map(|p| {
        let pkg_path = ctx.package_path(p);
        let group = p.group_name.clone();
        let version = p.version.clone();
        let cfg = ctx.group_cfg(p);
        informer_kinds(p).into_iter().map(move |k| {
            let kind = ident(&k.name);
            let resource = &k.resource;
            quote!(#cfg (#group, #version, #resource) => Ok(self.inner.generic_informer_for::<#pkg_path::#kind>()),)
        })
    });
    let items = quote! {
        /// The shared informer factory of this clientset: one informer (one watch) per kind
        /// however many callers ask, started, synced and shut down together.
        ///
        /// Every method of the runtime factory (`start`, `wait_for_cache_sync`, `shutdown`,
        /// `informer_for::<K>()` for any other kind such as `Service`) is available through
        /// `Deref`; the generated accessors add typed paths such as `crddemo().v1().mydemos()`.
        #[derive(Clone, Debug)]
        pub struct SharedInformerFactory {
            inner: #rt::factory::SharedInformerFactory,
        }

        impl SharedInformerFactory {
            /// A factory over `clientset` with the defaults: all namespaces, no resync.
            #[inline]
            pub fn new(clientset: &#clientset) -> Self {
                Self::builder(clientset).build()
            }

            /// A builder over `clientset`: `namespace(..)`, `tweak_list_params(..)`,
            /// `default_resync(..)`, `resync_for::<K>(..)`, `transform(..)` …, then `build()`.
            #[inline]
            pub fn builder(clientset: &#clientset) -> #rt::factory::FactoryBuilder<Self> {
                #rt::factory::SharedInformerFactory::builder(clientset.client().clone()).typed()
            }

            /// The runtime factory this wraps.
            #[inline]
            pub fn factory(&self) -> &#rt::factory::SharedInformerFactory {
                &self.inner
            }

            /// The informer of a resource named by group, version and resource (client-go's
            /// `ForResource`), for every kind of this clientset and any other kind the factory
            /// has an informer of. A kind costs compile time here only where this is called.
            #[inline]
            pub fn for_resource(
                &self,
                gvr: &#rt::kube::core::GroupVersionResource,
            ) -> Result<#rt::factory::GenericInformer, #rt::factory::FactoryError> {
                match (gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str()) {
                    #(#arms)*
                    _ => self.inner.for_resource(gvr),
                }
            }

            #(#accessors)*
        }

        impl From<#rt::factory::SharedInformerFactory> for SharedInformerFactory {
            #[inline]
            fn from(factory: #rt::factory::SharedInformerFactory) -> Self {
                Self { inner: factory }
            }
        }

        impl ::core::ops::Deref for SharedInformerFactory {
            type Target = #rt::factory::SharedInformerFactory;

            #[inline]
            fn deref(&self) -> &Self::Target {
                &self.inner
            }
        }

        /// This clientset's group accessors on any runtime factory, so that every factory
        /// that derefs to one (another clientset's generated factory, say) reaches these kinds
        /// too, with the very informers this factory would hand out: one watch, one cache per
        /// kind. Import the trait to use it.
        pub trait InformerGroups {
            #(#group_trait_methods)*
        }

        impl InformerGroups for #rt::factory::SharedInformerFactory {
            #(#group_trait_impls)*
        }
    };
    Module::client(
        &["informers", "externalversions"],
        "Informers of the versioned clientset's kinds, and their shared factory.",
        items,
    )
}

fn version_module(ctx: &Ctx<'_>, pkg: &Package) -> Module {
    let rt = ctx.rt();
    let vs = version_struct(pkg);
    let kinds = informer_kinds(pkg);
    let reexports = kinds.iter().map(|k| {
        let m = ident(&k.module());
        let i = format_ident!("{}Informer", k.name);
        quote!(pub use self::#m::#i;)
    });
    let accessors = kinds.iter().map(|k| {
        let method = ident(&k.accessor());
        let i = format_ident!("{}Informer", k.name);
        let doc = docs(&format!("The shared informer of `{}`.", k.name));
        quote! {
            #doc
            #[inline]
            pub fn #method(&self) -> #i {
                #i::new(self.factory)
            }
        }
    });
    let doc = docs(&format!(
        "Informers of the `{}` API, one accessor per kind.",
        pkg.api_version()
    ));
    Module::client(
        &[
            "informers",
            "externalversions",
            &pkg.group_module,
            &pkg.version_module(),
        ],
        format!("Informers of the `{}` API.", pkg.api_version()),
        quote! {
            #(#reexports)*

            #doc
            #[derive(Clone, Copy)]
            pub struct #vs<'a> {
                factory: &'a #rt::factory::SharedInformerFactory,
            }

            impl<'a> #vs<'a> {
                /// The version's informers on `factory`.
                #[inline]
                pub fn new(factory: &'a #rt::factory::SharedInformerFactory) -> Self {
                    Self { factory }
                }

                #(#accessors)*
            }
        },
    )
}

/// The informer module of `kind`, written as text (see [`text`](super::text)).
fn kind_informer(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Module {
    let rt = ctx.rt_text();
    let k = ident(&kind.name).to_string();
    let informer = format!("{}Informer", kind.name);
    let name = &kind.name;
    let shared = Ty::generic(
        format!("{rt}::informer::SharedIndexInformer"),
        vec![Ty::new(k.as_str())],
    );
    let mut src = Src::new();
    src.line(0, &format!("use {}::{k};", ctx.package_path_text(pkg)));
    src.line(0, "");
    src.doc(
        0,
        &format!(
            "The shared informer of `{name}` and its lister. Cheap to clone; every clone and \
             every other caller of the factory's `{}()` shares one watch.",
            kind.accessor()
        ),
    );
    src.line(0, "#[derive(Clone)]");
    src.line(0, &format!("pub struct {informer} {{"));
    src.field(4, "informer", &shared);
    src.line(0, "}");
    src.line(0, "");
    src.line(0, &format!("impl {informer} {{"));
    src.inline_fn(
        "The factory's shared informer of this kind (created on first use).",
        "pub fn new",
        &[],
        &[Ty::new(format!(
            "factory: &{rt}::factory::SharedInformerFactory"
        ))],
        Some(&Ty::new("Self")),
    );
    src.line(8, "Self {");
    src.chain(
        12,
        "informer: factory",
        &[&format!(".informer_for::<{k}>()")],
        ",",
    );
    src.line(8, "}");
    src.line(4, "}");
    src.line(0, "");
    src.inline_fn(
        "The informer: event handlers, indexers, sync state, cache.",
        "pub fn informer",
        &[],
        &[Ty::new("&self")],
        Some(&shared.prefixed("&")),
    );
    src.line(8, "&self.informer");
    src.line(4, "}");
    if kind.wants_lister() {
        let lister = ctx.client_path_text(&[
            "listers",
            &pkg.group_module,
            &pkg.version_module(),
            &format!("{}Lister", kind.name),
        ]);
        src.line(0, "");
        src.inline_fn(
            &format!("A lister over this informer's store of `{name}` objects."),
            "pub fn lister",
            &[],
            &[Ty::new("&self")],
            Some(&Ty::new(lister.as_str())),
        );
        src.call(
            8,
            "",
            &format!("{lister}::new"),
            &["self.informer.store()"],
            "",
        );
        src.line(4, "}");
    }
    src.line(0, "}");
    Module::client_text(
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
