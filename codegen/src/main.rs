//! The `kube-codegen` command: Kubernetes' code-generator for Rust API types.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};

/// The generator allocates many small values (tokens, strings) on every core: mimalloc is much
/// faster at that than the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use kube_codegen::scaffold::{self, Changes, ScaffoldError};
use kube_codegen::{Config, Error, Generator, Report};

/// Generate deep-copy and Resource impls, registration, typed clientsets, listers, informers and
/// CRDs from Rust API types tagged as Go users tag theirs (+genclient, +groupName=, …).
///
/// Input: <apis-dir>/<group>/<version>/*.rs, with package tags in each version folder's mod.rs.
/// Output: zz_generated_*.rs beside the types, the client tree under --output-dir, and
/// CustomResourceDefinition YAML under --crd-dir (default <output-dir>/crd).
#[derive(Parser, Debug)]
#[command(name = "kube-codegen", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every generator (deepcopy, register, applyconfiguration, client, lister, informer,
    /// crd).
    All(Opts),
    /// Clone and kube::Resource impls beside the types (zz_generated_deepcopy.rs).
    Deepcopy(Opts),
    /// Group/version constants and the resource registry (zz_generated_register.rs).
    Register(Opts),
    /// Apply configurations for server-side apply, with extract_<kind> functions
    /// (<output-dir>/applyconfiguration).
    Applyconfiguration(Opts),
    /// The versioned clientset and one typed client per kind (<output-dir>/clientset).
    Client(Opts),
    /// Namespace-indexed listers over informer caches (<output-dir>/listers).
    Lister(Opts),
    /// Shared informers and their factory (<output-dir>/informers).
    Informer(Opts),
    /// CustomResourceDefinition YAML per kind (--crd-dir) and kube::CustomResourceExt impls
    /// beside the types (zz_generated_crd.rs).
    Crd(Opts),
    /// Create NAME/, a new operator project (Cargo crate, build.rs, main.rs with a Manager,
    /// deploy/ manifests, Dockerfile, PROJECT) that builds with no API yet.
    New(NewArgs),
    /// Add an API (a kind) or a controller to the project in the current folder.
    Add {
        /// What to add.
        #[command(subcommand)]
        what: AddCommand,
    },
    /// Write deploy/role.yaml from the +kubebuilder:rbac markers under src/.
    Rbac(ManifestArgs),
    /// Write deploy/crds/ from the API types, deploy/role.yaml from the RBAC markers and
    /// deploy/webhooks.yaml from the webhook markers.
    Manifests(ManifestArgs),
    /// Build and run the project's operator here, against the current kubeconfig's cluster
    /// (or an in-memory API server with --embedded), as operator-sdk's `run --local`.
    Run(RunArgs),
}

#[derive(Subcommand, Debug)]
enum AddCommand {
    /// A kind: its types under src/pkg/apis/<group>/<version>/, a sample under
    /// deploy/samples/ and its CRD under deploy/crds/.
    Api(ApiArgs),
    /// A controller for a kind of the project: src/controller/<kind>.rs registered in
    /// src/main.rs, and a test on the in-memory API server in tests/.
    Controller(ControllerArgs),
    /// Webhooks for a kind of the project (Kubebuilder's `create webhook`): a defaulter, a
    /// validator and/or conversion in src/webhook/, their +kubebuilder:webhook markers, their
    /// registration in src/main.rs, deploy/webhooks.yaml and a test in tests/.
    Webhook(WebhookArgs),
}

/// Options every project command shares.
#[derive(Args, Debug)]
struct ProjectArgs {
    /// The project's folder (the one holding PROJECT).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project_dir: PathBuf,

    /// Print nothing on success (what was written, left unchanged, how long it took).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct NewArgs {
    /// The project's name: a DNS-1123 label that is also a crate name (eru-operator).
    #[arg(value_name = "NAME")]
    name: String,

    /// The domain of the project's API groups (meitu.com for mtsre.meitu.com).
    #[arg(long, value_name = "DOMAIN")]
    domain: Option<String>,

