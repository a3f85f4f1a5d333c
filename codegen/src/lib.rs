//! # kube-codegen
//!
//! Kubernetes' `code-generator` for Rust. Write API types under `pkg/apis/<group>/<version>/`,
//! tag them as Go users do (`+genclient`, `+genclient:nonNamespaced`, `+groupName=` …), and
//! generate deep-copy and `kube::Resource` impls, registration constants, a typed clientset,
//! listers, informers and a fake clientset — from the command line, a `build.rs`, or a proc macro.
//!
//! The generator is a pipeline of pure stages:
//!
//! ```text
//! scan ──▶ tags ──▶ model ──▶ emit ──▶ output (prettyplease) ──▶ write
//! ```
//!
//! * [`scan`] reads `<apis>/<group>/<version>/*.rs` with `syn`, keeping source text;
//! * [`tags`] finds the comment blocks that belong to items and packages, by gengo's rules;
//! * [`model`] validates and turns them into plain data;
//! * [`emit`] turns the model into modules (`quote!` lives only there); for the `crd` generator,
//!   [`schema`] first derives structural OpenAPI schemas from the AST, and [`yaml`] writes the
//!   CustomResourceDefinitions;
//! * [`output`] formats them as a file tree or as inline modules;
//! * [`write`](mod@write) puts files on disk atomically, or verifies them.
//!
//! From a `build.rs`, use the [`Builder`]:
//!
//! ```no_run
//! kube_codegen::Builder::new()
//!     .apis_dir("src/pkg/apis")
//!     .groups("crddemo:v1")
//!     .apis_module("crate::pkg::apis")
//!     .client_module("crate::client")
//!     .compile()
//!     .expect("kube-codegen failed");
//! ```
#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub mod emit;
pub mod error;
pub mod markers;
pub mod model;
pub mod namer;
pub mod output;
pub mod scan;
pub mod schema;
pub mod tags;
pub mod write;
pub mod yaml;

mod builder;

pub use builder::Builder;
pub use emit::{Generator, Paths};
pub use error::{Error, Result};
pub use namer::PluralExceptions;
pub use scan::GroupVersions;

use model::{Model, ModelOptions};
use output::{File, Header, Modules, Root};

/// Everything one generator run needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The root of the API types: `<apis_dir>/<group>/<version>/*.rs`.
    pub apis_dir: PathBuf,
    /// The group-versions to generate; empty means every `<group>/<v…>` folder found.
    pub groups: Vec<GroupVersions>,
    /// The root of the client tree (`pkg/client`).
    pub output_dir: PathBuf,
    /// Rust paths used in generated code.
    pub paths: Paths,
    /// Boilerplate put under the generated marker of every file.
    pub boilerplate: String,
    /// `Kind:plural` exceptions to gengo's plural rules.
    pub plural_exceptions: PluralExceptions,
    /// The generators to run.
    pub generators: BTreeSet<Generator>,
    /// Where the `crd` generator writes CustomResourceDefinition YAML (default `crd`).
    pub crd_dir: PathBuf,
    /// The CRD file name template: `{plural}`, `{group}`, `{singular}` and `{kind}` are
    /// replaced (default `{plural}.{group}.yaml`).
    pub crd_file_name: String,
    /// Whether the client generator also writes `clientset::versioned::fake` (client-gen's
    /// `--fake-clientset`, default on); its code needs `kube-codegen-runtime`'s `fake` feature.
    pub fake_clientset: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            apis_dir: PathBuf::from("pkg/apis"),
            groups: Vec::new(),
            output_dir: PathBuf::from("pkg/client"),
            paths: Paths::default(),
            boilerplate: String::new(),
            plural_exceptions: PluralExceptions::default(),
            generators: Generator::ALL.into_iter().collect(),
            crd_dir: PathBuf::from("crd"),
            crd_file_name: emit::crd::DEFAULT_FILE_NAME.to_string(),
            fake_clientset: true,
        }
    }
}

/// The result of a run, before anything is written.
pub struct Generation {
    /// The validated model.
    pub model: Model,
    modules: Modules,
    header: Header,
    inputs: Vec<PathBuf>,
    crds: Vec<emit::crd::Crd>,
    crd_files: Vec<emit::crd::CrdFile>,
    warnings: Vec<String>,
}

impl Generation {
    /// What the run warns about, as `path:line:col: warning: …` lines (for example a CRD of a
    /// protected group given the default `api-approved.kubernetes.io` annotation).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every input file read (for `cargo:rerun-if-changed`).
    pub fn inputs(&self) -> &[PathBuf] {
        &self.inputs
    }

    /// The tree layout: files relative to the apis dir or the output dir.
    pub fn tree_files(&self) -> Result<Vec<File>> {
        self.modules.render_tree(&self.header)
    }

    /// The inline layout (`client.rs`, `apis/<group>/<version>.rs`), for `include!`.
    pub fn inline_files(&self) -> Result<Vec<File>> {
        self.modules.render_inline(&self.header)
    }

