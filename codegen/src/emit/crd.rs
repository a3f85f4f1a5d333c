//! The crd generator's Rust side: `zz_generated_crd.rs` beside the types, implementing
//! `kube::CustomResourceExt` with the CRD that the CRD stage ([`crate::crd`]) assembled.

use std::path::{Component, Path};

use super::text::Src;
use super::{CrdSource, Ctx};
use crate::emit::Module;
use crate::model::Package;

/// Emits `zz_generated_crd` for `pkg`: `kube::CustomResourceExt` for each kind that has a CRD.
/// A package without one gets a module with only its doc, so declaring the module is always
/// valid.
pub(crate) fn package(ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
    let rt = ctx.rt();
    let mut src = Src::new();
    let mut imported = false;
    for crd in ctx.crds {
        let Some(v) = crd
            .versions
            .iter()
            .find(|v| v.group_dir == pkg.group_dir && v.name == pkg.version)
        else {
            continue;
        };
        let name = crd.name();
        let Some(file) = ctx.crd_files.iter().find(|f| f.crd_name == name) else {
            continue;
        };
        let (source, doc) = match &ctx.crd_source {
            CrdSource::Files { crd_dir, apis_root } => {
                let from = apis_root.join(&pkg.group_dir).join(&pkg.version);
                let to = crd_dir.join(&file.file_name);
                let rel = relative_path(&from, &to);
                (
                    Source::Include(format!("{rel:?}")),
                    format!(
                        "The CRD `{name}`, every version included: the YAML document \
                         kube-codegen wrote to `{}`.",
                        file.file_name
                    ),
                )
            }
            CrdSource::Inline => (
                Source::Text(format!("{:?}", file.text)),
                format!(
                    "The CRD `{name}`, every version included: the document kube-codegen \
                     writes as YAML."
                ),
            ),
        };
        if !std::mem::replace(&mut imported, true) {
            src.line(&format!("use {rt}::crd::CustomResourceDefinition;"));
            src.line(&format!("use {rt}::kube::CustomResourceExt;"));
            src.line(&format!("use {rt}::kube::core::ApiResource;"));
        }
        src.blank();
        let kind = crate::namer::ident(&crd.kind);
        src.block(&format!("impl CustomResourceExt for super::{kind}"), |s| {
            s.doc(&doc);
            s.block("fn crd() -> CustomResourceDefinition", |s| {
                match &source {
                    // On the line, else on the next, else with the macro's argument broken.
                    Source::Include(path) => {
                        s.call("const CRD_YAML: &str = ", "include_str!", &[path], ";");
                    }
                    Source::Text(text) => s.assign("const CRD_YAML: &str", text),
                }
                s.line(
                    "// kube-codegen wrote CRD_YAML from a typed model whose every field has the \
                     type of",
                );
                s.line(
                    "// k8s-openapi's CustomResourceDefinition, and the tests read every \
                     generated CRD:",
                );
                s.line("// this cannot fail unless the file is edited.");
                s.chain(
                    &format!("{rt}::crd::from_yaml(CRD_YAML)"),
                    &[".expect(\"kube-codegen generates a valid CustomResourceDefinition\")"],
                    "",
                );
            });
            s.blank();
            s.block("fn crd_name() -> &'static str", |s| {
                s.line(&format!("{name:?}"))
            });
            s.blank();
            s.block("fn api_resource() -> ApiResource", |s| {
                s.block("ApiResource", |s| {
                    let api_version = format!("{}/{}", crd.group, v.name);
                    for (field, value) in [
                        ("group", crd.group.as_str()),
                        ("version", v.name.as_str()),
                        ("api_version", api_version.as_str()),
                        ("kind", crd.kind.as_str()),
                        ("plural", crd.plural.as_str()),
                    ] {
                        s.line(&format!("{field}: {value:?}.into(),"));
                    }
                });
            });
            s.blank();
            s.block("fn shortnames() -> &'static [&'static str]", |s| {
                let short: Vec<String> = crd.short_names.iter().map(|s| format!("{s:?}")).collect();
                s.array("&", &short, "");
            });
        });
    }
    vec![Module::apis(
        &pkg.group_dir,
        &pkg.version,
        "zz_generated_crd",
        format!(
            "CustomResourceDefinitions of {}: `kube::CustomResourceExt` for its kinds.",
            pkg.api_version()
        ),
        src.finish(),
    )]
}

/// Where `crd()` reads the YAML from, as Rust literals.
enum Source {
    /// `include_str!` of this path literal.
    Include(String),
    /// This string literal.
    Text(String),
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
