//! The crd generator's Rust side: `zz_generated_crd.rs` beside the types, implementing
//! `kube::CustomResourceExt` with the CRD that the CRD stage ([`crate::crd`]) assembled.

use quote::quote;

use std::path::{Component, Path};

use super::{CrdSource, Ctx, docs};
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
                let file = ctx.crd_files.iter().find(|f| f.crd_name == name)?;
                let (source, doc) = match &ctx.crd_source {
                    CrdSource::Files { crd_dir, apis_root } => {
                        let from = apis_root.join(&pkg.group_dir).join(&pkg.version);
                        let to = crd_dir.join(&file.file_name);
                        let rel = relative_path(&from, &to);
                        (
                            quote!(include_str!(#rel)),
                            format!("The CRD `{name}`, every version included: the YAML document kube-codegen wrote to `{}`.", file.file_name),
                        )
                    }
                    CrdSource::Inline => {
                        let text = &file.text;
                        (
                            quote!(#text),
                            format!("The CRD `{name}`, every version included: the document kube-codegen writes as YAML."),
                        )
                    }
                };
                let group = &crd.group;
                let version = &v.name;
                let api_version = format!("{}/{}", crd.group, v.name);
                let kind = &crd.kind;
                let plural = &crd.plural;
                let short = &crd.short_names;
                let doc = docs(&doc);
                Some(quote! {
                    impl #rt::kube::CustomResourceExt for super::#ty {
                        #doc
                        fn crd() -> #rt::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                            const CRD_YAML: &str = #source;
                            // kube-codegen wrote CRD_YAML from a typed model whose every field has
                            // the type of k8s-openapi's CustomResourceDefinition, and the tests
                            // read every generated CRD: this cannot fail unless the file is edited.
                            #rt::crd::from_yaml(CRD_YAML)
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
                text: None,
                cfg: None,
            }
        })
        .collect()
}

/// `to` relative to the folder `from`, with `/` separators (as `include_str!` takes it): both
/// made absolute first, without touching the file system.
fn relative_path(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let normal = |p: &Path| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other.as_os_str().to_string_lossy().into_owned()),
            }
        }
        out
    };
    let (from, to) = (normal(&from), normal(&to));
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common == 0 {
        // Nothing in common (another drive): name the file absolutely.
        return to.join("/");
    }
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(to[common..].iter().map(String::as_str));
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_for_include_str() {
        assert_eq!(
            relative_path(Path::new("/a/pkg/apis/g/v1"), Path::new("/a/crd/x.yaml")),
            "../../../../crd/x.yaml"
        );
        assert_eq!(
            relative_path(Path::new("apis/g/v1"), Path::new("apis/g/v1/crd/x.yaml")),
            "crd/x.yaml"
        );
        assert_eq!(
            relative_path(Path::new("a/./b/../c"), Path::new("a/d.yaml")),
            "../d.yaml"
        );
    }
}
