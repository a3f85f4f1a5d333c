//! Stage 5, emit: one module per generator, each a set of functions from the [`Model`] to
//! [`Module`]s — `kind` for what belongs to one kind (typed client, lister, informer), `package`
//! for the rest of an API package (files beside the types, version modules), `global` for what
//! spans packages (the clientset, the informer factory, group modules). Each writes text laid out
//! as `rustfmt` lays it out ([`text`]). See `docs/generator.md` for how to add a generator.

use crate::config::{Generator, Settings};
use crate::model::{Kind, Model, Package, TypeRef};
use crate::namer;

mod applyconfiguration;
mod clientset;
mod crd;
mod deepcopy;
mod informers;
mod listers;
mod module;
mod register;
mod text;

pub(crate) use module::{Module, Root};
pub(crate) use text::doc_comment;

/// Rust paths the generated code refers to, written as the generated code writes them.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    /// The module of the apis tree (`crate::pkg::apis`).
    pub apis: String,
    /// The module the client tree is placed in (`crate::pkg::client`).
    pub client: String,
    /// The runtime crate (`::kube_codegen_runtime`).
    pub runtime: String,
}

impl Paths {
    /// The paths of `settings` (checked Rust paths), each normalized (`crate :: x` is
    /// `crate::x`).
    pub(crate) fn new(settings: &Settings) -> Self {
        let text = |s: &str| {
            syn::parse_str::<syn::Path>(s).map_or_else(|_| "crate".to_string(), |p| path_text(&p))
        };
        Paths {
            apis: text(&settings.apis_module),
            client: text(&settings.client_module),
            runtime: text(&settings.runtime_crate),
        }
    }
}

/// What every emitter reads: the model and the paths.
pub(crate) struct Ctx<'a> {
    /// The validated model.
    pub model: &'a Model,
    /// Where things live.
    pub paths: &'a Paths,
    /// The CustomResourceDefinitions (empty unless the `crd` generator runs).
    pub crds: &'a [crate::crd::Crd],
    /// Whether the client generator writes the fake clientset.
    pub fake_clientset: bool,
    /// Whether each API group is behind a Cargo feature of its module's name.
    pub group_features: bool,
    /// The CRD YAML files (empty unless the `crd` generator runs).
    pub crd_files: &'a [crate::crd::CrdFile],
    /// How the Rust side reaches each CRD's YAML.
    pub crd_source: CrdSource<'a>,
    /// The apply configurations of each package, by `(group folder, version)` (empty unless
    /// the `applyconfiguration` generator runs).
    pub apply_configs: &'a crate::applyconfig::AcPackages,
    /// Whether the typed clients get `apply`/`apply_status` over generated apply
    /// configurations (client-gen's `--apply-configuration-package`).
    pub apply_verbs: bool,
    /// The Cargo feature the apply configurations and apply verbs are behind, if any.
    pub apply_feature: Option<String>,
    /// Whether the fake clientset installs the CRDs of [`Ctx::crds`] (their
    /// `CustomResourceExt` impls exist, from this run or another).
    pub fake_crds: bool,
}

/// How `zz_generated_crd.rs` reaches the YAML of a CRD, so that each CRD exists once.
#[derive(Clone, Copy)]
pub(crate) enum CrdSource<'a> {
    /// `include_str!` of the file written under `crd_dir`, from the package folder under
    /// `apis_root`.
    Files {
        /// Where the YAML files are written.
        crd_dir: &'a std::path::Path,
        /// Where the package folders of the generated files are.
        apis_root: &'a std::path::Path,
    },
    /// The YAML text itself (the proc macro writes no files).
    Inline,
}

