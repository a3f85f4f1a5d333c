//! Operator projects, as Kubebuilder and operator-sdk scaffold them for Go: [`new_project`]
//! writes a crate that builds and runs with no API yet, [`add_api`] adds a kind (types, sample,
//! CRD), [`add_controller`] a reconciler and its test, [`manifests`] regenerates
//! `deploy/crds/` and `deploy/role.yaml` (RBAC from `+kubebuilder:rbac` markers).
//!
//! Nothing a user wrote is overwritten: new files are created, and the scaffold's own files
//! (`main.rs`, `lib.rs`, the module lists) get lines inserted at their
//! `// +kube-codegen:scaffold:…` markers. Every command checks everything before it writes,
//! and writes each file whole (a temporary file renamed into place); `new` builds the project
//! in a temporary folder and renames it into place.

mod project;
mod rbac;
mod templates;
mod webhook;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub use project::{ApiResource, PROJECT_FILE, Project, Webhooks};

use crate::error::Error;
use crate::namer;
use templates::render;

/// The versions of the crates a scaffolded project depends on, as this kube-codegen is built
/// against them.
pub const KUBE_VERSION: &str = "5";
/// k8s-openapi's version.
pub const K8S_OPENAPI_VERSION: &str = "0.29";
/// k8s-openapi's feature naming the Kubernetes version.
pub const K8S_OPENAPI_FEATURE: &str = "v1_37";

/// A `cargo` command for a project: `$CARGO` (the cargo running this program, if one is) or
/// `cargo`, without the variables cargo sets for the package it runs or tests
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, `CARGO_CRATE_NAME`, `CARGO_BIN_EXE_*`, `OUT_DIR`,
/// …).
///
/// Those describe the package that started this program, not the project, and build scripts
/// that read them (ring's does) declare them as inputs: a child cargo that inherits them
/// finds those builds out of date and compiles them and everything above them again, and the
/// next plain `cargo build` does so once more. `kube-codegen run` and the tests that build
/// projects start cargo through this.
///
/// ```no_run
/// let status = kube_codegen::scaffold::cargo_command()
///     .args(["build", "--quiet"])
///     .current_dir("my-operator")
///     .status()?;
/// assert!(status.success());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn cargo_command() -> std::process::Command {
    let mut cmd =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_for_a_package = ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_BIN_"]
            .iter()
            .any(|p| name.starts_with(p))
            || matches!(
                name,
                "OUT_DIR"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_RUSTC_CURRENT_DIR"
            );
        if set_for_a_package {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// Why a scaffold command did nothing. Each names the flag, file or marker to fix.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The project name is not usable.
    #[error("NAME {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// Why not.
        reason: String,
    },
    /// `--domain` is not a DNS subdomain.
    #[error("--domain {domain:?}: {reason}")]
    InvalidDomain {
        /// The value given.
        domain: String,
        /// Why not.
        reason: String,
    },
    /// `--api-version` is not `GROUP/VERSION`.
    #[error("--api-version {value:?}: {reason}")]
    InvalidApiVersion {
        /// The value given.
        value: String,
        /// Why not.
        reason: String,
    },
    /// `--kind` is not an UpperCamelCase name.
    #[error("--kind {kind:?}: {reason}")]
    InvalidKind {
        /// The value given.
        kind: String,
        /// Why not.
        reason: String,
    },
    /// `--plural` is not a lower-case DNS label.
    #[error("--plural {plural:?}: {reason}")]
    InvalidPlural {
        /// The value given.
        plural: String,
        /// Why not.
        reason: String,
    },
    /// `new` would write into a folder that has files.
    #[error("{}: the folder exists and is not empty (pass --force to write into it)", dir.display())]
    NotEmpty {
        /// The folder.
        dir: PathBuf,
    },
    /// The folder holds no `PROJECT` file.
    #[error("{}: not a kube-codegen project (no PROJECT file; create one with `kube-codegen new NAME`)", dir.display())]
    NotAProject {
        /// The folder.
        dir: PathBuf,
    },
    /// The `PROJECT` file does not parse.
    #[error("{}: {reason}", path.display())]
    ProjectFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `add api` for a kind the project has.
    #[error("--kind {kind}: {group}/{version} {kind} exists already (see PROJECT)")]
    KindExists {
        /// The group.
        group: String,
        /// The version.
        version: String,
        /// The kind.
        kind: String,
    },
    /// `add controller` for a kind the project does not have.
    #[error(
        "--kind {kind}: {group}/{version} {kind} is not an API of this project; add it first with `kube-codegen add api --api-version={group}/{version} --kind={kind}`"
    )]
    NoSuchKind {
        /// The group.
        group: String,
        /// The version.
        version: String,
        /// The kind.
        kind: String,
    },
    /// `add controller` for a kind that has one.
    #[error("--kind {kind}: the controller exists already ({})", path.display())]
    ControllerExists {
        /// The kind.
        kind: String,
        /// Its file.
        path: PathBuf,
    },
    /// `add webhook` without `--defaulting`, `--validation` or `--conversion`.
    #[error("add webhook: give at least one of --defaulting, --validation, --conversion")]
    NoWebhookKind,
    /// `add webhook` for a kind and version that has webhooks.
    #[error("--kind {kind}: {group}/{version} {kind} has webhooks already ({}); add more by hand there", path.display())]
    WebhookExists {
        /// The group.
        group: String,
        /// The version.
        version: String,
        /// The kind.
        kind: String,
        /// Its webhook file.
        path: PathBuf,
    },
    /// `--conversion` for a kind with one version.
    #[error(
        "--conversion: {group}/{version} {kind} is the only version of {kind}; a conversion webhook converts between versions, so add another first (`kube-codegen add api --api-version={group}/<version> --kind={kind}`)"
    )]
    OneVersion {
        /// The group.
        group: String,
        /// The version.
        version: String,
        /// The kind.
        kind: String,
    },
    /// `--conversion` for a version that is not the one stored.
    #[error(
        "--conversion: {group}/{version} {kind} is not the storage version; give --api-version={group}/{storage}, the hub every other version converts to and from"
    )]
    NotStorage {
        /// The group.
        group: String,
        /// The version given.
        version: String,
        /// The kind.
        kind: String,
        /// The storage version (the first added).
        storage: String,
    },
    /// A kind's type was not found in its file.
    #[error("{}: no `pub struct {kind} {{` line to put the marker above", path.display())]
    NoKindType {
        /// The file.
        path: PathBuf,
        /// The kind.
        kind: String,
    },
    /// Two groups would share a folder under `src/pkg/apis`.
    #[error("--api-version {group}: its folder src/pkg/apis/{dir} holds the group {other} already")]
    GroupFolderTaken {
        /// The new group.
        group: String,
        /// The folder.
        dir: String,
        /// The group already there.
        other: String,
    },
    /// A file the command must not overwrite exists.
    #[error("{}: exists already; not overwritten", path.display())]
    FileExists {
        /// The file.
        path: PathBuf,
    },
    /// A scaffold file lost the marker where lines are inserted.
    #[error("{}: the line `// +kube-codegen:scaffold:{marker}` is missing; put it back where new {marker} go", path.display())]
    MarkerMissing {
        /// The file.
        path: PathBuf,
        /// The marker's name.
        marker: &'static str,
    },
    /// `--verify-only` found generated manifests that differ.
    #[error("{}: out of date with the code; run `kube-codegen manifests`", path.display())]
    Stale {
        /// The first file that differs.
        path: PathBuf,
    },
    /// Reading or generating failed (file:line errors for bad markers).
    #[error(transparent)]
    Generate(#[from] Error),
}

