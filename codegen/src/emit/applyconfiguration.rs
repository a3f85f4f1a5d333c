//! The apply-configuration generator (applyconfiguration-gen): for every kind that keeps
//! `apply` or `applyStatus` and every package struct it reaches,
//! `applyconfiguration::<group>::<version>::<Type>ApplyConfiguration` — every field optional and
//! serialized only when set, `with_*` setters (lists append, maps merge) — and for kinds a
//! constructor that sets apiVersion and kind, the runtime's `ApplyConfiguration` impl, and
//! `extract_<kind>` / `extract_<kind>_status` / `extract_<kind>_from`, which read what one field
//! manager owns from `metadata.managedFields` (no OpenAPI document needed). The analysis is the
//! `applyconfig` stage.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{Ctx, docs};
use crate::applyconfig::{AcField, AcKind, AcPackage, AcTy, AcType, PathRoot};
use crate::model::Package;
use crate::namer::{ident, snake};
use crate::output::Module;

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
        quote!(),
    )];
    let mut groups_seen: Vec<&str> = Vec::new();
    for pkg in &ctx.model.packages {
        if configs(ctx, pkg).is_none() || groups_seen.contains(&pkg.group_module.as_str()) {
            continue;
        }
        groups_seen.push(&pkg.group_module);
        out.push(Module::client(
            &[DIR, &pkg.group_module],
            format!(
                "Apply configurations of the `{}` API group.",
                super::listers::group_label(pkg)
            ),
            quote!(),
        ));
    }
    out
}