    /// Depend on the kube-codegen crates of this checkout by path instead of by version.
    #[arg(long, value_name = "DIR")]
    kube_codegen_path: Option<PathBuf>,

    /// Write into NAME/ even though it exists and has files (files of the same name are
    /// replaced).
    #[arg(long)]
    force: bool,

    /// Print nothing on success (what was written and how long it took).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct ApiArgs {
    /// The kind's group and version, GROUP/VERSION (mtsre.meitu.com/v1).
    #[arg(long, value_name = "GROUP/VERSION")]
    api_version: String,

    /// The kind, UpperCamelCase (Eru).
    #[arg(long, value_name = "KIND")]
    kind: String,

    /// Whether objects of the kind live in namespaces (false: cluster-scoped).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    namespaced: bool,

    /// The resource name when not the kind's regular plural in lower case.
    #[arg(long, value_name = "PLURAL")]
    plural: Option<String>,

    #[command(flatten)]
    project: ProjectArgs,
}

#[derive(Args, Debug)]
struct ControllerArgs {
    /// The kind's group and version, GROUP/VERSION, as given to `add api`.
    #[arg(long, value_name = "GROUP/VERSION")]
    api_version: String,

    /// The kind the controller reconciles, as given to `add api`.
    #[arg(long, value_name = "KIND")]
    kind: String,

    #[command(flatten)]
    project: ProjectArgs,
}

#[derive(Args, Debug)]
struct WebhookArgs {
    /// The kind's group and version, GROUP/VERSION, as given to `add api`.
    #[arg(long, value_name = "GROUP/VERSION")]
    api_version: String,

    /// The kind the webhooks are for, as given to `add api`.
    #[arg(long, value_name = "KIND")]
    kind: String,

    /// A defaulting (mutating) webhook: a Defaulter filling in what users leave out.
    #[arg(long)]
    defaulting: bool,

    /// A validating webhook: a Validator of creates, updates and deletes.
    #[arg(long)]
    validation: bool,

    /// A conversion webhook with this version as the hub and the kind's other versions as
    /// its spokes; the CRD gets spec.conversion.
    #[arg(long)]
    conversion: bool,

    #[command(flatten)]
    project: ProjectArgs,
}

#[derive(Args, Debug)]
struct ManifestArgs {
    /// Only check that the files are up to date: exit 1 naming the first that is not.
    #[arg(long)]
    verify_only: bool,

    #[command(flatten)]
    project: ProjectArgs,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Run on this machine (the only mode: the operator runs as a local process).
    #[arg(long)]
    local: bool,

    /// Watch only this namespace (the operator's --namespace).
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,

    /// Run against an in-memory API server instead of the current kubeconfig's cluster.
    #[arg(long)]
    embedded: bool,

    /// More flags for the operator, after `--` (e.g. -- --leader-elect=false).
    #[arg(last = true, value_name = "OPERATOR FLAGS")]
    operator_args: Vec<String>,

    /// The project's folder (the one holding PROJECT).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project_dir: PathBuf,
}

#[derive(Args, Debug)]
struct Opts {
    /// Root of the API types: <apis-dir>/<group>/<version>/*.rs.
    #[arg(long, value_name = "DIR", default_value = "pkg/apis")]
    apis_dir: PathBuf,

    /// Group-versions to generate, as "<group>:<v1>,<v2> <group2>:<v1>" (group = folder name
    /// under --apis-dir). Default: every <group>/<version> folder whose version looks like v1,
    /// v1beta1 or v2alpha1.
    #[arg(long, value_name = "SPEC")]
    groups: Option<String>,

    /// Root of the generated client tree (clientset/, listers/, informers/).
    #[arg(long, value_name = "DIR", default_value = "pkg/client")]
    output_dir: PathBuf,

    /// Rust module path of --apis-dir in the crate, used by generated code to name the types.
    #[arg(long, value_name = "PATH", default_value = "crate::pkg::apis")]
    apis_module: String,