/// What a command did, file by file (paths relative to the project).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Files created.
    pub created: Vec<PathBuf>,
    /// Files changed.
    pub updated: Vec<PathBuf>,
    /// Files that already held what the command would write.
    pub unchanged: Vec<PathBuf>,
}

/// `kube-codegen new`'s options.
#[derive(Debug, Clone, Default)]
pub struct NewOptions {
    /// The project's name: the folder, the crate, the binary, the ServiceAccount.
    pub name: String,
    /// The domain of the project's API groups (`meitu.com`).
    pub domain: Option<String>,
    /// A kube-codegen checkout to depend on by path instead of by version.
    pub kube_codegen_path: Option<PathBuf>,
    /// Write into an existing non-empty folder.
    pub force: bool,
}

/// `kube-codegen add api`'s options.
#[derive(Debug, Clone)]
pub struct ApiOptions {
    /// `GROUP/VERSION`.
    pub api_version: String,
    /// The kind, UpperCamelCase.
    pub kind: String,
    /// Whether objects live in namespaces (default true).
    pub namespaced: bool,
    /// The resource name, if not the kind's regular plural.
    pub plural: Option<String>,
}

/// `kube-codegen add controller`'s options.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// `GROUP/VERSION`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
}

/// `kube-codegen add webhook`'s options (Kubebuilder's `create webhook`).
#[derive(Debug, Clone)]
pub struct WebhookOptions {
    /// `GROUP/VERSION`.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// A defaulter (mutating webhook).
    pub defaulting: bool,
    /// A validator (validating webhook).
    pub validation: bool,
    /// Conversion, this version being the hub.
    pub conversion: bool,
}

