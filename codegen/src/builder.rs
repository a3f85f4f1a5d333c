//! A `build.rs` front door in the style of `prost_build::Config`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::{Config, Generator, GroupVersions, PluralExceptions};

/// Generates code into `OUT_DIR` from a `build.rs`, to be pulled in with
/// `kube_codegen_runtime::include_client!()` and `include_package!("group", "version")`.
///
/// ```no_run
/// // build.rs, in `fn main()`:
/// kube_codegen::Builder::new()
///     .apis_dir("src/pkg/apis")
///     .groups("crddemo:v1")
///     .apis_module("crate::pkg::apis")
///     .client_module("crate::client")
///     .compile()
///     .unwrap_or_else(|e| panic!("{e}"));
/// ```
///
/// `cargo:rerun-if-changed` is printed for the apis dir, every input file and the header file,
/// so the build script reruns exactly when an input changes (which also narrows Cargo's default
/// "any file of the package" check to these files). The generator's warnings are printed as
/// `cargo:warning=` lines, which Cargo shows.
#[derive(Debug, Clone)]
pub struct Builder {
    config: Config,
    groups: Option<String>,
    header_file: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    crd_dir: Option<PathBuf>,
    emit_rerun: bool,
    error: Option<String>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the defaults: apis under `src/pkg/apis`, all generators, output to
    /// `$OUT_DIR/kube-codegen`.
    pub fn new() -> Self {
        let config = Config {
            apis_dir: PathBuf::from("src/pkg/apis"),
            ..Config::default()
        };
        Builder {
            config,
            groups: None,
            header_file: None,
            out_dir: None,
            crd_dir: None,
            emit_rerun: true,
            error: None,
        }
    }