    /// The CustomResourceDefinitions (empty unless the `crd` generator ran).
    pub fn crds(&self) -> &[emit::crd::Crd] {
        &self.crds
    }

    /// The CRD YAML files, relative to the CRD dir (empty unless the `crd` generator ran).
    pub fn crd_files(&self) -> &[emit::crd::CrdFile] {
        &self.crd_files
    }

    /// The client tree as inline modules, as the proc macro expands it.
    pub fn client_tokens(&self) -> proc_macro2::TokenStream {
        self.modules.client_tokens()
    }

    /// One package's generated modules, as the proc macro expands them.
    pub fn package_tokens(&self, group: &str, version: &str) -> Option<proc_macro2::TokenStream> {
        self.modules.package_tokens(group, version)
    }
}

/// Runs scan → tags → model → emit → format. Pure: reads the inputs and writes nothing.
pub fn generate(config: &Config) -> Result<Generation> {
    let sources = scan::scan(&config.apis_dir, &config.groups)?;
    let model = model::build(
        &sources,
        &ModelOptions {
            plural_exceptions: config.plural_exceptions.clone(),
        },
    )?;
    let mut warnings = Vec::new();
    let crds = if config.generators.contains(&Generator::Crd) {
        emit::crd::build(&sources, &model, &mut warnings)?
    } else {
        Vec::new()
    };
    let crd_files = emit::crd::render(&crds, &config.crd_file_name, &config.boilerplate)?;
    let ctx = emit::Ctx {
        model: &model,
        paths: &config.paths,
        crds: &crds,
        fake_clientset: config.fake_clientset,
    };
    let mut modules = Vec::new();
    for g in &config.generators {
        modules.extend(g.emit(&ctx));
    }
    if modules.iter().any(|m| m.root == Root::Client) {
        modules.insert(
            0,
            output::Module::client(
                &[],
                "Client code generated by kube-codegen: the versioned clientset, listers and informers.",
                proc_macro2::TokenStream::new(),
            ),
        );
    }
    let inputs = sources
        .iter()
        .flat_map(|s| s.files.iter().map(|f| f.path.clone()))
        .collect();
    Ok(Generation {
        modules: Modules::new(modules),
        header: Header::new(&config.boilerplate),
        model,
        inputs,
        crds,
        crd_files,
        warnings,
    })
}

/// The top-level client-tree folder each generator owns.
fn owned_client_dir(g: Generator) -> Option<&'static str> {
    match g {
        Generator::Client => Some("clientset"),
        Generator::Lister => Some("listers"),
        Generator::Informer => Some("informers"),
        Generator::Deepcopy | Generator::Register | Generator::Crd => None,
    }
}

/// Runs the generators and writes (or, with `verify_only`, checks) the tree layout: generated
/// modules beside the types under `apis_dir`, the client tree under `output_dir`.
pub fn run(config: &Config, verify_only: bool) -> Result<write::Plan> {
    let mut generation = generate(config)?;
    for w in generation.warnings() {
        tracing::warn!("{w}");
    }
    // Client-tree folders written by generators not in this run stay declared in the root mod.rs.
    let runs_client_tree = config
        .generators
        .iter()
        .any(|g| owned_client_dir(*g).is_some());
    for g in Generator::ALL {
        if let (Some(dir), false) = (owned_client_dir(g), config.generators.contains(&g))
            && write::is_generated_file(&config.output_dir.join(dir).join("mod.rs"))
        {
            generation.modules.declare_external(dir);
        }
    }
    let files = generation.tree_files()?;
    let abs = |f: File| -> (PathBuf, String) {
        let base = match f.root {
            Root::Apis => &config.apis_dir,
            Root::Client => &config.output_dir,
        };
        (base.join(&f.path), f.text)
    };
    let mut files: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter(|f| f.root == Root::Apis || runs_client_tree)
        .map(abs)
        .collect();
    let crd_paths: Vec<PathBuf> = generation
        .crd_files
        .iter()
        .map(|f| config.crd_dir.join(&f.file_name))
        .collect();
    files.extend(
        crd_paths
            .iter()
            .cloned()
            .zip(generation.crd_files.iter().map(|f| f.text.clone())),
    );
    let owned: Vec<PathBuf> = config
        .generators
        .iter()
        .filter_map(|g| owned_client_dir(*g))
        .map(|d| config.output_dir.join(d))
        .collect();
    let mut plan = write::Plan::new(files, &owned)?;
    if config.generators.contains(&Generator::Crd) {
        let groups: BTreeSet<String> = generation
            .model
            .packages
            .iter()
            .map(|p| p.group_name.clone())
            .collect();
        plan.deletes.extend(emit::crd::stale_files(
            &config.crd_dir,
            &crd_paths,
            &groups,
        )?);
        plan.deletes.sort();
    }
    if verify_only {
        plan.verify(common_root(&config.apis_dir, &config.output_dir))?;
    } else {
        plan.apply()?;
    }
    Ok(plan)
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