/// What [`Plan::insert`] puts at a marker.
enum Insert<'a> {
    /// Lines, as written.
    Lines(&'a str),
    /// `pub mod <name>;`, in rustfmt's order among the `pub mod` lines above the marker.
    Module(&'a str),
}

/// A set of file writes, checked before the first one is made.
#[derive(Debug, Default)]
struct Plan {
    /// Path relative to the root → (new text, whether the file may exist already).
    files: BTreeMap<PathBuf, (String, bool)>,
}

impl Plan {
    fn create(&mut self, path: impl Into<PathBuf>, text: String) {
        self.files.insert(path.into(), (text, false));
    }

    fn replace(&mut self, path: impl Into<PathBuf>, text: String) {
        self.files.insert(path.into(), (text, true));
    }

    /// Adds an insertion at `marker` of the file `rel`: into `fresh` when the command creates
    /// the file, else into the file as it is on disk.
    fn insert(
        &mut self,
        root: &Path,
        rel: &str,
        fresh: Option<String>,
        marker: &'static str,
        what: Insert<'_>,
    ) -> Result<(), ScaffoldError> {
        let text = match fresh {
            Some(text) => text,
            None => read(root, rel)?,
        };
        let path = root.join(rel);
        let text = match what {
            Insert::Lines(lines) => insert_at_marker(&path, &text, marker, lines)?,
            Insert::Module(module) => insert_module_at_marker(&path, &text, marker, module)?,
        };
        self.replace(rel, text);
        Ok(())
    }

    /// [`apply`](Self::apply), then `then`; if `then` fails, every file is put back as it was
    /// (created ones removed), so a failed command leaves nothing half-written.
    fn apply_then(
        self,
        root: &Path,
        then: impl FnOnce() -> Result<Changes, ScaffoldError>,
    ) -> Result<Changes, ScaffoldError> {
        let before: Vec<(PathBuf, Option<String>)> = self
            .files
            .keys()
            .map(|p| (root.join(p), fs::read_to_string(root.join(p)).ok()))
            .collect();
        // The folders the plan creates, deepest first, to remove again on failure.
        let mut new_dirs: Vec<PathBuf> = self
            .files
            .keys()
            .flat_map(|p| {
                root.join(p)
                    .ancestors()
                    .skip(1)
                    .take_while(|d| d.starts_with(root) && *d != root && !d.exists())
                    .map(Path::to_path_buf)
                    .collect::<Vec<_>>()
            })
            .collect();
        new_dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        new_dirs.dedup();
        let mut changes = self.apply(root)?;
        match then() {
            Ok(more) => {
                changes.created.extend(more.created);
                changes.updated.extend(more.updated);
                Ok(changes)
            }
            Err(e) => {
                for (path, old) in before {
                    match old {
                        Some(text) => {
                            let _ = write_whole(&path, &text);
                        }
                        None => {
                            let _ = fs::remove_file(&path);
                        }
                    }
                }
                for dir in new_dirs {
                    let _ = fs::remove_dir(&dir);
                }
                Err(e)
            }
        }
    }

    /// Checks that no file to create exists, then writes every file whole.
    fn apply(self, root: &Path) -> Result<Changes, ScaffoldError> {
        for (path, (_, may_exist)) in &self.files {
            if !may_exist && root.join(path).exists() {
                return Err(ScaffoldError::FileExists {
                    path: root.join(path),
                });
            }
        }
        let mut changes = Changes::default();
        for (path, (text, _)) in self.files {
            let full = root.join(&path);
            match fs::read_to_string(&full) {
                Ok(old) if old == text => {
                    changes.unchanged.push(path);
                    continue;
                }
                Ok(_) => changes.updated.push(path),
                Err(_) => changes.created.push(path),
            }
            write_whole(&full, &text)?;
        }
        Ok(changes)
    }
}

/// Writes `text` to `path` through a temporary file in the same folder, renamed into place.
fn write_whole(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create directory", e))?;
    let tmp = dir.join(format!(
        ".{}.kube-codegen-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    fs::write(&tmp, text).map_err(|e| Error::io(&tmp, "cannot write file", e))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io(path, "cannot write file", e).into()
    })
}

/// Inserts `lines` before the line holding `// +kube-codegen:scaffold:<marker>`, indented as
/// that line is.
fn insert_at_marker(
    path: &Path,
    text: &str,
    marker: &'static str,
    lines: &str,
) -> Result<String, ScaffoldError> {
    let needle = format!("// +kube-codegen:scaffold:{marker}");
    let Some(at) = text.find(&needle) else {
        return Err(ScaffoldError::MarkerMissing {
            path: path.to_path_buf(),
            marker,
        });
    };
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..at];
    let mut out = String::with_capacity(text.len() + lines.len());
    out.push_str(&text[..line_start]);
    for line in lines.lines() {
        if !line.is_empty() {
            out.push_str(indent);
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&text[line_start..]);
    Ok(out)
}

/// [`insert_at_marker`] for a list of `pub mod` lines: the new line goes where rustfmt's
/// module order puts it among those just above the marker.
fn insert_module_at_marker(
    path: &Path,
    text: &str,
    marker: &'static str,
    module: &str,
) -> Result<String, ScaffoldError> {
    let line = format!("pub mod {module};");
    let with_marker = insert_at_marker(path, text, marker, &line)?;
    let mut lines: Vec<&str> = with_marker.lines().collect();
    let Some(at) = lines.iter().position(|l| l.trim() == line) else {
        return Ok(with_marker);
    };
    let mut start = at;
    while start > 0 && lines[start - 1].trim_start().starts_with("pub mod ") {
        start -= 1;
    }
    lines[start..=at].sort_by_key(|l| l.trim().to_string());
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

fn read(root: &Path, rel: &str) -> Result<String, ScaffoldError> {
    let path = root.join(rel);
    fs::read_to_string(&path).map_err(|e| Error::io(&path, "cannot read file", e).into())
}

fn check_name(name: &str) -> Result<(), ScaffoldError> {
    let invalid = |reason: String| ScaffoldError::InvalidName {
        name: name.into(),
        reason,
    };
    if let Some(problem) = kube_codegen_apimachinery::validation::is_dns1123_label(name)
        .into_iter()
        .next()
    {
        return Err(invalid(problem));
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(invalid("a crate name must start with a letter".into()));
    }
    if matches!(
        name,
        "test" | "std" | "core" | "alloc" | "proc-macro" | "self" | "crate" | "super"
    ) {
        return Err(invalid(format!("{name:?} is reserved as a crate name")));
    }
    Ok(())
}

/// `GROUP/VERSION` checked: a group with a dot (CRDs need one), a Kubernetes version.
fn parse_api_version(value: &str) -> Result<(String, String), ScaffoldError> {
    let invalid = |reason: String| ScaffoldError::InvalidApiVersion {
        value: value.into(),
        reason,
    };
    let Some((group, version)) = value.split_once('/') else {
        return Err(invalid(
            "expected GROUP/VERSION, e.g. mtsre.meitu.com/v1".into(),
        ));
    };
    if group.is_empty() {
        return Err(invalid("the group is empty; expected GROUP/VERSION".into()));
    }
    if let Some(problem) = kube_codegen_apimachinery::validation::is_dns1123_subdomain(group)
        .into_iter()
        .next()
    {
        return Err(invalid(format!("group {group:?}: {problem}")));
    }
    if !group.contains('.') {
        return Err(invalid(format!(
            "group {group:?}: a CustomResourceDefinition's group must contain a dot (e.g. {group}.example.com)"
        )));
    }
    if !namer::is_version(version) {
        return Err(invalid(format!(
            "version {version:?}: expected v1, v2beta1, v1alpha3 …"
        )));
    }
    Ok((group.into(), version.into()))
}

fn check_kind(kind: &str) -> Result<(), ScaffoldError> {
    let ok = kind.starts_with(|c: char| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric())
        && kind.len() <= 63;
    if ok {
        Ok(())
    } else {
        Err(ScaffoldError::InvalidKind {
            kind: kind.into(),
            reason: "expected an UpperCamelCase name of ASCII letters and digits, e.g. Eru".into(),
        })
    }
}

/// The Cargo dependency line of one of our crates: by version, or by path on a checkout.
fn our_dep(crate_name: &str, folder: &str, path: Option<&Path>, extra: &str) -> String {
    match path {
        Some(root) => format!(
            "{crate_name} = {{ path = \"{}\"{extra} }}",
            root.join(folder).display().to_string().replace('\\', "/")
        ),
        None => format!(
            "{crate_name} = {{ version = \"{}\"{extra} }}",
            env!("CARGO_PKG_VERSION")
        ),
    }
}

/// `kube-codegen new NAME`: creates `parent/NAME`, a complete operator crate with no API yet.
pub fn new_project(parent: &Path, opts: &NewOptions) -> Result<Changes, ScaffoldError> {
    check_name(&opts.name)?;
    if let Some(domain) = &opts.domain
        && let Some(reason) = kube_codegen_apimachinery::validation::is_dns1123_subdomain(domain)
            .into_iter()
            .next()
    {
        return Err(ScaffoldError::InvalidDomain {
            domain: domain.clone(),
            reason,
        });
    }
    let dir = parent.join(&opts.name);
    let non_empty = fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some());
    if non_empty && !opts.force {
        return Err(ScaffoldError::NotEmpty { dir });
    }
    let kube_codegen_path = match &opts.kube_codegen_path {
        Some(p) => Some(
            fs::canonicalize(p).map_err(|e| Error::io(p, "cannot find --kube-codegen-path", e))?,
        ),
        None => None,
    };
    let path = kube_codegen_path.as_deref();
    let name = opts.name.as_str();
    let crate_name = name.replace('-', "_");
    let project = Project::new(name, opts.domain.as_deref());
    let vars: Vec<(&str, &str)> = vec![("name", name), ("crate", &crate_name)];
    let runtime_dep = our_dep(
        "kube-codegen-runtime",
        "codegen-runtime",
        path,
        ", features = [\"fake\"]",
    );
    let controller_runtime_dep = our_dep(
        "kube-controller-runtime",
        "controller-runtime",
        path,
        ", features = [\"embedded\"]",
    );
    let codegen_dep = our_dep(
        "kube-codegen",
        "codegen",
        path,
        ", default-features = false",
    );
    let mut cargo_vars = vars.clone();
    cargo_vars.extend([
        ("runtime_dep", runtime_dep.as_str()),
        ("controller_runtime_dep", controller_runtime_dep.as_str()),
        ("codegen_dep", codegen_dep.as_str()),
        ("kube_version", KUBE_VERSION),
        ("k8s_openapi_version", K8S_OPENAPI_VERSION),
        ("k8s_feature", K8S_OPENAPI_FEATURE),
    ]);
    let mut plan = Plan::default();
    plan.create("Cargo.toml", render(templates::CARGO_TOML, &cargo_vars));
    plan.create("build.rs", render(templates::BUILD_RS, &vars));
    plan.create("src/main.rs", render(templates::MAIN_RS, &vars));
    plan.create("src/lib.rs", render(templates::LIB_RS, &vars));
    plan.create("src/pkg/mod.rs", templates::PKG_MOD_RS.to_string());
    plan.create("src/pkg/apis/mod.rs", templates::APIS_MOD_RS.to_string());
    plan.create("src/webhook/mod.rs", templates::WEBHOOK_MOD_RS.to_string());
    plan.create(
        "src/controller/mod.rs",
        templates::CONTROLLER_MOD_RS.to_string(),
    );
    let ns_vars = [("name", name), ("namespace", project.namespace.as_str())];
    plan.create(
        "deploy/service_account.yaml",
        render(templates::SERVICE_ACCOUNT_YAML, &ns_vars),
    );
    plan.create(
        "deploy/role_binding.yaml",
        render(templates::ROLE_BINDING_YAML, &ns_vars),
    );
    plan.create(
        "deploy/operator.yaml",
        render(templates::OPERATOR_YAML, &ns_vars),
    );
    plan.create("Dockerfile", render(templates::DOCKERFILE, &vars));
    plan.create("README.md", render(templates::README_MD, &vars));
    plan.create(".gitignore", templates::GITIGNORE.to_string());
    plan.create(PROJECT_FILE, project.to_text());
    if non_empty {
        // --force: into the folder as it is, file by file.
        let mut changes = plan_force(plan).apply(&dir)?;
        changes.created.extend(write_role(&dir, name)?.created);
        return Ok(changes);
    }
    // Built beside the target and renamed into place: all of it or nothing.
    let staging = parent.join(format!(".{name}.kube-codegen-new-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    let result = plan.apply(&staging).and_then(|mut changes| {
        changes.created.extend(write_role(&staging, name)?.created);
        Ok(changes)
    });
    let result = result.and_then(|changes| {
        if dir.exists() {
            fs::remove_dir(&dir)
                .map_err(|e| Error::io(&dir, "cannot replace empty directory", e))?;
        }
        fs::rename(&staging, &dir).map_err(|e| Error::io(&dir, "cannot create directory", e))?;
        Ok(changes)
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

fn plan_force(plan: Plan) -> Plan {
    Plan {
        files: plan
            .files
            .into_iter()
            .map(|(p, (t, _))| (p, (t, true)))
            .collect(),
    }
}

/// Writes `deploy/role.yaml` from the markers under `root/src`.
fn write_role(root: &Path, name: &str) -> Result<Changes, ScaffoldError> {
    let mut plan = Plan::default();
    plan.replace(
        "deploy/role.yaml",
        rbac::role_yaml(name, &root.join("src"))?,
    );
    plan.apply(root)
}

/// The RBAC manifest of the `+kubebuilder:rbac` markers under `src` (a ClusterRole named
/// `name`, a Role per namespace), for [`Builder::rbac`](crate::Builder::rbac).
pub(crate) fn role_yaml(name: &str, src: &Path) -> crate::error::Result<String> {
    rbac::role_yaml(name, src).map_err(|e| match e {
        ScaffoldError::Generate(e) => e,
        other => Error::file(src, other.to_string()),
    })
}

/// Writes `file` from the `+kubebuilder:webhook` markers under `src` if it differs, for
/// [`Builder::webhooks`](crate::Builder::webhooks); with no marker, removes a file this
/// generator wrote. Whether the file exists afterwards.
pub(crate) fn write_webhooks_file(src: &Path, file: &Path) -> crate::error::Result<bool> {
    let text = webhook::webhooks_yaml(src).map_err(|e| match e {
        ScaffoldError::Generate(e) => e,
        other => Error::file(src, other.to_string()),
    })?;
    let old = fs::read_to_string(file).ok();
    match text {
        Some(text) => {
            if old.as_deref() != Some(text.as_str()) {
                if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                    fs::create_dir_all(dir)
                        .map_err(|e| Error::io(dir, "cannot create directory", e))?;
                }
                fs::write(file, text).map_err(|e| Error::io(file, "cannot write file", e))?;
            }
            Ok(true)
        }
        None => {
            if old.is_some_and(|t| t.starts_with(webhook::HEADER)) {
                fs::remove_file(file).map_err(|e| Error::io(file, "cannot remove file", e))?;
            }
            Ok(false)
        }
    }
}

/// The folder of `group` under `src/pkg/apis`: its first DNS label, as a Rust module name.
fn group_dir(group: &str) -> String {
    namer::module_of_dir(group.split('.').next().unwrap_or(group))
}

/// `kube-codegen add api`: the kind's types, its sample, its CRD, and the module lines.
pub fn add_api(root: &Path, opts: &ApiOptions) -> Result<Changes, ScaffoldError> {
    let mut project = Project::read(root)?;
    let (group, version) = parse_api_version(&opts.api_version)?;
    check_kind(&opts.kind)?;
    let plural = match &opts.plural {
        Some(p) => {
            let reason = kube_codegen_apimachinery::validation::is_dns1123_label(p)
                .into_iter()
                .next();
            if let Some(reason) = reason {
                return Err(ScaffoldError::InvalidPlural {
                    plural: p.clone(),
                    reason,
                });
            }
            p.clone()
        }
        None => namer::plural(&opts.kind, &Default::default()).to_lowercase(),
    };
    if project.resource(&group, &version, &opts.kind).is_some() {
        return Err(ScaffoldError::KindExists {
            group,
            version,
            kind: opts.kind.clone(),
        });
    }
    let dir = group_dir(&group);
    if let Some(other) = project
        .resources
        .iter()
        .find(|r| r.group_dir == dir && r.group != group)
    {
        return Err(ScaffoldError::GroupFolderTaken {
            group,
            dir,
            other: other.group.clone(),
        });
    }
    let new_group = !project.resources.iter().any(|r| r.group == group);
    let new_version = !project
        .resources
        .iter()
        .any(|r| r.group == group && r.version == version);
    let first_api = project.resources.is_empty();
    let new_kind = !project
        .resources
        .iter()
        .any(|r| r.group == group && r.kind == opts.kind);
    let kind = opts.kind.as_str();
    let lower = kind.to_lowercase();
    let module = namer::snake(kind);
    let vars = [
        ("group", group.as_str()),
        ("group_dir", dir.as_str()),
        ("version", version.as_str()),
        ("kind", kind),
        ("lower", lower.as_str()),
        (
            "storage_version",
            // The first version of a kind is the one stored; a later one is served beside it.
            if new_kind {
                "\n// +kubebuilder:storageversion"
            } else {
                ""
            },
        ),
        (
            "nonnamespaced",
            if opts.namespaced {
                ""
            } else {
                "\n// +genclient:nonNamespaced\n// +kubebuilder:resource:scope=Cluster"
            },
        ),
    ];
    let mut plan = Plan::default();
    let version_dir = format!("src/pkg/apis/{dir}/{version}");
    plan.create(
        format!("{version_dir}/{module}_types.rs"),
        render(templates::TYPES_RS, &vars),
    );
    plan.create(
        format!("deploy/samples/{group}_{version}_{lower}.yaml"),
        render(templates::SAMPLE_YAML, &vars),
    );
    let kinds_line = format!("mod {module}_types;\npub use {module}_types::*;");
    plan.insert(
        root,
        &format!("{version_dir}/mod.rs"),
        new_version.then(|| render(templates::VERSION_MOD_RS, &vars)),
        "kinds",
        Insert::Lines(&kinds_line),
    )?;
    if new_version {
        plan.insert(
            root,
            &format!("src/pkg/apis/{dir}/mod.rs"),
            new_group.then(|| render(templates::GROUP_MOD_RS, &vars)),
            "versions",
            Insert::Module(&version),
        )?;
    }
    if new_group {
        plan.insert(
            root,
            "src/pkg/apis/mod.rs",
            None,
            "groups",
            Insert::Module(&dir),
        )?;
    }
    if first_api {
        let client = templates::PKG_CLIENT.trim_start();
        plan.insert(
            root,
            "src/pkg/mod.rs",
            None,
            "client",
            Insert::Lines(client),
        )?;
    }
    if new_kind {
        let crd =
            format!("<pkg::apis::{dir}::{version}::{kind} as kube::CustomResourceExt>::crd(),");
        plan.insert(root, "src/lib.rs", None, "crds", Insert::Lines(&crd))?;
    }
    project.resources.push(ApiResource {
        group: group.clone(),
        group_dir: dir.clone(),
        version: version.clone(),
        kind: kind.into(),
        plural,
        namespaced: opts.namespaced,
        controller: false,
        webhooks: None,
    });
    plan.replace(PROJECT_FILE, project.to_text());
    // The generator reads the new types (and refuses them with file:line errors) before
    // anything stays written.
    plan.apply_then(root, || manifests(root, false))
}

/// `kube-codegen add controller`: a reconciler for a kind of the project, registered in
/// `main.rs`, with a test on the in-memory API server; then `deploy/role.yaml` again.
pub fn add_controller(root: &Path, opts: &ControllerOptions) -> Result<Changes, ScaffoldError> {
    let mut project = Project::read(root)?;
    let (group, version) = parse_api_version(&opts.api_version)?;
    check_kind(&opts.kind)?;
    let Some(resource) = project.resource(&group, &version, &opts.kind).cloned() else {
        return Err(ScaffoldError::NoSuchKind {
            group,
            version,
            kind: opts.kind.clone(),
        });
    };
    let module = namer::snake(&resource.kind);
    let controller_file = format!("src/controller/{module}.rs");
    if resource.controller || root.join(&controller_file).exists() {
        return Err(ScaffoldError::ControllerExists {
            kind: resource.kind.clone(),
            path: root.join(controller_file),
        });
    }
    let crate_name = project.project_name.replace('-', "_");
    let lower = resource.kind.to_lowercase();
    let group_version = format!("{}_{}", resource.group_dir, resource.version);
    let accessor = namer::snake(&namer::plural(&resource.kind, &Default::default()));
    let (namespace_line, lister_scope, client_scope, new_args, test_scope) = if resource.namespaced
    {
        (
            "    let namespace = req.namespace.as_deref().unwrap_or_default();\n",
            ".namespaced(namespace)",
            "namespace",
            "req.name.clone(), namespace",
            "\"default\"",
        )
    } else {
        ("", "", "", "req.name.clone()", "")
    };
    let vars = [
        ("crate", crate_name.as_str()),
        ("group", resource.group.as_str()),
        ("group_mod", resource.group_dir.as_str()),
        ("version", resource.version.as_str()),
        ("kind", resource.kind.as_str()),
        ("lower", lower.as_str()),
        ("plural", resource.plural.as_str()),
        ("module", module.as_str()),
        ("snake", module.as_str()),
        ("group_version", group_version.as_str()),
        ("accessor", accessor.as_str()),
        ("namespace_line", namespace_line),
        ("lister_scope", lister_scope),
        ("client_scope", client_scope),
        ("new_args", new_args),
        ("test_scope", test_scope),
    ];
    let mut plan = Plan::default();
    plan.create(&controller_file, render(templates::CONTROLLER_RS, &vars));
    plan.create(
        format!("tests/{module}_controller.rs"),
        render(templates::CONTROLLER_TEST_RS, &vars),
    );
    let modules = "src/controller/mod.rs";
    plan.insert(
        root,
        modules,
        None,
        "controller-modules",
        Insert::Module(&module),
    )?;
    let setup = format!("{crate_name}::controller::{module}::setup(mgr)?;");
    plan.insert(
        root,
        "src/main.rs",
        None,
        "controllers",
        Insert::Lines(&setup),
    )?;
    if let Some(r) = project
        .resources
        .iter_mut()
        .find(|r| r.group == group && r.version == version && r.kind == opts.kind)
    {
        r.controller = true;
    }
    plan.replace(PROJECT_FILE, project.to_text());
    let name = project.project_name.clone();
    plan.apply_then(root, || write_role(root, &name))
}

/// The Rust name of version `version` of `kind` beside the hub: `EruV2`, `EruV1beta1`.
fn version_type(kind: &str, version: &str) -> String {
    let mut chars = version.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or('V');
    format!("{kind}{first}{}", chars.as_str())
}

/// `text` as `cargo fmt` leaves it (rustfmt, edition 2024, read from stdin), so that code
/// assembled from parts passes `cargo fmt --check` whatever the lengths of its names. Without
/// a working `rustfmt` (`$RUSTFMT`, else `rustfmt` on the `PATH`) the text is kept as it is.
fn rustfmt(text: String) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let program = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let child = Command::new(&program)
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "rustfmt not run; the new files are left unformatted");
            return text;
        }
    };
    let written = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(text.as_bytes()));
    match (written, child.wait_with_output()) {
        (Some(Ok(())), Ok(out)) if out.status.success() => {
            String::from_utf8(out.stdout).unwrap_or(text)
        }
        (_, out) => {
            let why = out
                .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                .unwrap_or_else(|e| e.to_string());
            tracing::warn!(error = %why, "rustfmt failed; the new files are left unformatted");
            text
        }
    }
}

