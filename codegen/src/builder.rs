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
/// "any file of the package" check to these files).
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
            println!("cargo:rerun-if-changed={}", config.apis_dir.display());
            if let Some(h) = &self.header_file {
                println!("cargo:rerun-if-changed={}", h.display());
            }
        }
        let generation = crate::generate(&config)?;
        if self.emit_rerun {
            for input in generation.inputs() {
                println!("cargo:rerun-if-changed={}", input.display());
            }
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
