//! Other languages' official clients against both servers: the Python `kubernetes` package
//! (installed from PyPI into `target/client-venv`) runs `tests/clients/python/probe.py`, and a
//! client-go program (`tests/clients/go`, built from the Go module proxy) does the same with the
//! typed clientset, apply configurations, scale and the dynamic client, twice: once sending
//! JSON, once as client-go does by default (built-in objects as protobuf). Each prints one JSON
//! line per step; the output against the fake must equal the output against kube-apiserver.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kube_codegen_runtime::fake::FakeApiServer;
use tests::apiserver::RealApiServer;
use tests::conformance::{check_crd, install_crd};

/// The Python client version (it follows Kubernetes minor versions: 37 for v1.37).
const PYTHON_CLIENT: &str = "kubernetes==37.0.2";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A virtualenv with the official Python client, made once.
fn python() -> PathBuf {
    let venv = root().join("target/client-venv");
    let py = venv.join("bin/python");
    let ready = Command::new(&py)
        .args([
            "-c",
            "import kubernetes, sys; sys.exit(0 if kubernetes.__version__ == '37.0.2' else 1)",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
        );
        run(
            Command::new(venv.join("bin/pip")).args(["install", "--quiet", PYTHON_CLIENT]),
            "pip install kubernetes",
        );
    }
    py
}

/// `go` from PATH, `/usr/local/go`, or where `scripts/build-kube-apiserver.sh` installs it
/// (it runs before the tests in `scripts/test.sh`).
fn go_binary() -> PathBuf {
    let on_path = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if on_path {
        return PathBuf::from("go");
    }
    let local = PathBuf::from("/usr/local/go/bin/go");
    if local.is_file() {
        return local;
    }
    let cache = std::env::var_os("KUBE_CODEGEN_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("kube-codegen"))
        })
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/kube-codegen")))
        .unwrap_or_default();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path().join("bin/go"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("no Go toolchain: run scripts/build-kube-apiserver.sh, which installs one")
    })
}

/// The client-go probe, built from `tests/clients/go`.
fn go_probe() -> PathBuf {
    let bin = root().join("target/client-go-probe");
    run(
        Command::new(go_binary())
            .args(["build", "-o"])
            .arg(&bin)
            .arg(".")
            .current_dir(root().join("tests/clients/go"))
            .env("GOFLAGS", "-mod=mod"),
        "go build (tests/clients/go)",
    );
    bin
}

fn probe(program: &Path, args: &[&str], kubeconfig: &Path, namespace: &str) -> Vec<String> {
    let out = run(
        Command::new(program)
            .args(args)
            .arg(namespace)
            .env("KUBECONFIG", kubeconfig),
        &format!("{} {args:?}", program.display()),
    );
    out.lines().map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_go_clients_see_the_same_on_both_servers() {
    let (py, go) = tokio::task::spawn_blocking(|| (python(), go_probe()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let real = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let server = FakeApiServer::new();
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fake_kc = dir.path().join("kubeconfig");
    served
        .write_kubeconfig(&fake_kc)
        .unwrap_or_else(|e| panic!("{e}"));
    let timeout = std::time::Duration::from_secs(60);
    for client in [
        real.client().unwrap_or_else(|e| panic!("{e}")),
        served.client().await.unwrap_or_else(|e| panic!("{e}")),
    ] {
        install_crd(&client, check_crd(), timeout)
            .await
            .unwrap_or_else(|e| panic!("installing the Check CRD: {e}"));
    }
    let script = root().join("tests/clients/python/probe.py");
    let script = script.to_string_lossy().into_owned();
    let real_kc = real.kubeconfig_path().to_path_buf();
    let outputs = tokio::task::spawn_blocking(move || {
        let mut outs = Vec::new();
        for kc in [&real_kc, &fake_kc] {
            outs.push((
                probe(&py, &[&script], kc, "python-client"),
                probe(&go, &[], kc, "go-client"),
                probe(&go, &["--protobuf"], kc, "go-protobuf"),
            ));
        }
        outs
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let ((py_real, go_real, pb_real), (py_fake, go_fake, pb_fake)) = (&outputs[0], &outputs[1]);
    assert!(
        py_real.len() >= 15,
        "the Python probe ran every step: {py_real:?}"
    );
    assert!(
        go_real.len() >= 15,
        "the Go probe ran every step: {go_real:?}"
    );
    for (a, b) in py_real.iter().zip(py_fake) {
        assert_eq!(a, b, "Python client: kube-apiserver vs the fake");
    }
    assert_eq!(py_real.len(), py_fake.len(), "Python client steps");
    for (a, b) in go_real.iter().zip(go_fake) {
        assert_eq!(a, b, "client-go: kube-apiserver vs the fake");
    }
    assert_eq!(go_real.len(), go_fake.len(), "client-go steps");
    for (a, b) in pb_real.iter().zip(pb_fake) {
        assert_eq!(
            a, b,
            "client-go sending protobuf: kube-apiserver vs the fake"
        );
    }
    assert_eq!(
        pb_real.len(),
        pb_fake.len(),
        "client-go steps sending protobuf"
    );
    // The same steps store the same objects whichever encoding carries them (the namespace
    // aside).
    let same = |lines: &[String], ns: &str| -> Vec<String> {
        lines.iter().map(|l| l.replace(ns, "NS")).collect()
    };
    assert_eq!(
        same(go_real, "go-client"),
        same(pb_real, "go-protobuf"),
        "client-go on kube-apiserver: JSON and protobuf bodies"
    );
    assert!(
        py_fake
            .iter()
            .any(|l| l.contains("\"deployment scale\"") && l.contains("app=web")),
        "the Python client reads deployments/scale: {py_fake:?}"
    );
    served.shutdown().await;
}
