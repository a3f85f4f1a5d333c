//! The run: the stages connected, package by package, on every core.
//!
//! ```text
//!             ┌─ worker ──────────────────────────────────────────────┐
//! packages ──▶│ scan ─▶ tags ─▶ model + type table ─▶ crds, apply     │──▶ model::finish ─▶ crd::assemble
//!             └───────────────────────────────────────────────────────┘           │  (plain data only)
//!             ┌─ worker ──────────────────────────────────────────────┐           ▼
//!             │ emit (package) ─▶ format ─▶ file texts                │──▶ write (stage, compare)
//!             └───────────────────────────────────────────────────────┘
//!                                  then: emit (global) ─▶ format ─▶ write ─▶ commit
//! ```
//!
//! `syn` values are not `Send`, so each worker owns its packages end to end:
//! it parses them, builds their model and type table, then drops the syntax trees and derives
//! their CRD schemas and apply configurations from the table. With fewer packages than cores
//! (one large group), a package's files are cut into pieces of whole items that the workers
//! parse side by side and put together as plain data ([`scan_split`]), and the two derivations
//! run as jobs of their own, so one large package still uses every core. Later a worker emits,
//! formats and hands over the files as text. Only plain data crosses threads — the model, the
//! tables, the CRDs, and `(path, text)` pairs on a bounded channel to the thread that writes
//! them — so memory holds the model plus a few files, however large the tree.
//!
//! This file wires the stages (`analyze`, `render`, `modules`); `pool.rs` is the thread pool and
//! `split.rs` the split scan of a large package.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::applyconfig::{self, AcPackage, AcPackages};
use crate::config::Generator;
use crate::config::Settings;
use crate::crd::{self, Crd, CrdFile, PackageCrds};
use crate::emit::Module;
use crate::emit::{CrdSource, Ctx, Emit, Paths};
use crate::error::{Error, Result};
use crate::model::types::PackageTypes;
use crate::model::{self, Model, ModelOptions, Package};
use crate::output::{Header, Layout, Modules};
use crate::scan::{self, PackageRef};

mod pool;
mod split;

use pool::{parallel, workers};
use split::scan_split;

/// The first stages of a run, done: the model and the CRDs.
pub(crate) struct Analysis {
    pub model: Model,
    pub crds: Vec<Crd>,
    /// The CRDs as YAML files (names from the template).
    pub crd_files: Vec<CrdFile>,
    pub warnings: Vec<String>,
    pub inputs: Vec<PathBuf>,
    /// The apply configurations of each package (when the generator runs).
    pub apply_configs: AcPackages,
}

impl Analysis {
    /// What the emitters read of this run: the model, the CRDs and the apply configurations,
    /// and the options that shape what they write.
    fn ctx<'a>(
        &'a self,
        settings: &Settings,
        paths: &'a Paths,
        crd_source: CrdSource<'a>,
    ) -> Ctx<'a> {
        Ctx {
            model: &self.model,
            paths,
            crds: &self.crds,
            fake_clientset: settings.fake_clientset,
            group_features: settings.group_features,
            crd_files: &self.crd_files,
            crd_source,
            apply_configs: &self.apply_configs,
            apply_verbs: settings.apply_verbs,
            apply_feature: settings.apply_feature.clone(),
            fake_crds: settings.fake_crds,
        }
    }
}

/// What one worker learned of one package.
struct Scanned {
    package: Result<Package>,
    /// The package's types, kept when its CRDs and apply configurations are derived by jobs of
    /// their own.
    types: Option<PackageTypes>,
    crds: Option<PackageCrds>,
    apply: Option<Result<AcPackage>>,
}

/// What a job of the second pass derives from a package's types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Derive {
    /// The CRD schemas.
    Crds,
    /// The apply configurations.
    Apply,
}

/// The result of a [`Derive`] job.
enum Derived {
    Crds(Option<PackageCrds>),
    Apply(Result<AcPackage>),
}