    /// Rust module path of --output-dir in the crate, used for references inside the client.
    #[arg(long, value_name = "PATH", default_value = "crate::pkg::client")]
    output_module: String,

    /// Rust path of the runtime crate that generated code links against.
    #[arg(long, value_name = "PATH", default_value = "::kube_codegen_runtime")]
    runtime_crate: String,

    /// File whose content is put at the top of every generated file (a licence header).
    #[arg(long, value_name = "FILE")]
    header_file: Option<PathBuf>,

    /// Exceptions to the plural rules, as Kind:plural[,Kind:plural…]; repeatable.
    #[arg(long, value_name = "LIST")]
    plural_exceptions: Vec<String>,

    /// Folder the crd generator writes CustomResourceDefinition YAML files to (default:
    /// <output-dir>/crd).
    #[arg(long, value_name = "DIR")]
    crd_dir: Option<PathBuf>,

    /// CRD file name template; {plural}, {group}, {singular} and {kind} are replaced.
    #[arg(long, value_name = "TEMPLATE", default_value = "{plural}.{group}.yaml")]
    crd_file_name: String,

    /// Also generate clientset/versioned/fake, the real Clientset over the in-memory API server
    /// (needs kube-codegen-runtime's "fake" feature).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    fake_clientset: bool,

    /// Whether the typed clients get apply/apply_status over generated apply configurations
    /// (client-gen's --apply-configuration-package). Default: whether the applyconfiguration
    /// generator runs too; pass true when generating the client in a separate run.
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    apply_configurations: Option<bool>,

    /// Put the apply configurations and the typed clients' apply verbs behind this Cargo
    /// feature, so that only crates enabling it compile them.
    #[arg(long, value_name = "FEATURE")]
    apply_configurations_feature: Option<String>,

    /// Apply configurations of types this run does not generate (applyconfiguration-gen's
    /// --external-applyconfigurations), comma-separated: <type path>=<configuration module>
    /// (the type's configuration is <module>::<Type>ApplyConfiguration),
    /// <module path>::*=<configuration module> (every type below the module), or
    /// kube-codegen-kubernetes (every built-in type, through k8s-openapi or
    /// kube_codegen_kubernetes::apis, to kube-codegen-kubernetes' configurations: its feature
    /// apply); repeatable.
    #[arg(long, value_name = "LIST")]
    external_applyconfigurations: Vec<String>,

    /// Whether the API packages implement kube::CustomResourceExt (the crd generator's
    /// zz_generated_crd.rs), so the fake clientset installs each kind's CRD. Default: whether
    /// the crd generator runs too; pass true when generating the client in a separate run.
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    crd_impls: Option<bool>,
    /// Put every API group of the client tree behind a Cargo feature named like the group's
    /// module (#[cfg(feature = "apps")]), so a crate with many groups compiles only those enabled.
    #[arg(long)]
    group_features: bool,

    /// Only check that the generated files are up to date: exit 1 with a short diff if not.
    #[arg(long)]
    verify_only: bool,

    /// Log progress (also set by RUST_LOG).
    #[arg(short, long)]
    verbose: bool,

    /// Print nothing on success (what was written, left unchanged and removed, and how long
    /// it took).
    #[arg(short, long)]
    quiet: bool,
}

fn config(opts: &Opts, generators: BTreeSet<Generator>) -> Config {
    let mut c = Config::new()
        .apis_dir(&opts.apis_dir)
        .output_dir(&opts.output_dir)
        .apis_module(&opts.apis_module)
        .client_module(&opts.output_module)
        .runtime_crate(&opts.runtime_crate)
        .crd_file_name(&opts.crd_file_name)
        .fake_clientset(opts.fake_clientset)
        .group_features(opts.group_features)
        .generators(generators);
    if let Some(spec) = &opts.groups {
        c = c.groups(spec);
    }
    if let Some(h) = &opts.header_file {
        c = c.header_file(h);
    }
    for spec in &opts.plural_exceptions {
        c = c.plural_exceptions(spec);
    }
    if let Some(d) = &opts.crd_dir {
        c = c.crd_dir(d);
    }
    if let Some(yes) = opts.apply_configurations {
        c = c.apply_configurations(yes);
    }
    if let Some(feature) = &opts.apply_configurations_feature {
        c = c.apply_configurations_feature(feature);
    }
    for spec in &opts.external_applyconfigurations {
        c = c.external_apply_configurations(spec);
    }
    if let Some(yes) = opts.crd_impls {
        c = c.crd_impls(yes);
    }
    c
}

