//! The register generator: for each package, `zz_generated_register.rs` with the group and
//! version constants (`GROUP_NAME`, `VERSION`, `SCHEME_GROUP_VERSION`), Go's `Resource()` helper,
//! and `RESOURCES`, the registry entries of its `+genclient` kinds that the fake API server and
//! discovery serve.

use quote::quote;

use super::{Ctx, docs};
use crate::model::{Package, Scope};
use crate::output::{Module, Root};

/// Emits `zz_generated_register` for `pkg`.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let rt = ctx.rt();
    [pkg]
        .into_iter()
        .map(|pkg| {
            let group = &pkg.group_name;
            let version = &pkg.version;
            let api_version = pkg.api_version();
            let entries = pkg.kinds.iter().map(|k| {
                let kind = &k.name;
                let list_kind = format!("{}List", k.name);
                let plural = &k.resource;
                let singular = k.singular();
                let namespaced = k.scope == Scope::Namespaced;
                let short_names = &k.short_names;
                let mut subs: Vec<&str> = Vec::new();
                if k.has_status {
                    subs.push("status");
                }
                for m in &k.methods {
                    if let Some(s) = m.subresource.as_deref()
                        && !subs.contains(&s)
                    {
                        subs.push(s);
                    }
                }
                quote! {
                    #rt::resource::ResourceInfo {
                        group: GROUP_NAME,
                        version: VERSION,
                        kind: #kind,
                        list_kind: #list_kind,
                        plural: #plural,
                        singular: #singular,
                        namespaced: #namespaced,
                        subresources: &[#(#subs),*],
                        short_names: &[#(#short_names),*],
                    }
                }
            });
            let group_doc = docs(&{ if group.is_empty() {
                "The API group: empty, the legacy core group served under `/api`.".to_string()
            } else {
                "The API group.".to_string()
            } });
            let items = quote! {
                #group_doc
                pub const GROUP_NAME: &str = #group;

                /// The API version.
                pub const VERSION: &str = #version;

                /// `group/version`, as objects of this package carry in `apiVersion`.
                pub const API_VERSION: &str = #api_version;

                /// The group-version, as `SchemeGroupVersion` is in Go.
                pub const SCHEME_GROUP_VERSION: #rt::resource::GroupVersion = #rt::resource::GroupVersion {
                    group: GROUP_NAME,
                    version: VERSION,
                };

                /// A resource of this group, qualified by the group, as `Resource("…")` is in Go.
                pub fn resource(resource: &str) -> #rt::resource::GroupResource {
                    SCHEME_GROUP_VERSION.resource(resource)
                }

                /// The resources this group-version serves, for the fake API server and discovery.
                pub const RESOURCES: &[#rt::resource::ResourceInfo] = &[#(#entries),*];
            };
            Module {
                root: Root::Apis,
                path: vec![
                    pkg.group_dir.clone(),
                    pkg.version.clone(),
                    "zz_generated_register".into(),
                ],
                doc: format!("Registration of the {api_version} API."),
                items,
                text: None,
                cfg: None,
            }
        })
        .collect()
}