impl Ctx<'_> {
    /// A type named by an extension method's `input=`/`result=`, as text.
    pub(crate) fn type_ref_text(&self, pkg: &Package, kind: &Kind, r: &TypeRef) -> String {
        let api_type = |name: &str| format!("{}::{}", self.package_path(pkg), namer::ident(name));
        match r {
            TypeRef::Kind => api_type(&kind.name),
            TypeRef::Local(n) => api_type(n),
            TypeRef::Path(p) => {
                let p: String = p.split_whitespace().collect();
                match p
                    .strip_prefix("k8s_openapi::")
                    .or_else(|| p.strip_prefix("::k8s_openapi::"))
                {
                    Some(rest) => format!("{}::k8s_openapi::{rest}", self.rt()),
                    None => p,
                }
            }
        }
    }

    /// `#[cfg(feature = "<group module>")]` for items of `pkg`'s group when the run puts groups
    /// behind features.
    pub(crate) fn group_cfg(&self, pkg: &Package) -> Option<String> {
        self.group_feature(pkg)
            .map(|f| format!("#[cfg(feature = {f:?})]"))
    }

    /// The feature of `pkg`'s group, when the run puts groups behind features.
    pub(crate) fn group_feature(&self, pkg: &Package) -> Option<String> {
        self.group_features.then(|| pkg.group_module.clone())
    }

    /// The runtime crate's path (`::kube_codegen_runtime`).
    pub(crate) fn rt(&self) -> String {
        self.paths.runtime.clone()
    }

    /// The module of one API package (`crate::pkg::apis::crddemo::v1`).
    pub(crate) fn package_path(&self, pkg: &Package) -> String {
        format!(
            "{}::{}::{}",
            self.paths.apis,
            namer::ident(&pkg.group_module),
            namer::ident(&pkg.version_module())
        )
    }

    /// A path inside the client tree (`crate::pkg::client::clientset::versioned`).
    pub(crate) fn client_path(&self, segments: &[&str]) -> String {
        let mut out = self.paths.client.clone();
        for s in segments {
            out.push_str("::");
            out.push_str(&namer::ident(s).to_string());
        }
        out
    }
}

/// A plain path (`::kube_codegen_runtime`, `crate::pkg::apis`) as text.
fn path_text(path: &syn::Path) -> String {
    let mut out = String::new();
    if path.leading_colon.is_some() {
        out.push_str("::");
    }
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    out.push_str(&segs.join("::"));
    out
}

/// What each generator emits, at the three granularities the pipeline schedules.
pub(crate) trait Emit {
    /// This generator's modules for one kind of a package (the bulk of the output: a package's
    /// kinds are spread over the workers).
    fn emit_kind(self, ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Vec<Module>;

    /// This generator's modules for one package, besides its kinds' (files beside the types,
    /// version modules).
    fn emit_package(self, ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module>;

    /// This generator's modules that span packages.
    fn emit_global(self, ctx: &Ctx<'_>) -> Vec<Module>;
}

impl Emit for Generator {
    /// This generator's modules for one kind of a package (the bulk of the output: a package's
    /// kinds are spread over the workers).
    fn emit_kind(self, ctx: &Ctx<'_>, pkg: &Package, kind: &Kind) -> Vec<Module> {
        match self {
            Generator::ApplyConfiguration => applyconfiguration::kind(ctx, pkg, kind),
            Generator::Client => clientset::kind(ctx, pkg, kind),
            Generator::Lister => listers::kind(ctx, pkg, kind),
            Generator::Informer => informers::kind(ctx, pkg, kind),
            Generator::Deepcopy | Generator::Register | Generator::Crd => Vec::new(),
        }
    }

    /// This generator's modules for one package, besides its kinds' (files beside the types,
    /// version modules).
    fn emit_package(self, ctx: &Ctx<'_>, pkg: &Package) -> Vec<Module> {
        match self {
            Generator::Deepcopy => deepcopy::package(ctx, pkg),
            Generator::Register => register::package(ctx, pkg),
            Generator::ApplyConfiguration => applyconfiguration::package(ctx, pkg),
            Generator::Client => clientset::package(ctx, pkg),
            Generator::Lister => listers::package(ctx, pkg),
            Generator::Informer => informers::package(ctx, pkg),
            Generator::Crd => crd::package(ctx, pkg),
        }
    }

    /// This generator's modules that span packages.
    fn emit_global(self, ctx: &Ctx<'_>) -> Vec<Module> {
        match self {
            Generator::ApplyConfiguration => applyconfiguration::global(ctx),
            Generator::Client => clientset::global(ctx),
            Generator::Lister => listers::global(ctx),
            Generator::Informer => informers::global(ctx),
            Generator::Deepcopy | Generator::Register | Generator::Crd => Vec::new(),
        }
    }
}