/// An error as the CLI prints it: option errors name the flag.
fn report(e: &Error) -> String {
    match e {
        Error::Config { key, message } => format!("error: {}: {message}", key.cli_flag()),
        other => other.to_string(),
    }
}

/// A scaffold error as the CLI prints it.
fn report_scaffold(e: &ScaffoldError) -> String {
    match e {
        ScaffoldError::Generate(inner) => report(inner),
        other => format!("error: {other}"),
    }
}

/// What a generator run did, on stderr.
fn print_report(report: &Report, started: Instant) {
    for path in &report.written {
        eprintln!("wrote     {}", path.display());
    }
    for path in &report.removed {
        eprintln!("removed   {}", path.display());
    }
    let unchanged = report.files.len().saturating_sub(report.written.len());
    eprintln!(
        "kube-codegen: {} written, {unchanged} unchanged, {} removed in {:.2}s",
        report.written.len(),
        report.removed.len(),
        started.elapsed().as_secs_f64()
    );
}

/// What a scaffold command did, on stderr.
fn print_changes(root: &Path, changes: &Changes, started: Instant) {
    let shown = |path: &Path| {
        if root == Path::new(".") {
            path.display().to_string()
        } else {
            root.join(path).display().to_string()
        }
    };
    for path in &changes.created {
        eprintln!("created   {}", shown(path));
    }
    for path in &changes.updated {
        eprintln!("updated   {}", shown(path));
    }
    eprintln!(
        "kube-codegen: {} created, {} updated, {} unchanged in {:.2}s",
        changes.created.len(),
        changes.updated.len(),
        changes.unchanged.len(),
        started.elapsed().as_secs_f64()
    );
}

fn init_logging(verbose: bool) {
    let filter = if verbose { "info" } else { "warn" };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(filter)),
        )
        .with_writer(std::io::stderr)
        .without_time()
        .init();
}

fn scaffold_command(command: Command, started: Instant) -> ExitCode {
    let (root, quiet, result) = match command {
        Command::New(a) => {
            let opts = scaffold::NewOptions {
                name: a.name.clone(),
                domain: a.domain,
                kube_codegen_path: a.kube_codegen_path,
                force: a.force,
            };
            (
                PathBuf::from(&a.name),
                a.quiet,
                scaffold::new_project(Path::new("."), &opts),
            )
        }
        Command::Add {
            what: AddCommand::Api(a),
        } => {
            let opts = scaffold::ApiOptions {
                api_version: a.api_version,
                kind: a.kind,
                namespaced: a.namespaced,
                plural: a.plural,
            };
            let result = scaffold::add_api(&a.project.project_dir, &opts);
            (a.project.project_dir, a.project.quiet, result)
        }
        Command::Add {
            what: AddCommand::Controller(a),
        } => {
            let opts = scaffold::ControllerOptions {
                api_version: a.api_version,
                kind: a.kind,
            };
            let result = scaffold::add_controller(&a.project.project_dir, &opts);
            (a.project.project_dir, a.project.quiet, result)
        }
        Command::Add {
            what: AddCommand::Webhook(a),
        } => {
            let opts = scaffold::WebhookOptions {
                api_version: a.api_version,
                kind: a.kind,
                defaulting: a.defaulting,
                validation: a.validation,
                conversion: a.conversion,
            };
            let result = scaffold::add_webhook(&a.project.project_dir, &opts);
            (a.project.project_dir, a.project.quiet, result)
        }
        Command::Rbac(a) => {
            let result = scaffold::rbac(&a.project.project_dir, a.verify_only);
            (a.project.project_dir, a.project.quiet, result)
        }
        Command::Manifests(a) => {
            let result = scaffold::manifests(&a.project.project_dir, a.verify_only);
            (a.project.project_dir, a.project.quiet, result)
        }
        Command::Run(a) => return run_local(&a),
        _ => return ExitCode::FAILURE,
    };
    match result {
        Ok(changes) => {
            if !quiet {
                print_changes(&root, &changes, started);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}", report_scaffold(&e));
            ExitCode::FAILURE
        }
    }
}