/// The version module of `pkg` and one module per type.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let Some(acs) = configs(ctx, pkg) else {
        return Vec::new();
    };
    let reexports = acs.types.iter().map(|t| {
        let m = ident(&snake(&t.name));
        let ac = ac_ident(&t.name);
        match &t.kind {
            Some(k) => {
                let (e, es, ef) = extract_idents(&t.name);
                let status = k.has_status.then(|| quote!(#es,));
                quote!(pub use self::#m::{#ac, #e, #status #ef};)
            }
            None => quote!(pub use self::#m::#ac;),
        }
    });
    let mut out = vec![Module::client(
        &[DIR, &pkg.group_module, &pkg.version_module()],
        format!("Apply configurations of the `{}` API.", pkg.api_version()),
        quote!(#(#reexports)*),
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

fn ac_ident(name: &str) -> proc_macro2::Ident {
    format_ident!("{name}ApplyConfiguration")
}

fn extract_idents(name: &str) -> (proc_macro2::Ident, proc_macro2::Ident, proc_macro2::Ident) {
    let s = snake(name);
    (
        format_ident!("extract_{s}"),
        format_ident!("extract_{s}_status"),
        format_ident!("extract_{s}_from"),
    )
}

/// The Rust type of a configuration element.
fn ty(ctx: &Ctx<'_>, pkg: &Package, t: &AcTy) -> TokenStream {
    let rt = ctx.rt();
    match t {
        AcTy::Path {
            root,
            segments,
            args,
        } => {
            let segs = segments.iter().map(|s| ident(s));
            let base = match root {
                PathRoot::Prelude => quote!(),
                PathRoot::Package => {
                    let p = ctx.package_path(pkg);
                    quote!(#p::)
                }
                PathRoot::Runtime => quote!(#rt::),
                PathRoot::Crate => quote!(crate::),
                PathRoot::Global => quote!(::),
            };
            let args = (!args.is_empty()).then(|| {
                let a = args.iter().map(|a| ty(ctx, pkg, a));
                quote!(<#(#a),*>)
            });
            quote!(#base #(#segs)::* #args)
        }
        AcTy::Local(n) => {
            let id = ac_ident(n);
            quote!(super::#id)
        }
        AcTy::Meta(m) => {
            let id = ac_ident(m);
            quote!(#rt::apply::meta::#id)
        }
        AcTy::List(e) => {
            let e = ty(ctx, pkg, e);
            quote!(::std::vec::Vec<#e>)
        }
        AcTy::Map(k, v) => {
            let k = ty(ctx, pkg, k);
            let v = ty(ctx, pkg, v);
            quote!(::std::collections::BTreeMap<#k, #v>)
        }
        AcTy::Boxed(e) => {
            let e = ty(ctx, pkg, e);
            quote!(::std::boxed::Box<#e>)
        }
        AcTy::Optional(e) => {
            let e = ty(ctx, pkg, e);
            quote!(::core::option::Option<#e>)
        }
    }
}

/// A field of the struct and its setter.
fn field(ctx: &Ctx<'_>, pkg: &Package, f: &AcField) -> (TokenStream, TokenStream) {
    let id = ident(&f.rust);
    let json = &f.json;
    let setter = format_ident!("with_{}", f.rust);
    let doc = f.doc.as_deref().map(docs);
    let t = ty(ctx, pkg, &f.ty);
    let flat_map = f.flatten && matches!(f.ty, AcTy::Map(..));
    let decl = if f.flatten {
        quote! {
            #doc
            #[serde(flatten, default)]
            pub #id: #t,
        }
    } else {
        quote! {
            #doc
            #[serde(rename = #json, default, skip_serializing_if = "Option::is_none")]
            pub #id: ::core::option::Option<#t>,
        }
    };
    let set = match &f.ty {
        AcTy::List(e) => {
            let e = ty(ctx, pkg, e);
            let d = docs(&format!(
                "Appends `values` to `{json}` (creating the list when unset)."
            ));
            let target = if f.flatten {
                quote!(self.#id)
            } else {
                quote!(self.#id.get_or_insert_with(::std::vec::Vec::new))
            };
            quote! {
                #d
                #[must_use]
                pub fn #setter<I: ::core::convert::Into<#e>>(mut self, values: impl ::core::iter::IntoIterator<Item = I>) -> Self {
                    #target.extend(values.into_iter().map(::core::convert::Into::into));
                    self
                }
            }
        }
        AcTy::Map(k, v) => {
            let k = ty(ctx, pkg, k);
            let v = ty(ctx, pkg, v);
            let d = docs(&format!(
                "Merges `entries` into `{json}` (a later value for a key wins)."
            ));
            let target = if flat_map {
                quote!(self.#id)
            } else {
                quote!(self.#id.get_or_insert_with(::std::collections::BTreeMap::new))
            };
            quote! {
                #d
                #[must_use]
                pub fn #setter<K: ::core::convert::Into<#k>, V: ::core::convert::Into<#v>>(
                    mut self,
                    entries: impl ::core::iter::IntoIterator<Item = (K, V)>,
                ) -> Self {
                    #target.extend(entries.into_iter().map(|(k, v)| (k.into(), v.into())));
                    self
                }
            }
        }
        AcTy::Boxed(inner) => {
            let inner_t = ty(ctx, pkg, inner);
            let d = docs(&format!("Sets `{json}`; the last call wins."));
            quote! {
                #d
                #[must_use]
                pub fn #setter(mut self, value: #inner_t) -> Self {
                    self.#id = ::core::option::Option::Some(::std::boxed::Box::new(value));
                    self
                }
            }
        }
        AcTy::Local(_) | AcTy::Meta(_) => {
            let d = docs(&format!("Sets `{json}`; the last call wins."));
            let assign = if f.flatten {
                quote!(self.#id = value;)
            } else {
                quote!(self.#id = ::core::option::Option::Some(value);)
            };
            quote! {
                #d
                #[must_use]
                pub fn #setter(mut self, value: #t) -> Self {
                    #assign
                    self
                }
            }
        }
        AcTy::Path { .. } | AcTy::Optional(_) => {
            let d = docs(&format!("Sets `{json}`; the last call wins."));
            quote! {
                #d
                #[must_use]
                pub fn #setter(mut self, value: impl ::core::convert::Into<#t>) -> Self {
                    self.#id = ::core::option::Option::Some(value.into());
                    self
                }
            }
        }
    };
    (decl, set)
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
/// setter of the kind already takes.
fn meta_setters(ctx: &Ctx<'_>, k: &AcKind, taken: &[String]) -> TokenStream {
    let rt = ctx.rt();
    let m = ident(&k.metadata_field);
    let setters = META_SETTERS
        .iter()
        .filter(|s| !taken.iter().any(|t| t == *s))
        .map(|s| format_ident!("{s}"));
    quote!(#rt::object_meta_setters!(#m: #(#setters)*);)
}

fn type_module(ctx: &Ctx<'_>, pkg: &Package, t: &AcType) -> Module {
    let rt = ctx.rt();
    let ac = ac_ident(&t.name);
    let serde_crate = format!("{}::serde", ctx.paths.runtime.to_token_stream_string());
    let (decls, setters): (Vec<_>, Vec<_>) = t.fields.iter().map(|f| field(ctx, pkg, f)).unzip();
    let mut intro = format!(
        "The apply configuration of `{}`: every field optional and serialized only when set, so \
         that an apply claims exactly the fields it sets.",
        t.name
    );
    if let Some(d) = &t.doc {
        intro.push_str("\n\n");
        intro.push_str(d);
    }
    let struct_doc = docs(&intro);
    let (kind_fields, kind_items) = match &t.kind {
        Some(k) => kind_parts(ctx, pkg, t, k),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let items = quote! {
        #struct_doc
        #[derive(Debug, Clone, Default, PartialEq, #rt::serde::Serialize, #rt::serde::Deserialize)]
        #[serde(crate = #serde_crate)]
        pub struct #ac {
            #kind_fields
            #(#decls)*
        }

        impl #ac {
            #(#setters)*
        }

        #kind_items
    };
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
        items,
    )
}

/// What a kind's configuration adds: apiVersion and kind fields, the constructor and their
/// setters, the `ApplyConfiguration` impl and the `extract_*` functions.
fn kind_parts(ctx: &Ctx<'_>, pkg: &Package, t: &AcType, k: &AcKind) -> (TokenStream, TokenStream) {
    let rt = ctx.rt();
    let ac = ac_ident(&t.name);
    let obj = ctx.api_type(pkg, &t.name);
    let api_version = pkg.api_version();
    let kind = &t.name;
    let m = ident(&k.metadata_field);
    let fields = quote! {
        /// `apiVersion`: set by the constructor.
        #[serde(rename = "apiVersion", default, skip_serializing_if = "Option::is_none")]
        pub api_version: ::core::option::Option<::std::string::String>,
        /// `kind`: set by the constructor.
        #[serde(rename = "kind", default, skip_serializing_if = "Option::is_none")]
        pub kind: ::core::option::Option<::std::string::String>,
    };
    let taken: Vec<String> = t
        .fields
        .iter()
        .map(|f| format!("with_{}", f.rust))
        .chain(["with_api_version".into(), "with_kind".into()])
        .collect();
    let meta_setters = meta_setters(ctx, k, &taken);
    let (ctor_doc, ctor_sig, ctor_meta) = if k.namespaced {
        (
            format!(
                "A configuration of the `{kind}` called `name` in `namespace`, with apiVersion \
                 `{api_version}` and kind `{kind}` set (client-go's `{kind}(name, namespace)`)."
            ),
            quote!(pub fn new(name: impl ::core::convert::Into<::std::string::String>, namespace: impl ::core::convert::Into<::std::string::String>) -> Self),
            quote!(#rt::apply::meta::ObjectMetaApplyConfiguration::default().with_name(name).with_namespace(namespace)),
        )
    } else {
        (
            format!(
                "A configuration of the `{kind}` called `name`, with apiVersion `{api_version}` \
                 and kind `{kind}` set (client-go's `{kind}(name)`)."
            ),
            quote!(pub fn new(name: impl ::core::convert::Into<::std::string::String>) -> Self),
            quote!(#rt::apply::meta::ObjectMetaApplyConfiguration::default().with_name(name)),
        )
    };
    let ctor_doc = docs(&ctor_doc);
    let (e, es, ef) = extract_idents(&t.name);
    let arg = ident(&snake(&t.name));
    let extract_doc = docs(&format!(
        "client-go's `Extract{kind}`: the apply configuration holding exactly the fields of \
         `{arg}` that `field_manager` owns through apply on the main resource, with their current \
         values (plus apiVersion, kind, name and namespace), read from `metadata.managedFields`.\n\n\
         Use it to read-modify-apply without taking or dropping other managers' fields. `{arg}` \
         must be as the API server returned it (with its managed fields); one without any is an \
         error rather than an empty configuration."
    ));
    let from_doc = docs(&format!(
        "client-go's `Extract{kind}From`: as [`{e}`], for the fields applied through \
         `subresource` (`\"\"` for the main resource, `\"status\"` …)."
    ));
    let status = k.has_status.then(|| {
        let d = docs(&format!(
            "client-go's `Extract{kind}Status`: as [`{e}`], for the fields `field_manager` owns \
             through apply on the `status` subresource."
        ));
        quote! {
            #d
            #[inline]
            pub fn #es(#arg: &#obj, field_manager: &str) -> ::core::result::Result<#ac, #rt::apply::ExtractError> {
                #rt::apply::extract(#arg, field_manager, "status")
            }
        }
    });
    let items = quote! {
        impl #ac {
            #ctor_doc
            #ctor_sig {
                Self {
                    api_version: ::core::option::Option::Some(#api_version.into()),
                    kind: ::core::option::Option::Some(#kind.into()),
                    #m: ::core::option::Option::Some(#ctor_meta),
                    ..::core::default::Default::default()
                }
            }

            /// Sets `apiVersion`.
            #[must_use]
            pub fn with_api_version(mut self, value: impl ::core::convert::Into<::std::string::String>) -> Self {
                self.api_version = ::core::option::Option::Some(value.into());
                self
            }

            /// Sets `kind`.
            #[must_use]
            pub fn with_kind(mut self, value: impl ::core::convert::Into<::std::string::String>) -> Self {
                self.kind = ::core::option::Option::Some(value.into());
                self
            }

            #meta_setters
        }

        impl #rt::apply::ApplyConfiguration for #ac {
            type Object = #obj;

            fn name(&self) -> ::core::option::Option<&str> {
                self.#m.as_ref()?.name.as_deref()
            }

            fn namespace(&self) -> ::core::option::Option<&str> {
                self.#m.as_ref()?.namespace.as_deref()
            }

            fn api_version(&self) -> ::core::option::Option<&str> {
                self.api_version.as_deref()
            }

            fn kind(&self) -> ::core::option::Option<&str> {
                self.kind.as_deref()
            }
        }

        #extract_doc
        #[inline]
        pub fn #e(#arg: &#obj, field_manager: &str) -> ::core::result::Result<#ac, #rt::apply::ExtractError> {
            #rt::apply::extract(#arg, field_manager, "")
        }

        #status

        #from_doc
        #[inline]
        pub fn #ef(#arg: &#obj, field_manager: &str, subresource: &str) -> ::core::result::Result<#ac, #rt::apply::ExtractError> {
            #rt::apply::extract(#arg, field_manager, subresource)
        }
    };
    (fields, items)
}

trait PathString {
    fn to_token_stream_string(&self) -> String;
}

impl PathString for syn::Path {
    /// `::kube_codegen_runtime` as text, for `#[serde(crate = "…")]`.
    fn to_token_stream_string(&self) -> String {
        let mut out = String::new();
        if self.leading_colon.is_some() {
            out.push_str("::");
        }
        let segs: Vec<String> = self.segments.iter().map(|s| s.ident.to_string()).collect();
        out.push_str(&segs.join("::"));
        out
    }
}