/// Scans every package, builds and checks the model, and assembles the CRDs.
pub(crate) fn analyze(settings: &Settings, parallel_ok: bool) -> Result<Analysis> {
    let refs = scan::packages(
        &settings.apis_dir,
        &settings.groups,
        settings.crd_every_version,
    )?;
    // The fake clientset needs to know which kinds have CRDs even when another run writes them.
    let want_crds = settings.generators.contains(&Generator::Crd) || settings.fake_crds;
    let want_apply = settings.generators.contains(&Generator::ApplyConfiguration);
    let opts = ModelOptions {
        plural_exceptions: settings.plural_exceptions.clone(),
    };
    let stop = AtomicBool::new(false);
    let cores = if parallel_ok { workers(usize::MAX) } else { 1 };
    // Fewer packages than cores (one large group): each package's files are cut into pieces
    // of whole items, parsed on every core and put together as plain data; its CRDs and apply
    // configurations are then derived from its type table by jobs of their own.
    let split = refs.len() < cores;
    let crds_of = |types: &PackageTypes, p: &Package| {
        if want_crds {
            crd::package_crds(types, p)
        } else {
            None
        }
    };
    let apply_of = |types: &PackageTypes, p: &Package| {
        want_apply.then(|| applyconfig::package(types, p, &settings.external_apply_configurations))
    };
    let scan_one = |i: usize| -> (Vec<PathBuf>, Result<Scanned>) {
        let r: &PackageRef = &refs[i];
        let src = match scan::read(r) {
            Ok(src) => src,
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                return (Vec::new(), Err(e));
            }
        };
        let inputs = src.files.iter().map(|f| f.path.clone()).collect();
        let package = model::build_package(&src, &opts);
        let types = (package.is_ok() && (want_crds || want_apply)).then(|| PackageTypes::new(&src));
        // The syntax trees go here; what follows reads plain data.
        drop(src);
        let (crds, apply) = match (&package, &types) {
            (Ok(p), Some(t)) => (crds_of(t, p), apply_of(t, p)),
            _ => (None, None),
        };
        let scanned = Scanned {
            package,
            types: None,
            crds,
            apply,
        };
        if scanned.package.is_err() || scanned.apply.as_ref().is_some_and(Result::is_err) {
            stop.store(true, Ordering::Relaxed);
        }
        (inputs, Ok(scanned))
    };
    let mut results = if split {
        scan_split(&refs, cores, &opts, want_crds || want_apply)
    } else {
        parallel(refs.len(), cores.min(refs.len()).max(1), &stop, &scan_one)
    };
    if split && !stop.load(Ordering::Relaxed) {
        // Each package's CRDs and apply configurations, on every core.
        let jobs: Vec<(usize, Derive)> = results
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Some((_, Ok(s))) if s.types.is_some()))
            .flat_map(|(i, _)| {
                let crds = want_crds.then_some((i, Derive::Crds));
                let apply = want_apply.then_some((i, Derive::Apply));
                crds.into_iter().chain(apply)
            })
            .collect();
        let derive_one = |j: usize| -> Option<Derived> {
            let (i, what) = jobs[j];
            let Some((_, Ok(s))) = &results[i] else {
                return None;
            };
            let (Ok(p), Some(types)) = (&s.package, &s.types) else {
                return None;
            };
            Some(match what {
                Derive::Crds => Derived::Crds(crds_of(types, p)),
                Derive::Apply => Derived::Apply(apply_of(types, p)?),
            })
        };
        let derived = parallel(jobs.len(), cores.min(jobs.len()).max(1), &stop, &derive_one);
        for (&(i, _), d) in jobs.iter().zip(derived) {
            if let Some((_, Ok(s))) = &mut results[i] {
                s.types = None;
                match d.flatten() {
                    Some(Derived::Crds(c)) => s.crds = c,
                    Some(Derived::Apply(a)) => s.apply = Some(a),
                    None => {}
                }
            }
        }
    }
    // Report the first error in package order, as a sequential run would.
    let mut packages = Vec::with_capacity(refs.len());
    let mut crd_inputs = Vec::with_capacity(refs.len());
    let mut inputs = Vec::new();
    let mut first_err = None;
    let mut apply_configs = AcPackages::new();
    for r in results {
        let Some((files, scanned)) = r else { continue };
        inputs.extend(files);
        match scanned.and_then(|s| Ok((s.package?, s.crds, s.apply.transpose()?))) {
            Ok((p, c, a)) => {
                if let Some(a) = a {
                    apply_configs.insert((p.group_dir.clone(), p.version.clone()), a);
                }
                packages.push(p);
                crd_inputs.push(c);
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let (model, order) = model::finish(packages)?;
    let mut slots: Vec<Option<Option<PackageCrds>>> = crd_inputs.into_iter().map(Some).collect();
    let crd_inputs = order.iter().map(|&i| slots[i].take().flatten()).collect();
    let mut warnings = Vec::new();
    let crds = if want_crds {
        crd::assemble(&model, crd_inputs, &mut warnings)?
    } else {
        Vec::new()
    };
    let crd_files = crd::render(&crds, &settings.crd_file_name, &settings.boilerplate)?;
    Ok(Analysis {
        model,
        crds,
        crd_files,
        warnings,
        inputs,
        apply_configs,
    })
}

/// The client-tree module every run that writes the client tree has.
fn client_root() -> Module {
    Module::client(
        &[],
        "Client code generated by kube-codegen: the versioned clientset, listers and informers.",
        String::new(),
    )
}

/// Whether this run writes the client tree at all.
fn runs_client_tree(settings: &Settings) -> bool {
    settings.generators.iter().any(|g| g.client_dir().is_some())
}

/// The modules of the work item spanning packages, given what the package items defined.
fn global_modules(
    ctx: &Ctx<'_>,
    settings: &Settings,
    defined: &[Vec<String>],
    external: &[&str],
) -> Modules {
    let mut modules = vec![client_root()];
    for g in &settings.generators {
        modules.extend(g.emit_global(ctx));
    }
    let mut out = Modules::new(modules);
    for path in defined {
        out.declare_client(path);
    }
    for dir in external {
        out.declare_client(&[dir.to_string()]);
    }
    out
}

/// How many kinds one work item emits.
const KINDS_PER_ITEM: usize = 8;

/// A unit of emission work: plain data, so that any worker can take it.
enum Item {
    /// The files beside the types of a package (deep copy, register, CRD impls): those of
    /// one generator, or of all when `None`.
    Apis(usize, Option<Generator>),
    /// The client, lister and informer files of some kinds of a package.
    Kinds(usize, std::ops::Range<usize>),
    /// The version module of a package in one generator's client tree (it declares the
    /// package's kinds' modules there).
    Versions(usize, Generator),
}

impl Item {
    fn package(&self) -> usize {
        match self {
            Item::Apis(p, _) | Item::Kinds(p, _) | Item::Versions(p, _) => *p,
        }
    }
}

/// Runs `items` on every core; each worker emits and formats an item's modules and sends the
/// files to this thread, which hands them to `sink`. `declared` holds, per package, client
/// modules rendered by earlier items that an item's modules declare as children. Returns, per
/// item, its package and the client modules it defined.
#[allow(clippy::too_many_arguments)]
fn run_items<'a>(
    settings: &'a Settings,
    analysis: &'a Analysis,
    layout: &Layout,
    header: &Header,
    crd_source: CrdSource<'a>,
    items: &[Item],
    declared: &[(usize, Vec<Vec<String>>)],
    sink: &mut dyn FnMut(PathBuf, String) -> Result<()>,
) -> Result<Vec<(usize, Vec<Vec<String>>)>> {
    let model = &analysis.model;
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::sync_channel::<(PathBuf, String)>(64);
    let emit = |i: usize, tx: &mpsc::SyncSender<(PathBuf, String)>| {
        let paths = Paths::new(settings);
        let ctx = analysis.ctx(settings, &paths, crd_source);
        let item = &items[i];
        let pkg = &model.packages[item.package()];
        let mut modules = Vec::new();
        for g in &settings.generators {
            match item {
                Item::Apis(_, only) if g.client_dir().is_none() && only.is_none_or(|o| o == *g) => {
                    modules.extend(g.emit_package(&ctx, pkg));
                }
                Item::Versions(_, only) if only == g => {
                    modules.extend(g.emit_package(&ctx, pkg));
                }
                Item::Kinds(_, range) => {
                    for kind in &pkg.kinds[range.clone()] {
                        modules.extend(g.emit_kind(&ctx, pkg, kind));
                    }
                }
                _ => {}
            }
        }
        let mut modules = Modules::new(modules);
        let tree = match item {
            Item::Versions(_, g) => g.client_dir(),
            _ => None,
        };
        for (p, defined) in declared {
            if *p == item.package() {
                for path in defined {
                    if tree.is_some_and(|t| path.first().is_some_and(|f| f == t)) {
                        modules.declare_client(path);
                    }
                }
            }
        }
        let result = modules.render(layout, header, &mut |path, text| {
            tx.send((path, text))
                .map_err(|_| Error::file("", "internal error: the writer stopped"))
        });
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        result.map(|()| (item.package(), modules.defined_client_paths()))
    };
    let n_workers = workers(items.len());
    let mut sink_err = None;
    let results = std::thread::scope(|s| {
        let (stop, emit) = (&stop, &emit);
        let n = items.len();
        let producer = s.spawn(move || {
            let tx = tx;
            parallel(n, n_workers, stop, &|i| emit(i, &tx))
        });
        for (path, text) in rx.iter() {
            if sink_err.is_none()
                && let Err(e) = sink(path, text)
            {
                stop.store(true, Ordering::Relaxed);
                sink_err = Some(e);
            }
        }
        producer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    if let Some(e) = sink_err {
        return Err(e);
    }
    results.into_iter().flatten().collect()
}

/// Emits, formats and hands to `sink` every file of the run in `layout`, the per-package work
/// on every core. `external` names client-tree folders of generators not in this run that an
/// earlier run wrote (they stay declared).
pub(crate) fn render(
    settings: &Settings,
    analysis: &Analysis,
    layout: &Layout,
    external: &[&str],
    sink: &mut dyn FnMut(PathBuf, String) -> Result<()>,
) -> Result<()> {
    let model = &analysis.model;
    let header = Header::new(&settings.boilerplate);
    let apis_root = layout.apis_root();
    let crd_source = CrdSource::Files {
        crd_dir: &settings.crd_dir,
        apis_root: &apis_root,
    };
    // Phase 1: every kind's own files (a package's kinds spread over the workers, so one large
    // group is no slower than many small ones) and the files beside the types. Phase 2: the
    // version modules, which declare the kinds' modules. Phase 3 (below): what spans packages.
    let mut items = Vec::new();
    for (p, pkg) in model.packages.iter().enumerate() {
        match layout {
            // Each generator's file beside the types is an item of its own, so that a large
            // package's deep copy, register and CRD files are formatted side by side.
            Layout::Tree { .. } => items.extend(
                settings
                    .generators
                    .iter()
                    .filter(|g| g.client_dir().is_none())
                    .map(|&g| Item::Apis(p, Some(g))),
            ),
            // The included layout's `<version>.rs` declares all of them: one item writes it.
            Layout::Included { .. } => items.push(Item::Apis(p, None)),
        }
        let mut start = 0;
        while start < pkg.kinds.len() {
            let end = (start + KINDS_PER_ITEM).min(pkg.kinds.len());
            items.push(Item::Kinds(p, start..end));
            start = end;
        }
    }
    let kind_paths = run_items(
        settings,
        analysis,
        layout,
        &header,
        crd_source,
        &items,
        &[],
        sink,
    )?;
    let versions: Vec<Item> = (0..model.packages.len())
        .flat_map(|p| {
            settings
                .generators
                .iter()
                .filter(|g| g.client_dir().is_some())
                .map(move |&g| Item::Versions(p, g))
        })
        .collect();
    let version_paths = run_items(
        settings,
        analysis,
        layout,
        &header,
        crd_source,
        &versions,
        &kind_paths,
        sink,
    )?;
    let defined: Vec<Vec<String>> = version_paths.into_iter().flat_map(|(_, p)| p).collect();
    if runs_client_tree(settings) {
        let paths = Paths::new(settings);
        let ctx = analysis.ctx(settings, &paths, crd_source);
        global_modules(&ctx, settings, &defined, external).render(layout, &header, sink)?;
    }
    Ok(())
}

/// Every module of the run in this thread, as one tree (for the proc macro's inline modules).
pub(crate) fn modules(settings: &Settings, analysis: &Analysis) -> Modules {
    let paths = Paths::new(settings);
    let ctx = analysis.ctx(settings, &paths, CrdSource::Inline);
    let mut all = Modules::default();
    for pkg in &analysis.model.packages {
        for g in &settings.generators {
            all.extend(g.emit_package(&ctx, pkg));
            for kind in &pkg.kinds {
                all.extend(g.emit_kind(&ctx, pkg, kind));
            }
        }
    }
    if runs_client_tree(settings) {
        let mut global = vec![client_root()];
        for g in &settings.generators {
            global.extend(g.emit_global(&ctx));
        }
        all.extend(global);
    }
    all
}

/// Renders the CRD YAML files into `crd_dir` (when the `crd` generator runs: a client run
/// assembles the CRDs only to know which kinds the fake clientset installs).
pub(crate) fn crd_files(
    settings: &Settings,
    analysis: &Analysis,
    sink: &mut dyn FnMut(PathBuf, String) -> Result<()>,
) -> Result<()> {
    if !settings.generators.contains(&Generator::Crd) {
        return Ok(());
    }
    for f in &analysis.crd_files {
        sink(settings.crd_dir.join(&f.file_name), f.text.clone())?;
    }
    Ok(())
}