/// `run --local`: `cargo run` of the project's binary with the operator's flags.
fn run_local(a: &RunArgs) -> ExitCode {
    if !a.local {
        eprintln!(
            "error: --local is required: the operator runs on this machine (in a cluster, apply deploy/operator.yaml)"
        );
        return ExitCode::FAILURE;
    }
    let project = match scaffold::Project::read(&a.project_dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}", report_scaffold(&e));
            return ExitCode::FAILURE;
        }
    };
    let mut cmd = scaffold::cargo_command();
    cmd.current_dir(&a.project_dir)
        .args(["run", "--bin", &project.project_name, "--"]);
    if let Some(ns) = &a.namespace {
        cmd.args(["--namespace", ns]);
    }
    if a.embedded {
        cmd.arg("--embedded");
    }
    cmd.args(&a.operator_args);
    eprintln!(
        "kube-codegen: running {} in {}",
        project.project_name,
        a.project_dir.display()
    );
    match cmd.status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("error: cannot run cargo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let started = Instant::now();
    let (opts, generators): (&Opts, BTreeSet<Generator>) = match &cli.command {
        Command::All(o) => (o, Generator::ALL.into_iter().collect()),
        Command::Deepcopy(o) => (o, [Generator::Deepcopy].into()),
        Command::Register(o) => (o, [Generator::Register].into()),
        Command::Applyconfiguration(o) => (o, [Generator::ApplyConfiguration].into()),
        Command::Client(o) => (o, [Generator::Client].into()),
        Command::Lister(o) => (o, [Generator::Lister].into()),
        Command::Informer(o) => (o, [Generator::Informer].into()),
        Command::Crd(o) => (o, [Generator::Crd].into()),
        _ => {
            init_logging(false);
            return scaffold_command(cli.command, started);
        }
    };
    init_logging(opts.verbose);
    match kube_codegen::run(&config(opts, generators), opts.verify_only) {
        Ok(report) => {
            if !opts.quiet {
                print_report(&report, started);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}", report(&e));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every flag of every subcommand has a help text of its own, and `--help` shows it.
    #[test]
    fn every_flag_of_every_subcommand_is_documented() {
        let mut cli = Cli::command();
        cli.build();
        let mut subcommands = 0;
        for sub in cli.get_subcommands_mut() {
            if sub.get_name() == "help" {
                continue;
            }
            subcommands += 1;
            assert!(
                sub.get_about().is_some(),
                "{} has no description",
                sub.get_name()
            );
            let rendered = sub.render_long_help().to_string();
            let mut flags = 0;
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                if matches!(long, "help" | "version") {
                    continue;
                }
                flags += 1;
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                assert!(
                    help.split_whitespace().count() >= 4,
                    "{} --{long}: help {help:?} says too little",
                    sub.get_name()
                );
                assert!(
                    rendered.contains(&format!("--{long}")),
                    "{} --help does not show --{long}",
                    sub.get_name()
                );
            }
            if !matches!(sub.get_name(), "new" | "add" | "rbac" | "manifests" | "run") {
                assert_eq!(flags, 19, "{}: the flags of Opts", sub.get_name());
            }
        }
        assert_eq!(
            subcommands, 13,
            "all, deepcopy, register, applyconfiguration, client, lister, informer, crd, new, add, rbac, manifests, run"
        );
    }
}