    /// The root of the API types (relative to the package root).
    pub fn apis_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.config.apis_dir = dir.as_ref().to_path_buf();
        self
    }

    /// The group-versions to generate, as `generate-groups.sh` takes them:
    /// `"crddemo:v1 example:v1beta1,v1"`. Default: every version folder found.
    pub fn groups(mut self, spec: &str) -> Self {
        self.groups = Some(spec.to_string());
        self
    }

    /// The Rust path of the apis module (default `crate::pkg::apis`).
    pub fn apis_module(mut self, path: &str) -> Self {
        match syn::parse_str(path) {
            Ok(p) => self.config.paths.apis = p,
            Err(e) => self.error = Some(format!("apis_module {path:?}: {e}")),
        }
        self
    }

    /// The Rust path of the module that includes the client (default `crate::pkg::client`).
    pub fn client_module(mut self, path: &str) -> Self {
        match syn::parse_str(path) {
            Ok(p) => self.config.paths.client = p,
            Err(e) => self.error = Some(format!("client_module {path:?}: {e}")),
        }
        self
    }

    /// The path of the runtime crate in generated code (default `::kube_codegen_runtime`).
    pub fn runtime_crate(mut self, path: &str) -> Self {
        match syn::parse_str(path) {
            Ok(p) => self.config.paths.runtime = p,
            Err(e) => self.error = Some(format!("runtime_crate {path:?}: {e}")),
        }
        self
    }

    /// A boilerplate file put at the top of every generated file.
    pub fn header_file(mut self, path: impl AsRef<Path>) -> Self {
        self.header_file = Some(path.as_ref().to_path_buf());
        self
    }

    /// Adds a plural exception (`"Endpoints", "Endpoints"`).
    pub fn plural_exception(mut self, kind: &str, plural: &str) -> Self {
        match PluralExceptions::parse(&format!("{kind}:{plural}")) {
            Ok(p) => self.config.plural_exceptions.extend(p),
            Err(e) => self.error = Some(e),
        }
        self
    }

    /// Runs only these generators (default: all).
    pub fn generators(mut self, generators: impl IntoIterator<Item = Generator>) -> Self {
        self.config.generators = generators.into_iter().collect::<BTreeSet<_>>();
        self
    }

    /// Whether to generate `clientset::versioned::fake` (default: yes; needs the runtime's `fake`
    /// feature).
    pub fn fake_clientset(mut self, yes: bool) -> Self {
        self.config.fake_clientset = yes;
        self
    }

    /// Writes to `dir` instead of `$OUT_DIR` (files go to `<dir>/kube-codegen/`).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the `crd` generator writes CustomResourceDefinition YAML (default:
    /// `<out>/kube-codegen/crd`). A relative path is relative to the package root, so
    /// `.crd_dir("crd")` keeps the manifests in the source tree.
    pub fn crd_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.crd_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The CRD file name template (default `{plural}.{group}.yaml`; `{singular}` and `{kind}`
    /// are also replaced).
    pub fn crd_file_name(mut self, template: &str) -> Self {
        self.config.crd_file_name = template.to_string();
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (default: yes).
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun = yes;
        self
    }

    /// The configuration this builder describes (for the CLI-equivalence test and tools).
    pub fn config(&self) -> Result<Config> {
        let mut config = self.config.clone();
        if let Some(e) = &self.error {
            return Err(Error::file("build.rs", e.clone()));
        }
        if let Some(spec) = &self.groups {
            config.groups =
                GroupVersions::parse_list(spec).map_err(|e| Error::file(&config.apis_dir, e))?;
        }
        if let Some(h) = &self.header_file {
            config.boilerplate = std::fs::read_to_string(h)
                .map_err(|e| Error::io(h, "cannot read header file", e))?;
        }
        Ok(config)
    }

    /// Generates and writes `<out>/kube-codegen/client.rs` and
    /// `<out>/kube-codegen/apis/<group>/<version>.rs` (and, with the `crd` generator, the CRD
    /// YAML files); returns the written paths.
    pub fn compile(self) -> Result<Vec<PathBuf>> {
        self.compile_with(&mut |directive| println!("{directive}"))
    }

    /// [`compile`](Self::compile), handing each Cargo directive (`cargo:rerun-if-changed=…`,
    /// `cargo:warning=…`) to `cargo` instead of printing it.
    fn compile_with(self, cargo: &mut dyn FnMut(String)) -> Result<Vec<PathBuf>> {
        let config = self.config()?;
        let out = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| {
                    Error::file(
                        "build.rs",
                        "OUT_DIR is not set: call compile() from a build script or set out_dir()",
                    )
                })?,
        }
        .join("kube-codegen");
        if self.emit_rerun {
            cargo(format!(
                "cargo:rerun-if-changed={}",
                config.apis_dir.display()
            ));
            if let Some(h) = &self.header_file {
                cargo(format!("cargo:rerun-if-changed={}", h.display()));
            }
        }
        let generation = crate::generate(&config)?;
        if self.emit_rerun {
            for input in generation.inputs() {
                cargo(format!("cargo:rerun-if-changed={}", input.display()));
            }
        }
        for w in generation.warnings() {
            cargo(format!("cargo:warning={w}"));
        }
        let crd_dir = self.crd_dir.clone().unwrap_or_else(|| out.join("crd"));
        let files: Vec<(PathBuf, String)> = generation
            .inline_files()?
            .into_iter()
            .map(|f| (out.join(f.path), f.text))
            .chain(
                generation
                    .crd_files()
                    .iter()
                    .map(|f| (crd_dir.join(&f.file_name), f.text.clone())),
            )
            .collect();
        let written = files.iter().map(|(p, _)| p.clone()).collect();
        crate::write::Plan::new(files, &[])?.apply()?;
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    const MOD_RS: &str = "//! +groupName=demo.k8s.io\n//! +k8s:deepcopy-gen=package\n\nmod types;\npub use types::*;\n";
    const TYPES_RS: &str = "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};\n\n// +genclient\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n\n/// A demo.\npub struct Demo {\n    /// Metadata.\n    pub metadata: ObjectMeta,\n}\n\n/// Demos.\npub struct DemoList {\n    /// Metadata.\n    pub metadata: ListMeta,\n    /// Items.\n    pub items: Vec<Demo>,\n}\n";

    #[test]
    fn cargo_hears_of_every_input_and_every_warning() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let apis = tmp.path().join("apis");
        let pkg = apis.join("demo").join("v1");
        fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("mod.rs"), MOD_RS).unwrap_or_else(|e| panic!("{e}"));
        fs::write(pkg.join("types.rs"), TYPES_RS).unwrap_or_else(|e| panic!("{e}"));
        let header = tmp.path().join("boilerplate.txt");
        fs::write(&header, "// Copyright.\n").unwrap_or_else(|e| panic!("{e}"));

        let mut directives = Vec::new();
        let written = Builder::new()
            .apis_dir(&apis)
            .header_file(&header)
            .out_dir(tmp.path().join("out"))
            .compile_with(&mut |d| directives.push(d))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            written
                .iter()
                .any(|p| p.ends_with("kube-codegen/client.rs"))
        );

        let rerun: Vec<&str> = directives
            .iter()
            .filter_map(|d| d.strip_prefix("cargo:rerun-if-changed="))
            .collect();
        let want = [
            apis.display().to_string(),
            header.display().to_string(),
            pkg.join("mod.rs").display().to_string(),
            pkg.join("types.rs").display().to_string(),
        ];
        assert_eq!(rerun, want.iter().map(String::as_str).collect::<Vec<_>>());

        let warnings: Vec<&str> = directives
            .iter()
            .filter_map(|d| d.strip_prefix("cargo:warning="))
            .collect();
        assert_eq!(warnings.len(), 1, "{directives:?}");
        assert!(
            warnings[0].starts_with(&format!("{}:", pkg.join("types.rs").display()))
                && warnings[0]
                    .contains(": warning: demos.demo.k8s.io: group demo.k8s.io is protected")
                && warnings[0].contains("api-approved.kubernetes.io"),
            "{}",
            warnings[0]
        );

        directives.clear();
        Builder::new()
            .apis_dir(&apis)
            .out_dir(tmp.path().join("out"))
            .emit_rerun_if_changed(false)
            .generators([Generator::Client])
            .compile_with(&mut |d| directives.push(d))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(directives.is_empty(), "{directives:?}");
    }
}
