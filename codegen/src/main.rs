//! The `kube-codegen` command: Kubernetes' code-generator for Rust API types.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// The generator allocates many small values (tokens, strings) on every core: mimalloc is much
/// faster at that than the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use kube_codegen::{Config, Error, Generator};

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (opts, generators): (&Opts, BTreeSet<Generator>) = match &cli.command {
        Command::All(o) => (o, Generator::ALL.into_iter().collect()),
        Command::Deepcopy(o) => (o, [Generator::Deepcopy].into()),
        Command::Register(o) => (o, [Generator::Register].into()),
        Command::Applyconfiguration(o) => (o, [Generator::ApplyConfiguration].into()),
        Command::Client(o) => (o, [Generator::Client].into()),
        Command::Lister(o) => (o, [Generator::Lister].into()),
        Command::Informer(o) => (o, [Generator::Informer].into()),
        Command::Crd(o) => (o, [Generator::Crd].into()),
    };
    let filter = if opts.verbose { "info" } else { "warn" };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(filter)),
        )
        .with_writer(std::io::stderr)
        .without_time()
        .init();
    match kube_codegen::run(&config(opts, generators), opts.verify_only) {
        Ok(report) => {
            tracing::info!(
                files = report.files.len(),
                written = report.written.len(),
                removed = report.removed.len(),
                "done"
            );
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
            assert_eq!(flags, 16, "{}: the flags of Opts", sub.get_name());
        }
        assert_eq!(
            subcommands, 8,
            "all, deepcopy, register, applyconfiguration, client, lister, informer, crd"
        );
    }
}