/// `use path::{names};` as rustfmt writes it: on one line when it fits in 100 columns, else
/// the names on their own indented line.
fn use_line(path: &str, names: &[&str]) -> String {
    let one = format!("use {path}::{{{}}};", names.join(", "));
    if one.len() <= 100 {
        one
    } else {
        format!("use {path}::{{\n    {},\n}};", names.join(", "))
    }
}

/// Puts `marker` on the line above the attributes of `pub struct <kind> {` in `text`.
fn mark_kind(path: &Path, text: &str, kind: &str, marker: &str) -> Result<String, ScaffoldError> {
    let mut lines: Vec<&str> = text.lines().collect();
    let struct_line = format!("pub struct {kind} {{");
    let Some(mut at) = lines.iter().position(|l| l.trim() == struct_line) else {
        return Err(ScaffoldError::NoKindType {
            path: path.to_path_buf(),
            kind: kind.into(),
        });
    };
    while at > 0 && lines[at - 1].trim_start().starts_with("#[") {
        at -= 1;
    }
    lines.insert(at, marker);
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// `kube-codegen add webhook`: a kind's defaulter, validator and/or conversion (this version
/// the hub, every other version of the kind a spoke) in `src/webhook/`, with their markers,
/// registered in `main.rs`, a test in `tests/`; then `deploy/` again (the webhook
/// configurations, the CRD's `spec.conversion`).
pub fn add_webhook(root: &Path, opts: &WebhookOptions) -> Result<Changes, ScaffoldError> {
    let mut project = Project::read(root)?;
    let (group, version) = parse_api_version(&opts.api_version)?;
    check_kind(&opts.kind)?;
    if !(opts.defaulting || opts.validation || opts.conversion) {
        return Err(ScaffoldError::NoWebhookKind);
    }
    let Some(resource) = project.resource(&group, &version, &opts.kind).cloned() else {
        return Err(ScaffoldError::NoSuchKind {
            group,
            version,
            kind: opts.kind.clone(),
        });
    };
    let kind = resource.kind.as_str();
    let snake = namer::snake(kind);
    let module = format!("{}_{}_{snake}", resource.group_dir, resource.version);
    let webhook_file = format!("src/webhook/{module}.rs");
    if resource.webhooks.is_some() || root.join(&webhook_file).exists() {
        return Err(ScaffoldError::WebhookExists {
            group,
            version,
            kind: kind.into(),
            path: root.join(webhook_file),
        });
    }
    // The versions of the kind, in the order added: the first is the one stored.
    let versions: Vec<String> = project
        .resources
        .iter()
        .filter(|r| r.group == group && r.kind == kind)
        .map(|r| r.version.clone())
        .collect();
    let spokes: Vec<&String> = versions.iter().filter(|v| **v != version).collect();
    if opts.conversion {
        if spokes.is_empty() {
            return Err(ScaffoldError::OneVersion {
                group,
                version,
                kind: kind.into(),
            });
        }
        if versions.first() != Some(&version) {
            return Err(ScaffoldError::NotStorage {
                group,
                version,
                kind: kind.into(),
                storage: versions.first().cloned().unwrap_or_default(),
            });
        }
    }
    let crate_name = project.project_name.replace('-', "_");
    let lower = kind.to_lowercase();
    let group_path = resource.group.replace('.', "-");
    let mut what = Vec::new();
    let mut admission = Vec::new();
    let mut builder_calls = String::new();
    let mut test_imports = String::new();
    let mut webhook_imports = vec!["Webhook"];
    let mut path_checks = String::new();
    let mut kind_imports = vec![kind.to_string()];
    if opts.defaulting {
        what.push("a defaulter");
        admission.push("Defaulter");
        builder_calls.push_str(&format!("\n        .with_defaulter({kind}Defaulter)"));
        kind_imports.push(format!("{kind}Defaulter"));
        webhook_imports.push("mutate_path");
        path_checks.push_str(&format!(
            "    let mutate = mutate_path::<{kind}>();\n    assert!(paths.contains(&mutate), \"{{paths:?}}\");\n    assert!(manifests.contains(&format!(\"path: {{mutate}}\\n\")), \"{{manifests}}\");\n"
        ));
    }
    if opts.validation {
        what.push("a validator");
        admission.push("Validator");
        builder_calls.push_str(&format!("\n        .with_validator({kind}Validator)"));
        kind_imports.push(format!("{kind}Validator"));
        webhook_imports.push("validate_path");
        path_checks.push_str(&format!(
            "    let validate = validate_path::<{kind}>();\n    assert!(paths.contains(&validate), \"{{paths:?}}\");\n    assert!(manifests.contains(&format!(\"path: {{validate}}\\n\")), \"{{manifests}}\");\n"
        ));
    }
    if opts.conversion {
        what.push("conversion to and from the other versions");
        for spoke in &spokes {
            builder_calls.push_str(&format!(
                "\n        .with_spoke::<{}>()",
                version_type(kind, spoke)
            ));
        }
    }
    let mut imports = Vec::new();
    if !admission.is_empty() {
        let mut names: Vec<&str> = admission.clone();
        if opts.defaulting || opts.validation {
            names.extend(["Denial", "Request"]);
        }
        if opts.validation {
            names.push("ValidationResult");
        }
        names.sort_unstable();
        imports.push(use_line(
            "kube_controller_runtime::webhook::admission",
            &names,
        ));
    }
    if opts.conversion {
        imports.push(
            "use kube_controller_runtime::webhook::conversion::{ConversionError, Convertible, Hub};"
                .into(),
        );
    }
    imports.push("use kube_controller_runtime::webhook::Webhook;".into());
    imports.sort();
    let spoke_imports: String = if opts.conversion {
        spokes
            .iter()
            .map(|v| {
                format!(
                    "use crate::pkg::apis::{}::{v}::{kind} as {};\n",
                    resource.group_dir,
                    version_type(kind, v)
                )
            })
            .collect()
    } else {
        String::new()
    };
    let serde_imports = if opts.conversion {
        "use serde::Serialize;\nuse serde::de::DeserializeOwned;\n"
    } else {
        ""
    };
    let what = match what.as_slice() {
        [one] => one.to_string(),
        [a, b] => format!("{a} and {b}"),
        [a, b, c] => format!("{a}, {b} and {c}"),
        _ => String::new(),
    };
    // In rustfmt's order.
    let admitting = opts.defaulting || opts.validation;
    if admitting {
        test_imports.push_str(
            "use kube::core::DynamicObject;\nuse kube::core::admission::AdmissionReview;\n",
        );
    }
    test_imports.push_str("use kube_codegen_runtime::fake::FakeApiServer;\n");
    let mut admission_traits = vec!["Request"];
    if opts.defaulting {
        admission_traits.insert(0, "Defaulter");
    }
    if opts.validation {
        admission_traits.push("Validator");
    }
    if admitting {
        test_imports.push_str(&use_line(
            "kube_controller_runtime::webhook::admission",
            &admission_traits,
        ));
        test_imports.push('\n');
    }
    if opts.conversion {
        test_imports.push_str("use kube_controller_runtime::webhook::conversion::Convertible;\n");
    }
    webhook_imports.retain(|w| *w != "Webhook");
    match webhook_imports.as_slice() {
        [] => {}
        [one] => test_imports.push_str(&format!("use kube_controller_runtime::webhook::{one};\n")),
        many => test_imports.push_str(&format!(
            "use kube_controller_runtime::webhook::{{{}}};\n",
            many.join(", ")
        )),
    }
    test_imports.push_str("use kube_controller_runtime::{BoxError, Manager};\n");
    if admitting {
        test_imports.push_str("use serde_json::json;\n");
        path_checks.insert_str(
            0,
            "    let paths = mgr.webhook_server()?.paths();\n    let manifests = include_str!(\"../deploy/webhooks.yaml\");\n",
        );
    }
    let mut test_kind_imports = format!(
        "use {crate_name}::pkg::apis::{}::{}::{kind};\n",
        resource.group_dir, resource.version
    );
    kind_imports.retain(|k| k != kind);
    if !kind_imports.is_empty() {
        test_kind_imports.push_str(&format!(
            "use {crate_name}::webhook::{module}::{};\n",
            if kind_imports.len() == 1 {
                kind_imports[0].clone()
            } else {
                format!("{{{}}}", kind_imports.join(", "))
            }
        ));
    }
    if opts.conversion {
        for v in &spokes {
            test_kind_imports.push_str(&format!(
                "use {crate_name}::pkg::apis::{}::{v}::{kind} as {};\n",
                resource.group_dir,
                version_type(kind, v)
            ));
        }
    }
    let crd_file = format!("{}_{}_crd.yaml", resource.group, resource.plural);
    let spoke_tests: String = spokes
        .iter()
        .filter(|_| opts.conversion)
        .map(|v| {
            let t = version_type(kind, v);
            format!(
                "    let mut spoke = {t}::default();\n    spoke.metadata.name = Some(\"sample\".into());\n    spoke.spec.foo = Some(\"bar\".into());\n    let hub: {kind} = spoke.convert_to()?;\n    assert_eq!(hub.spec.foo.as_deref(), Some(\"bar\"));\n    assert_eq!({t}::convert_from(&hub)?, spoke);\n"
            )
        })
        .collect();
    let imports = imports.join("\n");
    let vars = [
        ("crate", crate_name.as_str()),
        ("group", resource.group.as_str()),
        ("group_mod", resource.group_dir.as_str()),
        ("group_path", group_path.as_str()),
        ("version", resource.version.as_str()),
        ("kind", kind),
        ("lower", lower.as_str()),
        ("plural", resource.plural.as_str()),
        ("module", module.as_str()),
        ("what", what.as_str()),
        ("imports", imports.as_str()),
        ("serde_imports", serde_imports),
        ("spoke_imports", spoke_imports.as_str()),
        ("builder_calls", builder_calls.as_str()),
        ("test_imports", test_imports.as_str()),
        ("test_kind_imports", test_kind_imports.as_str()),
        ("path_checks", path_checks.as_str()),
        ("crd_file", crd_file.as_str()),
        ("spoke_tests", spoke_tests.as_str()),
    ];
    let helpers = if admitting {
        render(templates::WEBHOOK_TEST_HELPERS_RS, &vars)
    } else {
        String::new()
    };
    let vars: Vec<(&str, &str)> = vars
        .into_iter()
        .chain([("admission_helpers", helpers.as_str())])
        .collect();
    let mut code = render(templates::WEBHOOK_HEAD_RS, &vars);
    let mut test = render(templates::WEBHOOK_TEST_HEAD_RS, &vars);
    if opts.defaulting {
        code.push_str(&render(templates::WEBHOOK_DEFAULTER_RS, &vars));
        test.push_str(&render(templates::WEBHOOK_TEST_DEFAULTER_RS, &vars));
    }
    if opts.validation {
        code.push_str(&render(templates::WEBHOOK_VALIDATOR_RS, &vars));
        test.push_str(&render(templates::WEBHOOK_TEST_VALIDATOR_RS, &vars));
    }
    let mut plan = Plan::default();
    if opts.conversion {
        code.push_str(&render(templates::WEBHOOK_HUB_RS, &vars));
        for spoke in &spokes {
            let spoke_type = version_type(kind, spoke);
            let spoke_vars = [
                ("kind", kind),
                ("spoke", spoke.as_str()),
                ("spoke_type", spoke_type.as_str()),
            ];
            code.push_str(&render(templates::WEBHOOK_SPOKE_RS, &spoke_vars));
        }
        test.push_str(&render(templates::WEBHOOK_TEST_CONVERSION_RS, &vars));
        let types = format!(
            "src/pkg/apis/{}/{}/{snake}_types.rs",
            resource.group_dir, resource.version
        );
        let text = read(root, &types)?;
        let marked = mark_kind(
            &root.join(&types),
            &text,
            kind,
            "// +kube-codegen:webhook:conversion",
        )?;
        plan.replace(types, marked);
    }
    plan.create(&webhook_file, rustfmt(code));
    plan.create(format!("tests/{module}_webhook.rs"), rustfmt(test));
    let modules = "src/webhook/mod.rs";
    let fresh_modules =
        (!root.join(modules).exists()).then(|| templates::WEBHOOK_MOD_RS.to_string());
    if fresh_modules.is_some() {
        // A project from before `add webhook`: its lib.rs gets the module.
        let lib = read(root, "src/lib.rs")?;
        if !lib.contains("pub mod webhook;") {
            let Some(at) = lib.find("pub mod pkg;\n") else {
                return Err(ScaffoldError::MarkerMissing {
                    path: root.join("src/lib.rs"),
                    marker: "webhook-modules",
                });
            };
            let end = at + "pub mod pkg;\n".len();
            plan.replace(
                "src/lib.rs",
                format!("{}pub mod webhook;\n{}", &lib[..end], &lib[end..]),
            );
        }
    }
    plan.insert(
        root,
        modules,
        fresh_modules,
        "webhook-modules",
        Insert::Module(&module),
    )?;
    let setup = format!(
        "if {crate_name}::webhook::enabled() {{\n    {crate_name}::webhook::{module}::setup(mgr)?;\n}}"
    );
    plan.insert(root, "src/main.rs", None, "webhooks", Insert::Lines(&setup))?;
    // `--embedded` serves the webhooks and installs their configurations: the Operator gets them.
    let admission = opts.defaulting
        || opts.validation
        || project.resources.iter().any(|r| {
            r.webhooks
                .as_ref()
                .is_some_and(|w| w.defaulting || w.validation)
        });
    if let Some((main, _)) = plan.files.get(Path::new("src/main.rs"))
        && let Some(main) = with_operator_webhooks(main, admission)
    {
        plan.replace("src/main.rs", main);
    }
    if let Some(r) = project
        .resources
        .iter_mut()
        .find(|r| r.group == group && r.version == version && r.kind == opts.kind)
    {
        r.webhooks = Some(Webhooks {
            defaulting: opts.defaulting,
            validation: opts.validation,
            conversion: opts.conversion,
            webhook_version: "v1".into(),
        });
    }
    plan.replace(PROJECT_FILE, project.to_text());
    plan.apply_then(root, || manifests(root, false))
}

/// `main.rs` with the `Operator`'s `.webhooks(…)` after its `.crds(…)`: `deploy/webhooks.yaml`
/// when the project has admission webhooks (`admission`), else none (its CRDs' conversion
/// webhooks only). `None` when `main.rs` has no `.crds(` line to put it after (a `main.rs` the
/// user rewrote: its webhooks are served in a cluster, and it chooses how to run them locally).
fn with_operator_webhooks(main: &str, admission: bool) -> Option<String> {
    let call = if admission {
        r#".webhooks(include_str!("../deploy/webhooks.yaml"))"#
    } else {
        r#".webhooks("") // no admission webhooks: the CRDs' conversion webhooks only"#
    };
    let mut lines: Vec<String> = main.lines().map(str::to_string).collect();
    if let Some(at) = lines
        .iter()
        .position(|l| l.trim_start().starts_with(".webhooks("))
    {
        let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
        lines[at] = format!("{indent}{call}");
    } else {
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(".crds("))?;
        let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
        lines.insert(at + 1, format!("{indent}{call}"));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Some(out)
}

/// `kube-codegen rbac`: `deploy/role.yaml` from the `+kubebuilder:rbac` markers under `src/`;
/// with `verify_only`, an error if the file differs.
pub fn rbac(root: &Path, verify_only: bool) -> Result<Changes, ScaffoldError> {
    let project = Project::read(root)?;
    let text = rbac::role_yaml(&project.project_name, &root.join("src"))?;
    let path = root.join("deploy/role.yaml");
    if verify_only {
        return match fs::read_to_string(&path) {
            Ok(old) if old == text => Ok(Changes {
                unchanged: vec![PathBuf::from("deploy/role.yaml")],
                ..Changes::default()
            }),
            _ => Err(ScaffoldError::Stale { path }),
        };
    }
    write_role(root, &project.project_name)
}

/// Where `kube-codegen manifests` writes the admission webhook configurations.
pub const WEBHOOKS_FILE: &str = "deploy/webhooks.yaml";

/// `kube-codegen manifests`: `deploy/crds/` from the API types, `deploy/role.yaml` from the
/// `+kubebuilder:rbac` markers and `deploy/webhooks.yaml` from the `+kubebuilder:webhook`
/// markers (when there is one); with `verify_only`, an error naming the first file that
/// differs.
pub fn manifests(root: &Path, verify_only: bool) -> Result<Changes, ScaffoldError> {
    let project = Project::read(root)?;
    let staging = tempfile_dir(root)?;
    let crds = staging.join("crds");
    if !project.resources.is_empty() {
        let built = crate::Builder::new()
            .apis_dir(root.join("src/pkg/apis"))
            .apis_module("crate::pkg::apis")
            .client_module("crate::pkg::client")
            .crd_file_name("{group}_{plural}_crd.yaml")
            .out_dir(staging.join("out"))
            .crd_dir(&crds)
            .emit_rerun_if_changed(false)
            .compile();
        if let Err(e) = built {
            let _ = fs::remove_dir_all(&staging);
            return Err(e.into());
        }
    }
    let result = (|| {
        let mut plan = Plan::default();
        if crds.exists() {
            let mut entries: Vec<PathBuf> = fs::read_dir(&crds)
                .map_err(|e| Error::io(&crds, "cannot read directory", e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            for file in entries {
                let text = fs::read_to_string(&file)
                    .map_err(|e| Error::io(&file, "cannot read file", e))?;
                let name = file.file_name().map(PathBuf::from).unwrap_or_default();
                plan.replace(Path::new("deploy/crds").join(name), text);
            }
        }
        plan.replace(
            "deploy/role.yaml",
            rbac::role_yaml(&project.project_name, &root.join("src"))?,
        );
        let webhooks = webhook::webhooks_yaml(&root.join("src"))?;
        let webhooks_file = root.join(WEBHOOKS_FILE);
        // A file written for markers that are gone.
        let orphan = webhooks.is_none()
            && fs::read_to_string(&webhooks_file).is_ok_and(|t| t.starts_with(webhook::HEADER));
        if let Some(text) = webhooks {
            plan.replace(WEBHOOKS_FILE, text);
        }
        if verify_only {
            if orphan {
                return Err(ScaffoldError::Stale {
                    path: webhooks_file,
                });
            }
            for (path, (text, _)) in &plan.files {
                if fs::read_to_string(root.join(path)).ok().as_deref() != Some(text.as_str()) {
                    return Err(ScaffoldError::Stale {
                        path: root.join(path),
                    });
                }
            }
            return Ok(Changes {
                unchanged: plan.files.into_keys().collect(),
                ..Changes::default()
            });
        }
        let mut changes = plan.apply(root)?;
        if orphan {
            fs::remove_file(&webhooks_file)
                .map_err(|e| Error::io(&webhooks_file, "cannot remove file", e))?;
            changes.updated.push(PathBuf::from(WEBHOOKS_FILE));
        }
        Ok(changes)
    })();
    let _ = fs::remove_dir_all(&staging);
    result
}

/// A fresh scratch folder under the project's `target/` (ignored by git).
fn tempfile_dir(root: &Path) -> Result<PathBuf, ScaffoldError> {
    let dir = root
        .join("target")
        .join(format!("kube-codegen-manifests-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "cannot create directory", e))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_command_drops_the_running_packages_variables() {
        // `cargo test` sets these for this test binary, as it does for any program it runs.
        for set in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME"] {
            assert!(std::env::var_os(set).is_some(), "{set} is not set");
        }
        let cmd = cargo_command();
        let removed: BTreeMap<_, _> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.is_none()))
            .collect();
        for gone in [
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
        ] {
            assert_eq!(removed.get(gone), Some(&true), "{gone}: {removed:?}");
        }
        // What tells the child which cargo and target to use stays.
        for kept in ["CARGO", "CARGO_HOME", "CARGO_TARGET_DIR", "PATH"] {
            assert!(!removed.contains_key(kept), "{kept}: {removed:?}");
        }
    }

    #[test]
    fn names_and_api_versions_are_checked() {
        for bad in ["Eru", "-x", "1op", "a_b", "test", ""] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        check_name("eru-operator").unwrap_or_else(|e| panic!("{e}"));
        for (bad, want) in [
            ("v1", "expected GROUP/VERSION"),
            ("/v1", "the group is empty"),
            ("mtsre/v1", "must contain a dot"),
            ("mtsre.meitu.com/1", "version \"1\""),
            ("mtsre.meitu.com/V1", "version \"V1\""),
            ("Mtsre.meitu.com/v1", "group \"Mtsre.meitu.com\""),
        ] {
            let e = parse_api_version(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"))
                .to_string();
            assert!(e.starts_with(&format!("--api-version {bad:?}: ")), "{e}");
            assert!(e.contains(want), "{bad}: {e}");
        }
        assert_eq!(
            parse_api_version("mtsre.meitu.com/v1beta1").ok(),
            Some(("mtsre.meitu.com".into(), "v1beta1".into()))
        );
        for bad in ["eru", "Eru-x", "E ru", ""] {
            assert!(check_kind(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_operator_gets_its_webhooks_after_its_crds() {
        let main = "    let result = Operator::new(\"op\")\n        .crds(op::crds())\n        .run(cli.operator, |mgr| {\n";
        let conversion = with_operator_webhooks(main, false).unwrap_or_default();
        assert_eq!(
            conversion,
            "    let result = Operator::new(\"op\")\n        .crds(op::crds())\n        .webhooks(\"\") // no admission webhooks: the CRDs' conversion webhooks only\n        .run(cli.operator, |mgr| {\n"
        );
        // A later admission webhook replaces the line rather than adding a second one.
        let admission = with_operator_webhooks(&conversion, true).unwrap_or_default();
        assert_eq!(
            admission,
            "    let result = Operator::new(\"op\")\n        .crds(op::crds())\n        .webhooks(include_str!(\"../deploy/webhooks.yaml\"))\n        .run(cli.operator, |mgr| {\n"
        );
        assert_eq!(with_operator_webhooks(&admission, true), Some(admission));
        // A main.rs without the Operator's .crds( is left to its author.
        assert_eq!(with_operator_webhooks("fn main() {}\n", true), None);
    }

    #[test]
    fn lines_go_before_their_marker_with_its_indent() {
        let text = "fn f() {\n    // +kube-codegen:scaffold:controllers\n    Ok(())\n}\n";
        let out = insert_at_marker(Path::new("main.rs"), text, "controllers", "a::setup(mgr)?;")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            out,
            "fn f() {\n    a::setup(mgr)?;\n    // +kube-codegen:scaffold:controllers\n    Ok(())\n}\n"
        );
        let e = insert_at_marker(Path::new("main.rs"), "fn f() {}\n", "controllers", "x")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("main.rs: the line `// +kube-codegen:scaffold:controllers` is missing"),
            "{e}"
        );
    }
}
