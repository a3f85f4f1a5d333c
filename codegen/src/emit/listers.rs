//! The lister generator (lister-gen): per kind, `MydemoLister` (all namespaces, or the cluster
//! for cluster-scoped kinds) and `MydemoNamespaceLister`, thin wrappers over the runtime's
//! namespace-indexed `Lister`. Reads return `Arc`s shared with the informer's cache; a missing
//! object is a NotFound error shaped like the API server's.
//!
//! A lister is generated for every `+genclient` kind that keeps both `list` and `get`
//! (lister-gen's rule; `noVerbs` kinds therefore get none here).

use quote::{format_ident, quote};

use super::{Ctx, docs};
use crate::model::{Kind, Package, Scope};
use crate::namer::ident;
use crate::output::Module;

/// The packages that get listers, with their lister kinds.
pub(crate) fn lister_kinds(pkg: &Package) -> Vec<&Kind> {
    pkg.kinds.iter().filter(|k| k.wants_lister()).collect()
}

/// Emits the listers tree's root and group modules.
pub(crate) fn global(ctx: &Ctx<'_>) -> Vec<Module> {
    let mut out = vec![Module::client(
        &["listers"],
        "Listers: typed, namespace-indexed reads from informer caches.",
        quote!(),
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
                    quote!(),
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
    let reexports = kinds.iter().map(|k| {
        let m = ident(&k.module());
        let lister = format_ident!("{}Lister", k.name);
        match k.scope {
            Scope::Namespaced => {
                let ns = format_ident!("{}NamespaceLister", k.name);
                quote!(pub use self::#m::{#lister, #ns};)
            }
            Scope::Cluster => quote!(pub use self::#m::#lister;),
        }
    });
    vec![Module::client(
        &["listers", &pkg.group_module, &pkg.version_module()],
        format!("Listers of the `{}` API.", pkg.api_version()),
        quote!(#(#reexports)*),
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

fn lister(ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Module {
    let rt = ctx.rt();
    let pkg_path = ctx.package_path(pkg);
    let kind_id = ident(&kind.name);
    let lister = format_ident!("{}Lister", kind.name);
    let k = &kind.name;
    let group = &pkg.group_name;
    let resource = &kind.resource;
    let struct_doc = docs(&format!(
        "Reads `{k}` objects from an informer's cache.\n\nResults are `Arc`s shared with the cache: treat them as read-only."
    ));
    let new_doc = docs(&format!(
        "A lister over `store` (usually the one of the `{k}` informer: `{k}Informer::lister()`)."
    ));
    let common = quote! {
        #new_doc
        #[inline]
        pub fn new(store: #rt::store::Store<#kind_id>) -> Self {
            Self {
                inner: #rt::lister::Lister::new(store, #group, #resource),
            }
        }

        /// The generic lister this wraps (store access, custom indexes).
        #[inline]
        pub fn generic(&self) -> &#rt::lister::Lister<#kind_id> {
            &self.inner
        }
    };
    let items = match kind.scope {
        Scope::Namespaced => {
            let ns_lister = format_ident!("{}NamespaceLister", kind.name);
            let list_doc = docs(&format!(
                "Every `{k}` in every namespace that `selector` matches."
            ));
            let ns_doc = docs(&format!(
                "`{k}` objects in `namespace`, read through the namespace index (no full scan)."
            ));
            let ns_struct_doc = docs(&format!(
                "Reads `{k}` objects of one namespace from an informer's cache."
            ));
            let get_doc = docs(&format!(
                "The `{k}` called `name`, or a NotFound error like the API server's."
            ));
            let ns_list_doc = docs(&format!(
                "The `{k}` objects of this namespace that `selector` matches."
            ));
            quote! {
                use ::std::sync::Arc;

                use #rt::kube;
                use #pkg_path::#kind_id;

                #struct_doc
                #[derive(Clone)]
                pub struct #lister {
                    inner: #rt::lister::Lister<#kind_id>,
                }

                impl #lister {
                    #common

                    #list_doc
                    #[inline]
                    pub fn list(&self, selector: &#rt::labels::Selector) -> Vec<Arc<#kind_id>> {
                        self.inner.list(selector)
                    }

                    #ns_doc
                    #[inline]
                    pub fn namespaced<'a>(&'a self, namespace: &'a str) -> #ns_lister<'a> {
                        #ns_lister {
                            inner: self.inner.namespaced(namespace),
                        }
                    }
                }

                #ns_struct_doc
                pub struct #ns_lister<'a> {
                    inner: #rt::lister::NamespaceLister<'a, #kind_id>,
                }

                impl #ns_lister<'_> {
                    #get_doc
                    #[inline]
                    pub fn get(&self, name: &str) -> Result<Arc<#kind_id>, kube::Error> {
                        self.inner.get(name)
                    }

                    #ns_list_doc
                    #[inline]
                    pub fn list(&self, selector: &#rt::labels::Selector) -> Vec<Arc<#kind_id>> {
                        self.inner.list(selector)
                    }
                }
            }
        }
        Scope::Cluster => {
            let list_doc = docs(&format!("Every `{k}` that `selector` matches."));
            let get_doc = docs(&format!(
                "The `{k}` called `name`, or a NotFound error like the API server's."
            ));
            quote! {
                use ::std::sync::Arc;

                use #rt::kube;
                use #pkg_path::#kind_id;

                #struct_doc
                #[derive(Clone)]
                pub struct #lister {
                    inner: #rt::lister::Lister<#kind_id>,
                }

                impl #lister {
                    #common

                    #list_doc
                    #[inline]
                    pub fn list(&self, selector: &#rt::labels::Selector) -> Vec<Arc<#kind_id>> {
                        self.inner.list(selector)
                    }

                    #get_doc
                    #[inline]
                    pub fn get(&self, name: &str) -> Result<Arc<#kind_id>, kube::Error> {
                        self.inner.get(name)
                    }
                }
            }
        }
    };
    Module::client(
        &[
            "listers",
            &pkg.group_module,
            &pkg.version_module(),
            &kind.module(),
        ],
        format!("The lister of `{k}` (`{resource}.{}`).", group_label(pkg)),
        items,
    )
}
