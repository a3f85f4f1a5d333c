//! Small helpers shared by the end-to-end test files and benches: logging, unique names,
//! namespaces, timings.

use std::sync::OnceLock;
use std::time::Instant;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ObjectMeta, PostParams};

/// Installs a test-writer `tracing` subscriber (`RUST_LOG`, default `tests=info`); a second
/// call is a no-op.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("tests=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}

/// Six lower-case alphanumerics, fixed for the test process, that make names unique per run.
pub fn run_id() -> &'static str {
    static RUN: OnceLock<String> = OnceLock::new();
    RUN.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut n = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        let mut id = String::new();
        for _ in 0..6 {
            id.push(char::from_digit((n % 36) as u32, 36).unwrap_or('x'));
            n /= 36;
        }
        id
    })
}

/// Creates the namespace `name` through `client`.
pub async fn create_namespace(client: &kube::Client, name: &str) -> kube::Result<Namespace> {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
}

/// Prints how long a test took when dropped (`cargo test -- --nocapture` shows it).
pub struct Timer(&'static str, Instant);

impl Timer {
    /// Starts timing `name`.
    pub fn new(name: &'static str) -> Self {
        Timer(name, Instant::now())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        eprintln!("[e2e] {} took {:.2?}", self.0, self.1.elapsed());
    }
}

/// An RBAC request or rule: (API group, resource or `resource/subresource`, verb).
pub type Permission = (String, String, String);

/// The rules of a Role or ClusterRole manifest (the first YAML document of `yaml`), each
/// group × resource × verb as a [`Permission`] (`resourceNames` are not distinguished).
pub fn rbac_rules(yaml: &str) -> Result<std::collections::BTreeSet<Permission>, String> {
    let role: serde_json::Value =
        serde_saphyr::from_str(yaml.split("\n---\n").next().unwrap_or_default())
            .map_err(|e| e.to_string())?;
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect()
    };
    let mut out = std::collections::BTreeSet::new();
    for rule in role["rules"].as_array().into_iter().flatten() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    out.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    Ok(out)
}

/// What a kube-apiserver audit log (JSON lines) recorded: every request as a [`Permission`],
/// and those answered 403, described.
pub fn audit_requests(
    log: &std::path::Path,
) -> (std::collections::BTreeSet<Permission>, Vec<String>) {
    let mut used = std::collections::BTreeSet::new();
    let mut denied = Vec::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let Ok(ev) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let resource = ev["objectRef"]["resource"].as_str().unwrap_or_default();
        let resource = match ev["objectRef"]["subresource"].as_str() {
            Some(sub) => format!("{resource}/{sub}"),
            None => resource.to_string(),
        };
        let key = (
            ev["objectRef"]["apiGroup"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            resource,
            ev["verb"].as_str().unwrap_or_default().to_string(),
        );
        if ev["responseStatus"]["code"].as_i64() == Some(403) {
            denied.push(format!("{key:?} {}", ev["requestURI"]));
        }
        used.insert(key);
    }
    (used, denied)
}

/// The executable of `bin` in the workspace's `package`, as the end-to-end tests run the
/// workspace's binaries as separate processes, built if needed; the time the build took is
/// printed.
///
/// Alone this is `$CARGO build -p <package> --bin <bin>`. With [`WORKSPACE_BUILD`] set (as
/// `scripts/test.sh` does) it is `$CARGO build --workspace --tests`: the binary as
/// `cargo test --workspace` builds it, with the features every member's tests unify (the
/// built-in crate's every group, tokio's `test-util`, …). That build has just been made, so
/// nothing is compiled again, where the narrower command would compile most of the
/// dependency graph a second time with the features of `package` alone.
pub fn build_bin(package: &str, bin: &str) -> Result<std::path::PathBuf, String> {
    let workspace = std::env::var_os(WORKSPACE_BUILD).is_some_and(|v| !v.is_empty());
    let args: &[&str] = if workspace {
        &["build", "--workspace", "--tests"]
    } else {
        &["build", "-p", package, "--bin", bin]
    };
    let t0 = std::time::Instant::now();
    let out = kube_codegen::scaffold::cargo_command()
        .current_dir(crate::apiserver::repo_root())
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo {} failed ({}):\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // The binary itself, not its unit tests (`profile.test`), of `package` (the package id
    // names it: "path+file:///…/example-crddemo#0.1.0" or "…#example-crddemo@0.1.0").
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == bin
                && m["profile"]["test"] == false
                && m["package_id"].as_str().is_some_and(|id| {
                    id.contains(&format!("/{package}#")) || id.contains(&format!("#{package}@"))
                })
        })
        .find_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
        .ok_or_else(|| format!("cargo {} named no {bin} executable", args.join(" ")))?;
    eprintln!(
        "[e2e] {bin} binary {} (cargo {} took {:.2?})",
        path.display(),
        args.join(" "),
        t0.elapsed()
    );
    Ok(path)
}

/// The environment variable that makes [`build_bin`] take the binaries of
/// `cargo test --workspace`'s build (any non-empty value).
pub const WORKSPACE_BUILD: &str = "KUBE_CODEGEN_WORKSPACE_BUILD";
