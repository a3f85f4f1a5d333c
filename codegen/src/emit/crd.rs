//! The crd generator's Rust side: `zz_generated_crd.rs` beside the types, implementing
//! `kube::CustomResourceExt` with the CRD that the CRD stage ([`crate::crd`]) assembled.

use quote::quote;

use super::{Ctx, docs};
use crate::crd::yaml;
use crate::model::Package;
use crate::output::{Module, Root};

/// Emits `zz_generated_crd` for `pkg`: `kube::CustomResourceExt` for each kind that has a CRD.
/// A package without one gets a module with only its doc, so declaring the module is always
/// valid.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let rt = ctx.rt();
    [pkg]
        .into_iter()
        .map(|pkg| {
            let impls = ctx.crds.iter().filter_map(|crd| {
                let v = crd
                    .versions
                    .iter()
                    .find(|v| v.group_dir == pkg.group_dir && v.name == pkg.version)?;
                let ty = crate::namer::ident(&crd.kind);
                let name = crd.name();
                let json = yaml::to_canonical_json(&crd.to_json());
                let group = &crd.group;
                let version = &v.name;
                let api_version = format!("{}/{}", crd.group, v.name);
                let kind = &crd.kind;
                let plural = &crd.plural;
                let short = &crd.short_names;
                let doc = docs(&format!(
                    "The CRD `{name}`, every version included: the same document kube-codegen writes as YAML."
                ));
                Some(quote! {
                    impl #rt::kube::CustomResourceExt for super::#ty {
                        #doc
                        fn crd() -> #rt::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                            const CRD_JSON: &str = #json;
                            // kube-codegen wrote CRD_JSON from a typed model whose every field has
                            // the JSON type of k8s-openapi's CustomResourceDefinition, and the
                            // tests parse every generated CRD: this parse cannot fail.
                            #rt::serde_json::from_str(CRD_JSON)
                                .expect("kube-codegen generates a valid CustomResourceDefinition")
                        }

                        fn crd_name() -> &'static str {
                            #name
                        }

                        fn api_resource() -> #rt::kube::core::ApiResource {
                            #rt::kube::core::ApiResource {
                                group: #group.into(),
                                version: #version.into(),
                                api_version: #api_version.into(),
                                kind: #kind.into(),
                                plural: #plural.into(),
                            }
                        }

                        fn shortnames() -> &'static [&'static str] {
                            &[#(#short),*]
                        }
                    }
                })
            });
            let items = quote!(#(#impls)*);
            Module {
                root: Root::Apis,
                path: vec![
                    pkg.group_dir.clone(),
                    pkg.version.clone(),
                    "zz_generated_crd".into(),
                ],
                doc: format!(
                    "CustomResourceDefinitions of {}: `kube::CustomResourceExt` for its kinds.",
                    pkg.api_version()
                ),
                items,
            }
        })
        .collect()
}
