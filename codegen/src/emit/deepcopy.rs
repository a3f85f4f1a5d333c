//! The deepcopy generator: deep copy in Rust is `Clone`, and `runtime.Object` is
//! `kube::Resource`. For each package it writes `zz_generated_deepcopy.rs` with
//!
//! * `Clone` for every deep-copy-tagged type that neither derives nor implements it, and
//! * `k8s_openapi::Resource`, `Metadata` and `ListableResource` for every type tagged
//!   `+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object`, which gives it
//!   `kube::Resource` (kind, group, version, plural, scope, metadata) through kube's blanket impl.

use proc_macro2::TokenStream;
use quote::quote;

use super::{Ctx, docs};
use crate::model::{CloneType, ObjectType, Package, Scope, Shape};
use crate::namer::ident;
use crate::output::{Module, Root};

/// Emits `zz_generated_deepcopy` for `pkg`.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    [pkg]
        .into_iter()
        .map(|pkg| {
            let clones = pkg.clones.iter().map(clone_impl);
            let objects = pkg.objects.iter().map(|o| resource_impl(ctx, pkg, o));
            Module {
                root: Root::Apis,
                path: vec![
                    pkg.group_dir.clone(),
                    pkg.version.clone(),
                    "zz_generated_deepcopy".into(),
                ],
                doc: format!(
                    "Deep copy (`Clone`) and `runtime.Object` (`kube::Resource`) implementations for {}.",
                    pkg.api_version()
                ),
                items: quote!(#(#clones)* #(#objects)*),
                text: None,
                cfg: None,
            }
        })
        .collect()
}

fn clone_fields(shape: &Shape, access: impl Fn(usize, &str) -> TokenStream) -> TokenStream {
    match shape {
        Shape::Named(fields) => {
            let fs = fields.iter().enumerate().map(|(i, f)| {
                let id = ident(f);
                let a = access(i, f);
                quote!(#id: ::core::clone::Clone::clone(#a))
            });
            quote!({ #(#fs),* })
        }
        Shape::Tuple(n) => {
            let fs = (0..*n).map(|i| {
                let a = access(i, "");
                quote!(::core::clone::Clone::clone(#a))
            });
            quote!(( #(#fs),* ))
        }
        Shape::Unit | Shape::Enum(_) => quote!(),
    }
}

fn clone_impl(t: &CloneType) -> TokenStream {
    let name = ident(&t.name);
    let lts: Vec<syn::Lifetime> = t
        .lifetimes
        .iter()
        .map(|l| syn::Lifetime::new(&format!("'{l}"), proc_macro2::Span::call_site()))
        .collect();
    let tps: Vec<_> = t.type_params.iter().map(|p| ident(p)).collect();
    let (impl_gen, ty_gen) = if lts.is_empty() && tps.is_empty() {
        (quote!(), quote!())
    } else {
        (
            quote!(<#(#lts,)* #(#tps: ::core::clone::Clone),*>),
            quote!(<#(#lts,)* #(#tps),*>),
        )
    };
    let body = match &t.shape {
        Shape::Enum(variants) if variants.is_empty() => quote!(match *self {}),
        Shape::Enum(variants) => {
            let arms = variants.iter().map(|(v, shape)| {
                let vid = ident(v);
                match shape {
                    Shape::Named(fields) => {
                        let binds = fields.iter().map(|f| ident(f));
                        let built = clone_fields(shape, |_, f| {
                            let id = ident(f);
                            quote!(#id)
                        });
                        quote!(Self::#vid { #(#binds),* } => Self::#vid #built)
                    }
                    Shape::Tuple(n) => {
                        let binds: Vec<_> = (0..*n).map(|i| quote::format_ident!("f{i}")).collect();
                        let built = clone_fields(shape, |i, _| {
                            let b = &binds[i];
                            quote!(#b)
                        });
                        quote!(Self::#vid( #(#binds),* ) => Self::#vid #built)
                    }
                    _ => quote!(Self::#vid => Self::#vid),
                }
            });
            quote!(match self { #(#arms,)* })
        }
        Shape::Unit => quote!(Self),
        shape => {
            let built = clone_fields(shape, |i, f| {
                if f.is_empty() {
                    let idx = syn::Index::from(i);
                    quote!(&self.#idx)
                } else {
                    let id = ident(f);
                    quote!(&self.#id)
                }
            });
            quote!(Self #built)
        }
    };
    let doc = docs(&format!("A deep copy of `{}`.", t.name));
    quote! {
        impl #impl_gen ::core::clone::Clone for super::#name #ty_gen {
            #doc
            #[inline]
            fn clone(&self) -> Self {
                #body
            }
        }
    }
}

fn resource_impl(ctx: &Ctx<'_>, pkg: &Package, o: &ObjectType) -> TokenStream {
    let rt = ctx.rt();
    let name = ident(&o.name);
    let kind = &o.name;
    let group = &pkg.group_name;
    let version = &pkg.version;
    let api_version = pkg.api_version();
    let plural = &o.resource;
    let scope = match o.scope {
        Scope::Namespaced => quote!(NamespaceResourceScope),
        Scope::Cluster => quote!(ClusterResourceScope),
    };
    let list = o.list_kind.as_ref().map(|l| {
        quote! {
            impl #rt::k8s_openapi::ListableResource for super::#name {
                const LIST_KIND: &'static str = #l;
            }
        }
    });
    quote! {
        impl #rt::k8s_openapi::Resource for super::#name {
            const API_VERSION: &'static str = #api_version;
            const GROUP: &'static str = #group;
            const KIND: &'static str = #kind;
            const VERSION: &'static str = #version;
            const URL_PATH_SEGMENT: &'static str = #plural;
            type Scope = #rt::k8s_openapi::#scope;
        }

        impl #rt::k8s_openapi::Metadata for super::#name {
            type Ty = #rt::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

            #[inline]
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }

            #[inline]
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }

        #list
    }
}
