//! # kube-codegen
//!
//! Kubernetes' `code-generator` for Rust. Write API types under `pkg/apis/<group>/<version>/`,
//! tag them as Go users do (`+genclient`, `+genclient:nonNamespaced`, `+groupName=` …), and
//! generate deep-copy and `kube::Resource` impls, registration constants, a typed clientset,
//! listers, informers, a fake clientset and CustomResourceDefinitions — from the command line
//! ([`run`]), a `build.rs` ([`Builder`]), or a proc macro (`kube-codegen-macros`, over
//! [`generate`]). All three take one options type, [`Config`].
//!
//! The generator is a pipeline of stages (private modules; `docs/generator.md` in the
//! repository says how they connect and how a generator is added):
//!
//! ```text
//! scan ─▶ tags ─▶ model ─▶ crd ─▶ emit ─▶ format ─▶ write
//! ```
//!
//! * scan reads `<apis>/<group>/<version>/*.rs` with `syn`, keeping source text and a line index;
//! * tags finds the comment blocks that belong to items and packages, by gengo's rules;
//! * model validates them and turns them into plain data;
//! * crd derives structural OpenAPI schemas and assembles CustomResourceDefinitions;
//! * emit turns the model into modules written as text in rustfmt's layout, one generator per
//!   module;
//! * format gives them their headers, docs and child declarations as files;
//! * write stages them on disk all-or-nothing (or, verifying, compares).
//!
//! Packages run on every core, each worker owning its packages end to end.
//!
//! From a `build.rs`:
//!
//! ```no_run
//! kube_codegen::Builder::new()
//!     .apis_dir("src/pkg/apis")
//!     .groups("crddemo:v1")
//!     .apis_module("crate::pkg::apis")
//!     .client_module("crate::client")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//!
//! As the CLI does:
//!
//! ```no_run
//! use kube_codegen::{Config, Generator};
//!
//! let config = Config::new()
//!     .apis_dir("pkg/apis")
//!     .output_dir("pkg/client")
//!     .groups("crddemo:v1")
//!     .generators([Generator::Client, Generator::Lister, Generator::Informer]);
//! let report = kube_codegen::run(&config, false)?;
//! println!("{} files changed", report.written.len());
//! # Ok::<(), kube_codegen::Error>(())
//! ```
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

mod applyconfig;
mod builder;
mod config;
mod crd;
mod emit;
mod error;
mod generated;
mod model;
mod namer;
mod output;
mod pipeline;
pub mod scaffold;
mod scan;
#[cfg(test)]
mod stage_rules;
mod tags;
mod write;

pub use builder::Builder;
pub use config::Generator;
pub use config::{BUILTIN_APPLY_CONFIGURATIONS, Config, DEFAULT_CRD_FILE_NAME};
pub use error::{ConfigKey, Error, Location, Pos, Result};
pub use generated::GENERATED_MARKER;
pub use write::Report;

use output::{Header, Layout, Modules};
use pipeline::Analysis;
use write::{Mode, Owned, Stager};

/// A run kept in memory, as the proc macros use it: nothing is written.
pub struct Generation {
    analysis: Analysis,
    modules: Modules,
    header: Header,
}

impl Generation {
    /// What the run warns about, as `path:line:col: warning: …` lines (for example a CRD of a
    /// protected group given the default `api-approved.kubernetes.io` annotation).
    pub fn warnings(&self) -> &[String] {
        &self.analysis.warnings
    }

    /// Every input file read (for `cargo:rerun-if-changed`, or the macro's `include_bytes!`).
    pub fn inputs(&self) -> &[PathBuf] {
        &self.analysis.inputs
    }

    /// The client tree as inline modules (what `generate_client!` expands to), if the run has
    /// client-tree generators.
    pub fn client_source(&self) -> Result<Option<String>> {
        self.modules.inline_client(&self.header)
    }

    /// One package's generated modules as inline modules, plus
    /// `pub use self::zz_generated_register::*;` (what `generate_package!` expands to).
    pub fn package_source(&self, group: &str, version: &str) -> Result<Option<String>> {
        self.modules.inline_package(&self.header, group, version)
    }
}

/// Runs scan → tags → model → crd → emit → format in this thread and keeps the result in
/// memory. Reads the inputs and writes nothing.
pub fn generate(config: &Config) -> Result<Generation> {
    let settings = config.settings()?;
    let analysis = pipeline::analyze(&settings, false)?;
    let modules = pipeline::modules(&settings, &analysis);
    Ok(Generation {
        modules,
        header: Header::new(&settings.boilerplate),
        analysis,
    })
}

/// Runs the generators and writes (or, with `verify_only`, checks) the tree layout: generated
/// modules beside the types under the apis dir, the client tree under the output dir, CRD YAML
/// under the CRD dir. Warnings are logged with `tracing`.
pub fn run(config: &Config, verify_only: bool) -> Result<Report> {
    let settings = config.settings()?;
    let started = std::time::Instant::now();
    let analysis = pipeline::analyze(&settings, true)?;
    tracing::info!(
        packages = analysis.model.packages.len(),
        elapsed = ?started.elapsed(),
        "scanned and modelled"
    );
    for w in &analysis.warnings {
        tracing::warn!("{w}");
    }
    // Client-tree folders written by generators not in this run stay declared in the root mod.rs.
    let external: Vec<&str> = Generator::ALL
        .into_iter()
        .filter(|g| !settings.generators.contains(g))
        .filter_map(|g| g.client_dir())
        .filter(|dir| write::is_generated_file(&settings.output_dir.join(dir).join("mod.rs")))
        .collect();
    let owned = Owned {
        dirs: settings
            .generators
            .iter()
            .filter_map(|g| g.client_dir())
            .map(|d| settings.output_dir.join(d))
            .collect(),
        crds: settings.generators.contains(&Generator::Crd).then(|| {
            (
                settings.crd_dir.clone(),
                analysis
                    .model
                    .packages
                    .iter()
                    .map(|p| p.group_name.clone())
                    .collect(),
            )
        }),
    };
    let layout = Layout::Tree {
        apis_dir: settings.apis_dir.clone(),
        output_dir: settings.output_dir.clone(),
    };
    let mode = if verify_only {
        Mode::Verify
    } else {
        Mode::Write
    };
    let root = common_root(&settings.apis_dir, &settings.output_dir).to_path_buf();
    let started = std::time::Instant::now();
    let report = write_all(
        &settings, &analysis, &layout, &external, mode, &owned, &root,
    );
    tracing::info!(elapsed = ?started.elapsed(), "emitted, formatted and written");
    report
}

/// Renders every file of `analysis` into `layout` through one [`Stager`]: the one place where a
/// generation becomes a write plan.
fn write_all(
    settings: &config::Settings,
    analysis: &Analysis,
    layout: &Layout,
    external: &[&str],
    mode: Mode,
    owned: &Owned,
    root: &Path,
) -> Result<Report> {
    let mut stager = Stager::new(mode);
    let mut accept = |path: PathBuf, text: String| stager.accept(path, text);
    let rendered = pipeline::crd_files(settings, analysis, &mut accept)
        .and_then(|()| pipeline::render(settings, analysis, layout, external, &mut accept));
    match rendered {
        Ok(()) => stager.finish(owned, root),
        Err(e) => {
            stager.abort();
            Err(e)
        }
    }
}

fn common_root<'a>(a: &'a Path, b: &'a Path) -> &'a Path {
    let mut p = a;
    while !b.starts_with(p) {
        match p.parent() {
            Some(parent) => p = parent,
            None => return a,
        }
    }
    if p.as_os_str().is_empty() { a } else { p }
}
