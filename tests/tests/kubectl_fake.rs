//! `kubectl` against the served fake API server: create, get, apply (client- and server-side),
//! edit, delete, a CRD installed through the API and its custom resources, tables; and the
//! examples' webhooks as a user of `crddemo --embedded` and `eru-operator --embedded` meets
//! them (the binaries serve them on loopback and register them in their in-memory server).
//!
//! kubectl comes from `scripts/install-kubectl.sh` (`$KUBE_CODEGEN_K8S_BIN`, PATH, then a cached
//! or fresh build from the Go module proxy); without one the test fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{ApiResource, GroupVersionKind};
use kube_codegen_runtime::fake::{FakeApiServer, FakeHandle};
use serde_json::Value;

/// The kubectl to test with, from `scripts/install-kubectl.sh` (which builds one from the Go
/// module proxy when none is at hand). A missing kubectl fails the test: it is an install step,
/// not a reason to skip.
fn kubectl_path() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install-kubectl.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} could not provide a kubectl ({})",
        script.display(),
        out.status
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let path = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    assert!(
        path.is_file(),
        "install-kubectl.sh printed {path:?}, which is no file"
    );
    path
}

struct Kubectl {
    bin: PathBuf,
    home: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Kubectl {
    /// Runs kubectl; returns stdout, panicking with stderr on failure.
    fn run(&self, args: &[&str]) -> String {
        self.run_env(args, &[])
    }

    /// Runs kubectl; returns its stderr, panicking if it succeeds.
    fn fail(&self, args: &[&str]) -> String {
        let out = Command::new(&self.bin)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .output()
            .unwrap_or_else(|e| panic!("running kubectl {args:?}: {e}"));
        assert!(!out.status.success(), "kubectl {args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .env_remove("KUBECTL_EXTERNAL_DIFF");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("running kubectl {args:?}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
            out.status
        );
        stdout
    }

    fn file(&self, name: &str, content: &str) -> String {
        let p = self.home.path().join(name);
        std::fs::write(&p, content).unwrap_or_else(|e| panic!("writing {p:?}: {e}"));
        p.to_string_lossy().into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        let out = self.run(&a);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("kubectl {args:?} JSON: {e}\n{out}"))
    }
}

fn cm_data(handle: &FakeHandle, key: &str) -> Option<String> {
    handle
        .get::<ConfigMap>("default", "demo")
        .unwrap_or_else(|e| panic!("{e}"))
        .and_then(|c| c.data)
        .and_then(|d| d.get(key).cloned())
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| panic!("kubectl task: {e}"))
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  labels:\n    app: demo\ndata:\n  mode: value-one\n  keep: yes-please\n";
const CM_APPLIED: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  labels:\n    app: demo\ndata:\n  mode: value-applied\n  keep: yes-please\n";
const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: mydemos.crddemo.k8s.io
  annotations:
    api-approved.kubernetes.io: "unapproved, kube-codegen tests"
spec:
  group: crddemo.k8s.io
  scope: Namespaced
  names:
    kind: Mydemo
    plural: mydemos
    singular: mydemo
    shortNames: [md]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Port
      type: integer
      jsonPath: .spec.port
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ip: {type: string}
              port: {type: integer, minimum: 1, maximum: 65535}
"#;
const MYDEMO: &str = "apiVersion: crddemo.k8s.io/v1\nkind: Mydemo\nmetadata:\n  name: example\nspec:\n  ip: 10.0.0.1\n  port: 8080\n";
const MYDEMO_APPLIED: &str = "apiVersion: crddemo.k8s.io/v1\nkind: Mydemo\nmetadata:\n  name: example\nspec:\n  ip: 10.0.0.1\n  port: 9090\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_round_trip() {
    let bin = blocking(kubectl_path).await;
    let server = FakeApiServer::new();
    let handle = server.handle();
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig = home.path().join("kubeconfig");
    served
        .write_kubeconfig(&kubeconfig)
        .unwrap_or_else(|e| panic!("{e}"));
    let k = std::sync::Arc::new(Kubectl {
        bin,
        home,
        kubeconfig,
    });

    // create / get
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file("cm.yaml", CM);
        kc.run(&["create", "-f", &f])
    })
    .await;
    assert!(out.contains("configmap/demo created"), "{out}");
    assert_eq!(cm_data(&handle, "mode").as_deref(), Some("value-one"));
    let kc = k.clone();
    let got = blocking(move || kc.json(&["get", "configmap", "demo"])).await;
    assert_eq!(got["data"]["mode"], "value-one");
    assert!(got["metadata"]["uid"].is_string());
    let kc = k.clone();
    let table = blocking(move || kc.run(&["get", "configmaps"])).await;
    assert!(table.contains("NAME") && table.contains("demo"), "{table}");

    // client-side apply changes a field
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file("cm2.yaml", CM_APPLIED);
        kc.run(&["apply", "-f", &f])
    })
    .await;
    assert!(out.contains("configmap/demo configured"), "{out}");
    assert_eq!(cm_data(&handle, "mode").as_deref(), Some("value-applied"));
    assert_eq!(cm_data(&handle, "keep").as_deref(), Some("yes-please"));

    // edit through an editor script
    let kc = k.clone();
    let out = blocking(move || {
        let editor = kc.file(
            "editor.sh",
            "#!/bin/sh\nsed -i 's/value-applied/value-edited/' \"$1\"\n",
        );
        let _ = Command::new("chmod").args(["+x", &editor]).status();
        kc.run_env(&["edit", "configmap", "demo"], &[("KUBE_EDITOR", &editor)])
    })
    .await;
    assert!(out.contains("configmap/demo edited"), "{out}");
    assert_eq!(cm_data(&handle, "mode").as_deref(), Some("value-edited"));

    // server-side apply
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file(
            "cm3.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  mode: value-ssa\n",
        );
        kc.run(&["apply", "--server-side", "--force-conflicts", "-f", &f])
    })
    .await;
    assert!(out.contains("serverside-applied"), "{out}");
    assert_eq!(cm_data(&handle, "mode").as_deref(), Some("value-ssa"));

    // delete
    let kc = k.clone();
    let out = blocking(move || kc.run(&["delete", "configmap", "demo"])).await;
    assert!(out.contains("configmap \"demo\" deleted"), "{out}");
    assert_eq!(cm_data(&handle, "mode"), None);

    // A CRD through the API, then its custom resources by kind, plural and short name.
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file("crd.yaml", CRD);
        let created = kc.run(&["create", "-f", &f]);
        let waited = kc.run(&[
            "wait",
            "--for=condition=Established",
            "crd/mydemos.crddemo.k8s.io",
            "--timeout=20s",
        ]);
        format!("{created}{waited}")
    })
    .await;
    assert!(
        out.contains(
            "customresourcedefinition.apiextensions.k8s.io/mydemos.crddemo.k8s.io created"
        ),
        "{out}"
    );
    assert!(out.contains("condition met"), "{out}");
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file("md.yaml", MYDEMO);
        kc.run(&["apply", "-f", &f])
    })
    .await;
    assert!(
        out.contains("mydemo.crddemo.k8s.io/example created"),
        "{out}"
    );
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file("md2.yaml", MYDEMO_APPLIED);
        kc.run(&["apply", "-f", &f])
    })
    .await;
    assert!(
        out.contains("mydemo.crddemo.k8s.io/example configured"),
        "{out}"
    );
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("crddemo.k8s.io", "v1", "Mydemo"),
        "mydemos",
    );
    let stored = handle
        .get_value(&ar, "default", "example")
        .unwrap_or_else(|| panic!("the mydemo is not stored"));
    assert_eq!(stored["spec"]["port"], 9090);
    let kc = k.clone();
    let table = blocking(move || kc.run(&["get", "md"])).await;
    assert!(
        table.contains("PORT") && table.contains("9090") && table.contains("example"),
        "{table}"
    );
    let kc = k.clone();
    let out = blocking(move || {
        let invalid = kc.file(
            "bad.yaml",
            "apiVersion: crddemo.k8s.io/v1\nkind: Mydemo\nmetadata:\n  name: bad\nspec:\n  ip: x\n  port: 70000\n",
        );
        let out = Command::new(&kc.bin)
            .args(["create", "-f", &invalid])
            .env("KUBECONFIG", &kc.kubeconfig)
            .env("HOME", kc.home.path())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    })
    .await;
    assert!(
        out.contains("spec.port in body should be less than or equal to 65535"),
        "{out}"
    );
    let kc = k.clone();
    let out = blocking(move || kc.run(&["delete", "mydemo", "example"])).await;
    assert!(out.contains("deleted"), "{out}");
    assert!(handle.get_value(&ar, "default", "example").is_none());
    let kc = k.clone();
    let out = blocking(move || kc.run(&["get", "namespaces"])).await;
    assert!(out.contains("kube-system"), "{out}");
    // Applied twice, a Deployment is unchanged (kubectl merges its containers by name, from
    // the merge keys in the served OpenAPI), and an unchanged Pod can be replaced.
    let kc = k.clone();
    let (first, second, replaced) = blocking(move || {
        let f = kc.file("workloads.yaml", WORKLOADS);
        (
            kc.run(&["apply", "-f", &f]),
            kc.run(&["apply", "-f", &f]),
            kc.run(&["replace", "-f", &f]),
        )
    })
    .await;
    assert!(first.contains("deployment.apps/web created"), "{first}");
    assert!(
        second.contains("deployment.apps/web unchanged") && second.contains("pod/one unchanged"),
        "{second}"
    );
    assert!(replaced.contains("pod/one replaced"), "{replaced}");
    served.shutdown().await;
}

const WORKLOADS: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: registry.example/web:1
        ports: [{containerPort: 80}]
        env: [{name: A, value: b}]
---
apiVersion: v1
kind: Pod
metadata: {name: one, namespace: default}
spec:
  containers: [{name: c, image: registry.example/one:1}]
";

/// Runs kubectl with a kubeconfig; returns (success, stdout, stderr).
fn kubectl_out(
    bin: &Path,
    kubeconfig: &Path,
    home: &Path,
    args: &[&str],
) -> (bool, String, String) {
    let out = Command::new(bin)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .output()
        .unwrap_or_else(|e| panic!("running kubectl {args:?}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// kubectl, a real kube-apiserver and a served fake, each with a kubeconfig in a scratch home.
struct Both {
    bin: PathBuf,
    /// Kept for the test's length: dropping it stops kube-apiserver.
    real: tests::apiserver::RealApiServer,
    served: kube_codegen_runtime::fake::ServedApiServer,
    home: tempfile::TempDir,
    real_kc: PathBuf,
    fake_kc: PathBuf,
}

async fn both(server: FakeApiServer) -> Both {
    let bin = blocking(kubectl_path).await;
    let real = tests::apiserver::RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let served = server
        .serve(([127, 0, 0, 1], 0).into())
        .await
        .unwrap_or_else(|e| panic!("serve: {e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fake_kc = home.path().join("fake-kubeconfig");
    served
        .write_kubeconfig(&fake_kc)
        .unwrap_or_else(|e| panic!("{e}"));
    let real_kc = real.kubeconfig_path().to_path_buf();
    Both {
        bin,
        real,
        served,
        home,
        real_kc,
        fake_kc,
    }
}

/// The same kubectl commands against the fake and a real kube-apiserver: `explain` prints the
/// same documentation, and invalid manifests fail with the same server-side validation errors
/// (kubectl validates through `fieldValidation=Strict` when the OpenAPI says the server can).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_and_validation_match_a_real_kube_apiserver() {
    let Both {
        bin,
        real: _real,
        served,
        home,
        real_kc,
        fake_kc,
    } = both(FakeApiServer::new()).await;
    let crd = home.path().join("crd.yaml");
    std::fs::write(&crd, CRD).unwrap_or_else(|e| panic!("{e}"));
    let bad_cm = home.path().join("bad-cm.yaml");
    std::fs::write(
        &bad_cm,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\n  bogus: 1\ndata:\n  a: b\nextra: true\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let bad_md = home.path().join("bad-md.yaml");
    std::fs::write(
        &bad_md,
        "apiVersion: crddemo.k8s.io/v1\nkind: Mydemo\nmetadata:\n  name: strict\nspec:\n  ip: 10.0.0.1\n  port: 8080\n  colour: red\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let home_path = home.path().to_path_buf();
    let results = blocking(move || {
        let mut outputs = Vec::new();
        for kc in [&real_kc, &fake_kc] {
            let run = |args: &[&str]| kubectl_out(&bin, kc, &home_path, args);
            let crd_s = crd.to_string_lossy().into_owned();
            let (ok, _, err) = run(&["apply", "-f", &crd_s]);
            assert!(ok, "applying the CRD: {err}");
            let (ok, _, err) = run(&[
                "wait",
                "--for=condition=Established",
                "crd/mydemos.crddemo.k8s.io",
                "--timeout=30s",
            ]);
            assert!(ok, "waiting for the CRD: {err}");
            let mut per_server = Vec::new();
            for what in [
                "deployment.spec",
                "pod.spec.containers.ports",
                "configmap",
                "crd.spec.versions.schema",
            ] {
                per_server.push(run(&["explain", what]));
            }
            // The CRD's documentation is published a moment after it is established.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let explained = loop {
                let r = run(&["explain", "mydemo.spec"]);
                if r.0 || std::time::Instant::now() > deadline {
                    break r;
                }
                std::thread::sleep(std::time::Duration::from_millis(300));
            };
            per_server.push(explained);
            for f in [&bad_cm, &bad_md] {
                let f = f.to_string_lossy().into_owned();
                let (ok, out, err) = run(&["create", "-f", &f]);
                per_server.push((ok, out, err.replace(&f, "<file>")));
            }
            outputs.push(per_server);
        }
        outputs
    })
    .await;
    let (real_out, fake_out) = (&results[0], &results[1]);
    for (i, (r, f)) in real_out.iter().zip(fake_out).enumerate() {
        if i == 1 {
            // k8s-openapi's definitions carry no enum values: the real server's explain lists
            // the protocol's `enum:` and "Possible enum values" (an intended difference).
            assert!(
                f.0,
                "explain pod.spec.containers.ports on the fake: {}",
                f.2
            );
            continue;
        }
        assert_eq!(
            r, f,
            "command {i} differs between kube-apiserver and the fake"
        );
    }
    assert!(
        !fake_out[5].0
            && fake_out[5]
                .2
                .contains("strict decoding error: unknown field"),
        "kubectl create of an unknown field: {}",
        fake_out[5].2
    );
    served.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// The examples' webhooks on --embedded
// ---------------------------------------------------------------------------------------------

/// A binary of the workspace run with `--embedded --kubeconfig <dir>/kubeconfig`, until its
/// log says its webhooks are installed in its in-memory server; and kubectl for it.
fn embedded(
    package: &str,
    bin: &str,
    extra: &[&str],
) -> (tests::apiserver::SupervisedProcess, Kubectl) {
    let program = tests::e2e::build_bin(package, bin).unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig = home.path().join("kubeconfig");
    let log = home.path().join(format!("{bin}.log"));
    let mut args: Vec<std::ffi::OsString> = vec![
        "--embedded".into(),
        "--kubeconfig".into(),
        kubeconfig.clone().into(),
    ];
    args.extend(extra.iter().map(Into::into));
    let mut process = tests::apiserver::SupervisedProcess::spawn(
        "embedded example",
        &program,
        &args,
        &[("NO_COLOR".into(), "1".into())],
        &log,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("webhooks installed for this process") {
            break;
        }
        if let Ok(Some(status)) = process.try_wait() {
            panic!("{bin} exited ({status}):\n{text}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{bin} did not install its webhooks:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kubectl = Kubectl {
        bin: kubectl_path(),
        home,
        kubeconfig,
    };
    (process, kubectl)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crddemo_embedded_validates_and_converts_through_its_webhooks() {
    blocking(|| {
        let (_process, k) = embedded("example-crddemo", "crddemo", &[]);
        let mydemo = |name: &str, ip: &str, port: i32| {
            format!("apiVersion: crddemo.k8s.io/v1\nkind: Mydemo\nmetadata:\n  name: {name}\nspec:\n  ip: \"{ip}\"\n  port: {port}\n")
        };
        let alpha = |name: &str, address: &str| {
            format!("apiVersion: crddemo.k8s.io/v1alpha1\nkind: Mydemo\nmetadata:\n  name: {name}\nspec:\n  address: \"{address}\"\n")
        };
        let a = k.file("a.yaml", &mydemo("a", "127.0.0.1", 8080));
        k.run(&["create", "-f", &a]);
        // The validating webhook: one address per Mydemo, the first one named.
        let b = k.file("b.yaml", &mydemo("b", "127.0.0.1", 8080));
        let err = k.fail(&["create", "-f", &b]);
        assert!(
            err.contains("The Mydemo \"b\" is invalid: spec.port: Duplicate value: \"127.0.0.1:8080\": already used by Mydemo default/a"),
            "{err}"
        );
        // The conversion webhook: v1 stored, read as v1alpha1; v1alpha1 written, read as v1.
        let read = k.run(&["get", "mydemos.v1alpha1.crddemo.k8s.io", "a", "-o", "jsonpath={.spec.address}"]);
        assert_eq!(read, "127.0.0.1:8080");
        let c = k.file("c.yaml", &alpha("c", "[fd00::10]:9090"));
        k.run(&["create", "-f", &c]);
        let read = k.run(&["get", "mydemos.v1.crddemo.k8s.io", "c", "-o", "jsonpath={.spec.ip} {.spec.port}"]);
        assert_eq!(read, "fd00::10 9090");
        // A v1alpha1 write reaches the v1 validator converted (matchPolicy: Equivalent).
        let d = k.file("d.yaml", &alpha("d", "127.0.0.1:8080"));
        let err = k.fail(&["create", "-f", &d]);
        assert!(err.contains("already used by Mydemo default/a"), "{err}");
        let e = k.file("e.yaml", &alpha("e", "nowhere"));
        let err = k.fail(&["create", "-f", &e]);
        assert!(err.contains("is no <ip>:<port> (no port)"), "{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eru_embedded_defaults_the_time_zone_through_its_webhook() {
    blocking(|| {
        let (_process, k) = embedded(
            "example-eru",
            "eru-operator",
            &["--default-time-zone", "Asia/Shanghai"],
        );
        let eru = |name: &str, zone: &str| {
            format!("apiVersion: mtsre.meitu.com/v1\nkind: Eru\nmetadata:\n  name: {name}\nspec:\n  deployment: web\n  schedule: \"0 3 * * *\"\n{zone}")
        };
        let x = k.file("x.yaml", &eru("x", ""));
        k.run(&["create", "-f", &x]);
        assert_eq!(k.run(&["get", "eru", "x", "-o", "jsonpath={.spec.timeZone}"]), "Asia/Shanghai");
        let paris = k.file("paris.yaml", &eru("paris", "  timeZone: Europe/Paris\n"));
        k.run(&["create", "-f", &paris]);
        assert_eq!(
            k.run(&["get", "eru", "paris", "-o", "jsonpath={.spec.timeZone}"]),
            "Europe/Paris"
        );
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// kubectl's generators (they send protobuf) against both servers
// ---------------------------------------------------------------------------------------------

/// `o` without what differs between any two servers: uid (also where labels and selectors
/// repeat it), resourceVersion, times, a Service's allocated IPs.
fn comparable(mut o: Value) -> Value {
    let uid = o
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    fn walk(v: &mut Value, uid: &str) {
        match v {
            Value::Object(m) => {
                for k in [
                    "uid",
                    "resourceVersion",
                    "creationTimestamp",
                    "time",
                    "clusterIP",
                    "clusterIPs",
                    "kubectl.kubernetes.io/restartedAt",
                ] {
                    m.remove(k);
                }
                m.values_mut().for_each(|c| walk(c, uid));
            }
            Value::Array(a) => a.iter_mut().for_each(|c| walk(c, uid)),
            Value::String(s) if !uid.is_empty() && s.contains(uid) => {
                *s = s.replace(uid, "UID");
            }
            _ => {}
        }
    }
    walk(&mut o, &uid);
    // Entries are ordered by their times (to the second), then by manager: with the times
    // gone, by manager alone, or two writes that fell into one second on one server and into
    // two on the other would read as a difference.
    if let Some(Value::Array(entries)) = o.pointer_mut("/metadata/managedFields") {
        let key = |e: &Value| {
            ["operation", "manager", "subresource"].map(|k| {
                e.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            })
        };
        entries.sort_by_key(key);
    }
    o
}

/// `kubectl get <kind> <name> -n <ns> -o json --show-managed-fields` through `run`, as the
/// transcript line of a stored object ([`comparable`]; kubectl's error if it has none).
fn stored(run: impl Fn(&[&str]) -> (bool, String, String), object: &[&str], ns: &str) -> String {
    let mut args = vec!["get"];
    args.extend_from_slice(object);
    args.extend(["-n", ns, "-o", "json", "--show-managed-fields"]);
    let (ok, out, err) = run(&args);
    let v: Value = if ok {
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    } else {
        Value::String(err)
    };
    format!("{object:?}: {}", comparable(v))
}

/// The two transcripts, kube-apiserver's first, line by line; `ran` is what the real server's
/// line `at` says when the commands ran at all.
fn assert_same_transcripts(results: &[Vec<String>], at: usize, ran: &str) {
    let (real_out, fake_out) = (&results[0], &results[1]);
    assert!(
        real_out[at].contains(ran),
        "the commands ran on kube-apiserver: {}",
        real_out[at]
    );
    for (r, f) in real_out.iter().zip(fake_out) {
        assert_eq!(r, f, "kube-apiserver vs the fake");
    }
    assert_eq!(real_out.len(), fake_out.len());
}

/// kubectl's `create <kind>`, `expose`, `scale`, `set image`, `label` and `auth` commands, which
/// send built-in objects as protobuf, against a real kube-apiserver and the fake: the same
/// output, and the same objects stored (managed fields included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_generators_match_a_real_kube_apiserver() {
    // The review kinds, as the `kube-fake-apiserver` program serves them.
    let Both {
        bin,
        real: _real,
        served,
        home,
        real_kc,
        fake_kc,
    } = both(
        FakeApiServer::with_resources(kube_codegen_runtime::fake::REVIEW_KINDS)
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    let home_path = home.path().to_path_buf();
    let commands: &[&[&str]] = &[
        &["create", "namespace", "gen"],
        &[
            "create",
            "configmap",
            "cm",
            "--from-literal=a=b",
            "-n",
            "gen",
        ],
        &[
            "create",
            "secret",
            "generic",
            "s",
            "--from-literal=a=b",
            "-n",
            "gen",
        ],
        &[
            "create",
            "secret",
            "tls",
            "t",
            "--cert=CERT",
            "--key=KEY",
            "-n",
            "gen",
        ],
        &[
            "create",
            "deployment",
            "d",
            "--image=nginx:1.27",
            "--replicas=2",
            "--port=8080",
            "-n",
            "gen",
        ],
        &[
            "create",
            "service",
            "clusterip",
            "svc",
            "--tcp=5678:8080",
            "-n",
            "gen",
        ],
        &[
            "expose",
            "deployment",
            "d",
            "--port=80",
            "--name=dsvc",
            "-n",
            "gen",
        ],
        &["scale", "deployment", "d", "--replicas=3", "-n", "gen"],
        &[
            "set",
            "image",
            "deployment/d",
            "nginx=nginx:1.28",
            "-n",
            "gen",
        ],
        &["label", "configmap", "cm", "x=y", "-n", "gen"],
        &["create", "serviceaccount", "sa", "-n", "gen"],
        &[
            "create",
            "role",
            "r",
            "--verb=get,list",
            "--resource=pods",
            "-n",
            "gen",
        ],
        &[
            "create",
            "rolebinding",
            "rb",
            "--role=r",
            "--serviceaccount=gen:sa",
            "-n",
            "gen",
        ],
        &[
            "create",
            "clusterrole",
            "cr",
            "--verb=get",
            "--non-resource-url=/healthz",
        ],
        &[
            "create",
            "job",
            "j",
            "--image=busybox",
            "-n",
            "gen",
            "--",
            "true",
        ],
        &["auth", "can-i", "get", "pods", "-n", "gen"],
        &["auth", "whoami"],
        &["delete", "configmap", "cm", "-n", "gen"],
    ];
    let objects: &[&[&str]] = &[
        &["secret", "s"],
        &["secret", "t"],
        &["deployment", "d"],
        &["service", "svc"],
        &["service", "dsvc"],
        &["serviceaccount", "sa"],
        &["role", "r"],
        &["rolebinding", "rb"],
        &["clusterrole", "cr"],
        &["job", "j"],
    ];
    let (cert, key) = {
        let c = rcgen::generate_simple_self_signed(vec!["gen.example".to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
        (c.cert.pem(), c.signing_key.serialize_pem())
    };
    let cert_file = home.path().join("tls.crt");
    let key_file = home.path().join("tls.key");
    std::fs::write(&cert_file, cert).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&key_file, key).unwrap_or_else(|e| panic!("{e}"));
    let (cert_arg, key_arg) = (
        format!("--cert={}", cert_file.display()),
        format!("--key={}", key_file.display()),
    );
    let results = blocking(move || {
        let mut outputs = Vec::new();
        for kc in [&real_kc, &fake_kc] {
            let run = |args: &[&str]| kubectl_out(&bin, kc, &home_path, args);
            let mut per_server = Vec::new();
            for c in commands {
                let args: Vec<&str> = c
                    .iter()
                    .map(|a| match *a {
                        "--cert=CERT" => cert_arg.as_str(),
                        "--key=KEY" => key_arg.as_str(),
                        a => a,
                    })
                    .collect();
                let (ok, out, err) = run(&args);
                per_server.push(format!("{c:?}: {ok} {out} {err}"));
            }
            for o in objects {
                per_server.push(stored(run, o, "gen"));
            }
            outputs.push(per_server);
        }
        outputs
    })
    .await;
    assert_same_transcripts(&results, 0, "true namespace/gen created");
    served.shutdown().await;
}

/// kubectl against one server: (succeeded, stdout, stderr) for the arguments.
type RunKubectl<'a> = &'a dyn Fn(&[&str]) -> (bool, String, String);

/// One server's side of a kubectl comparison: the commands' transcript.
struct Session<'a> {
    run: RunKubectl<'a>,
    home: &'a Path,
    lines: Vec<String>,
}

impl Session<'_> {
    /// Runs kubectl with `args` and records its answer.
    fn step(&mut self, args: &[&str]) {
        let (ok, out, err) = (self.run)(args);
        self.lines.push(format!("{args:?}: {ok} {out} {err}"));
    }

    /// `kubectl <verb> -f <manifest> <extra…>` for each manifest, in order.
    fn each_manifest(&mut self, verb: &str, manifests: &[(&str, &str)], extra: &[&str]) {
        for (name, _) in manifests {
            let file = self.home.join(name);
            let file = file.to_string_lossy().into_owned();
            let mut args = vec![verb, "-f", &file];
            args.extend_from_slice(extra);
            self.step(&args);
        }
    }
}

/// Writes `manifests` into a kubectl home, runs `script` against a real kube-apiserver and
/// against the fake, reads each of `objects` (kind, name) in `ns` as stored, and asserts that
/// the two transcripts are the same; line `at` of kube-apiserver's shows `ran` when the
/// commands ran at all.
async fn same_on_both(
    manifests: &'static [(&'static str, &'static str)],
    script: fn(&mut Session<'_>),
    ns: &'static str,
    objects: &'static [[&'static str; 2]],
    (at, ran): (usize, &'static str),
) {
    let Both {
        bin,
        real: _real,
        served,
        home,
        real_kc,
        fake_kc,
    } = both(FakeApiServer::new()).await;
    let home_path = home.path().to_path_buf();
    for (name, text) in manifests {
        std::fs::write(home.path().join(name), text).unwrap_or_else(|e| panic!("{e}"));
    }
    let results = blocking(move || {
        let mut outputs = Vec::new();
        for kc in [&real_kc, &fake_kc] {
            let run = |args: &[&str]| kubectl_out(&bin, kc, &home_path, args);
            let mut session = Session {
                run: &run,
                home: &home_path,
                lines: Vec::new(),
            };
            script(&mut session);
            for o in objects {
                session.lines.push(stored(run, o, ns));
            }
            outputs.push(session.lines);
        }
        outputs
    })
    .await;
    assert_same_transcripts(&results, at, ran);
    served.shutdown().await;
}

/// Manifests of the kinds the fake serves beside the workloads: PodDisruptionBudgets,
/// Ingresses, NetworkPolicies, HorizontalPodAutoscalers and CronJobs, valid (defaults) and
/// invalid (kube-apiserver's messages), by file name.
const MORE_KINDS: &[(&str, &str)] = &[
    (
        "pdb-empty.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: empty, namespace: more}\nspec: {}\n",
    ),
    (
        "pdb-expr.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: expr, namespace: more}\nspec:\n  minAvailable: 50%\n  unhealthyPodEvictionPolicy: AlwaysAllow\n  selector:\n    matchExpressions: [{key: app, operator: In, values: [a, b]}]\n",
    ),
    (
        "pdb-both.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: both, namespace: more}\nspec: {minAvailable: 1, maxUnavailable: 20%, unhealthyPodEvictionPolicy: IfHealthyBudget, selector: {matchLabels: {app: a}}}\n",
    ),
    (
        "pdb-neg.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: neg, namespace: more}\nspec: {minAvailable: -1, selector: {matchLabels: {\"a b\": x}}}\n",
    ),
    (
        "pdb-pct.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pct, namespace: more}\nspec: {maxUnavailable: \"150%\", unhealthyPodEvictionPolicy: Sometimes}\n",
    ),
    (
        "pdb-abc.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: abc, namespace: more}\nspec:\n  maxUnavailable: abc\n  selector:\n    matchExpressions:\n    - {key: app, operator: In}\n    - {key: tier, operator: Exists, values: [x]}\n    - {key: \"-k\", operator: Near, values: [\"bad value\"]}\n",
    ),
    (
        "np-min.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: min, namespace: more}\nspec:\n  podSelector: {}\n  ingress:\n  - from: [{podSelector: {matchLabels: {a: b}}}]\n    ports: [{port: 80}, {port: http, protocol: UDP}]\n",
    ),
    (
        "np-egress.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: egress, namespace: more}\nspec:\n  podSelector: {matchLabels: {app: a}}\n  egress:\n  - to: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}, {namespaceSelector: {}}]\n    ports: [{port: 8000, endPort: 8080}]\n",
    ),
    (
        "np-bad.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: bad, namespace: more}\nspec:\n  podSelector: {}\n  policyTypes: [Sideways]\n  ingress:\n  - from: [{ipBlock: {cidr: 10.0.0.0/33}}]\n    ports: [{protocol: ICMP, port: 70000}]\n",
    ),
    (
        "np-ports.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: ports, namespace: more}\nspec:\n  podSelector: {}\n  egress:\n  - to: [{}, {ipBlock: {cidr: 10.0.0.0/16, except: [10.0.0.0/8, 192.168.0.0/24, nope]}, podSelector: {}}]\n    ports: [{port: 90, endPort: 80}, {port: Web--Port, endPort: 9}, {endPort: 10}]\n",
    ),
    (
        "ing-ok.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ok, namespace: more}\nspec:\n  defaultBackend: {resource: {apiGroup: example.com, kind: Bucket, name: static}}\n  tls: [{hosts: [\"*.example.com\"], secretName: cert}]\n  rules:\n  - host: \"*.example.com\"\n    http:\n      paths:\n      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {name: http}}}}\n",
    ),
    (
        "ing-bad.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad, namespace: more}\nspec:\n  ingressClassName: Bad_Class\n  rules:\n  - host: Foo.COM\n    http:\n      paths:\n      - {path: bar, pathType: Prefix, backend: {service: {name: s, port: {number: 0}}}}\n      - {path: /x, backend: {service: {name: s, port: {name: http}}}}\n",
    ),
    (
        "ing-more.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: more, namespace: more}\nspec:\n  tls: [{hosts: [\"a.*.com\"], secretName: Bad_Secret}]\n  rules:\n  - host: 10.0.0.1\n    http: {paths: []}\n  - host: \"*.ok.com\"\n    http:\n      paths:\n      - {path: \"/a//b/.\", pathType: Exact, backend: {service: {name: 1svc, port: {name: x, number: 80}}}}\n      - {path: /c, pathType: Sometimes, backend: {}}\n      - {path: /d, pathType: Prefix, backend: {service: {name: s, port: {number: 70000}}, resource: {kind: K, name: nn}}}\n",
    ),
    (
        "ing-empty.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: empty, namespace: more}\nspec: {}\n",
    ),
    (
        "hpa-min.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: min, namespace: more}\nspec:\n  maxReplicas: 4\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n  behavior: {scaleDown: {stabilizationWindowSeconds: 60}}\n",
    ),
    (
        "hpa-up.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: up, namespace: more}\nspec:\n  minReplicas: 2\n  maxReplicas: 4\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n  metrics: [{type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 100Mi}}}]\n  behavior: {scaleUp: {selectPolicy: Min}}\n",
    ),
    (
        "hpa-bad.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: bad, namespace: more}\nspec:\n  minReplicas: 5\n  maxReplicas: 2\n  scaleTargetRef: {kind: Deployment, name: \"\"}\n",
    ),
    (
        "hpa-zero.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: zero, namespace: more}\nspec:\n  minReplicas: 0\n  scaleTargetRef: {apiVersion: a/b/c, kind: \"a/b\", name: \"..\"}\n",
    ),
    (
        "cj-bad.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: bad, namespace: more}\nspec:\n  schedule: not a schedule\n  concurrencyPolicy: Sometimes\n  startingDeadlineSeconds: -5\n  successfulJobsHistoryLimit: -1\n  timeZone: Mars/Base\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: c, image: busybox}]\n",
    ),
    (
        "cj-min.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: min, namespace: more}\nspec:\n  schedule: \"*/15 9-17 * JAN-MAR mon-fri\"\n  timeZone: Europe/Paris\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: busybox}]\n",
    ),
    (
        "cj-every.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: every, namespace: more}\nspec:\n  schedule: \"@every 1h30m\"\n  suspend: true\n  jobTemplate:\n    metadata: {labels: {a: b}}\n    spec:\n      backoffLimit: 2\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{name: c, image: busybox}]\n",
    ),
    (
        "cj-more.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a-cronjob-whose-name-is-longer-than-fifty-two-characters, namespace: more}\nspec:\n  schedule: \"CRON_TZ=UTC 0 * * * *\"\n  timeZone: Local\n  concurrencyPolicy: Forbid\n  jobTemplate:\n    spec:\n      selector: {matchLabels: {a: b}}\n      template:\n        spec:\n          restartPolicy: Always\n          containers: [{name: c, image: busybox}]\n",
    ),
    (
        "cj-nosched.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nosched, namespace: more}\nspec:\n  failedJobsHistoryLimit: -2\n  timeZone: \"\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: busybox}]\n",
    ),
    (
        "cj-descriptor.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: descriptor, namespace: more}\nspec:\n  schedule: \"@fortnightly\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: busybox}]\n",
    ),
    // A changed spec: the NetworkPolicy's second generation, with egress defaults.
    (
        "np-min-2.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: min, namespace: more}\nspec:\n  podSelector: {}\n  egress: [{ports: [{port: 53, protocol: UDP}]}]\n",
    ),
];

/// PodDisruptionBudgets, Ingresses, NetworkPolicies, HorizontalPodAutoscalers and CronJobs
/// through kubectl (its generators, which send protobuf, `apply -f` of valid and invalid manifests,
/// a merge patch) against a real kube-apiserver and the fake: the same output, and the same
/// objects stored (defaults, initial status, generation and managed fields).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_more_kinds_match_a_real_kube_apiserver() {
    same_on_both(
        MORE_KINDS,
        steps,
        "more",
        OBJECTS,
        (1, "true poddisruptionbudget.policy/gen-pdb created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "more"]);
        s.step(&[
            "create",
            "poddisruptionbudget",
            "gen-pdb",
            "--selector=app=a",
            "--max-unavailable=25%",
            "-n",
            "more",
        ]);
        s.step(&[
            "create",
            "ingress",
            "gen-ing",
            "--rule=foo.com/bar*=svc1:8080,tls=my-cert",
            "--class=nginx",
            "-n",
            "more",
        ]);
        s.step(&["create", "deployment", "d", "--image=nginx", "-n", "more"]);
        s.step(&[
            "autoscale",
            "deployment",
            "d",
            "--min=2",
            "--max=5",
            "--cpu=70%",
            "-n",
            "more",
        ]);
        s.step(&[
            "create",
            "cronjob",
            "gen-cj",
            "--image=busybox",
            "--schedule=*/5 * * * *",
            "-n",
            "more",
            "--",
            "true",
        ]);
        s.each_manifest("apply", MORE_KINDS, &[]);
        s.step(&[
            "patch",
            "poddisruptionbudget",
            "empty",
            "-n",
            "more",
            "--type=merge",
            "-p",
            r#"{"spec":{"minAvailable":"50%"}}"#,
        ]);
        s.step(&[
            "patch",
            "poddisruptionbudget",
            "empty",
            "-n",
            "more",
            "--type=merge",
            "-p",
            r#"{"spec":{"maxUnavailable":1}}"#,
        ]);
        s.step(&[
            "patch",
            "ingress",
            "ok",
            "-n",
            "more",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"}]}}}"#,
        ]);
    }
    const OBJECTS: &[[&str; 2]] = &[
        ["poddisruptionbudget", "gen-pdb"],
        ["poddisruptionbudget", "empty"],
        ["poddisruptionbudget", "expr"],
        ["ingress", "gen-ing"],
        ["ingress", "ok"],
        ["networkpolicy", "min"],
        ["networkpolicy", "egress"],
        ["horizontalpodautoscaler", "d"],
        ["horizontalpodautoscaler", "min"],
        ["horizontalpodautoscaler", "up"],
        ["cronjob", "gen-cj"],
        ["cronjob", "min"],
        ["cronjob", "every"],
    ];
}

/// PriorityClasses and the `Priority` admission plugin, as manifests for `create -f` (kubectl
/// sends them as JSON) and `kubectl run` (protobuf): the name of each, the manifest.
const PRIORITY: &[(&str, &str)] = &[
    (
        "pc-default.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: fallback}\nvalue: 1000\nglobalDefault: true\ndescription: every pod without a class\n",
    ),
    (
        "pc-second-default.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: second}\nvalue: 2000\nglobalDefault: true\n",
    ),
    (
        "pc-never.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: -5\npreemptionPolicy: Never\n",
    ),
    // No value: 0.
    (
        "pc-novalue.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: novalue}\n",
    ),
    (
        "pc-invalid.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: Bad-Name}\nvalue: 1000000001\npreemptionPolicy: Sometimes\n",
    ),
    (
        "pc-empty-policy.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: emptypolicy}\nvalue: 1\npreemptionPolicy: \"\"\n",
    ),
    (
        "pc-system-value.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 5\n",
    ),
    (
        "pc-system-default.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-cluster-critical}\nvalue: 2000000000\nglobalDefault: true\n",
    ),
    (
        "pc-system-unknown.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 5\n",
    ),
    (
        "pod-class.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: in-batch, namespace: prio}\nspec:\n  priorityClassName: batch\n  containers: [{name: c, image: nginx}]\n",
    ),
    (
        "pod-system.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: critical, namespace: prio}\nspec:\n  priorityClassName: system-cluster-critical\n  containers: [{name: c, image: nginx}]\n",
    ),
    (
        "pod-missing-class.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: missing, namespace: prio}\nspec:\n  priorityClassName: nowhere\n  containers: [{name: c, image: nginx}]\n",
    ),
    (
        "pod-wrong-priority.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: wrong, namespace: prio}\nspec:\n  priority: 7\n  containers: [{name: c, image: nginx}]\n",
    ),
    (
        "pod-wrong-policy.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: wrong-policy, namespace: prio}\nspec:\n  priorityClassName: batch\n  preemptionPolicy: PreemptLowerPriority\n  containers: [{name: c, image: nginx}]\n",
    ),
];

/// PriorityClasses through kubectl against a real kube-apiserver and the fake: the system
/// classes both servers start with, valid and invalid classes, the one global default, the
/// immutable value and policy, system classes that cannot be deleted, and the priority a new
/// Pod gets from its class or from the default class. The same output, and the same objects
/// stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_priority_classes_match_a_real_kube_apiserver() {
    same_on_both(
        PRIORITY,
        steps,
        "prio",
        OBJECTS,
        (0, "true namespace/prio created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "prio"]);
        // A pod before any default class: priority 0, no class.
        s.step(&["run", "before", "--image=nginx", "-n", "prio"]);
        s.step(&["get", "priorityclasses", "-o", "name"]);
        s.each_manifest("create", PRIORITY, &[]);
        s.step(&[
            "create",
            "priorityclass",
            "generated",
            "--value=50",
            "--description=from kubectl",
            "--preemption-policy=Never",
        ]);
        // A pod without a class gets the default class.
        s.step(&["run", "after", "--image=nginx", "-n", "prio"]);
        for patch in [
            r#"{"value":1001}"#,
            r#"{"preemptionPolicy":"Never"}"#,
            r#"{"description":"changed"}"#,
        ] {
            s.step(&["patch", "pc", "fallback", "--type=merge", "-p", patch]);
        }
        s.step(&[
            "patch",
            "pc",
            "batch",
            "--type=merge",
            "-p",
            r#"{"globalDefault":true}"#,
        ]);
        s.step(&["delete", "pc", "system-node-critical"]);
        s.step(&["delete", "pc", "system-missing"]);
        s.step(&["delete", "pc", "novalue"]);
        // With the default gone, the next one may be marked.
        s.step(&[
            "patch",
            "pc",
            "fallback",
            "--type=merge",
            "-p",
            r#"{"globalDefault":false}"#,
        ]);
        s.step(&[
            "patch",
            "pc",
            "batch",
            "--type=merge",
            "-p",
            r#"{"globalDefault":true}"#,
        ]);
        s.step(&["get", "priorityclasses", "-o", "name"]);
    }
    const OBJECTS: &[[&str; 2]] = &[
        ["priorityclass", "system-node-critical"],
        ["priorityclass", "system-cluster-critical"],
        ["priorityclass", "fallback"],
        ["priorityclass", "batch"],
        ["priorityclass", "generated"],
        ["pod", "before"],
        ["pod", "after"],
        ["pod", "in-batch"],
        ["pod", "critical"],
    ];
}

/// Manifests whose fields Go writes its own way: zero values of `omitempty` bools, numbers and
/// strings (left out, and owned by nobody), bools, numbers and strings without `omitempty`
/// that the manifest leaves out (written with their zero value, owned by nobody), and
/// defaults that test for the empty string or an empty map.
const GO_ENCODING: &[(&str, &str)] = &[
    (
        "sts-zeros.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: zeros}\nspec:\n  serviceName: \"\"\n  minReadySeconds: 0\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      hostNetwork: false\n      containers: [{name: c, image: nginx, stdin: false, workingDir: \"\", ports: [{containerPort: 80, hostPort: 0, name: \"\"}]}]\n",
    ),
    (
        "rs.yaml",
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  selector: {matchLabels: {a: f}}\n  template:\n    metadata: {labels: {a: f}}\n    spec: {containers: [{name: c, image: nginx}]}\n",
    ),
    (
        "sts-omitted.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: omitted}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: nginx}]\n",
    ),
    (
        "deploy-probe.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: probe}\nspec:\n  paused: false\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: nginx, readinessProbe: {httpGet: {port: 80, path: \"\"}}, livenessProbe: {httpGet: {port: 81}}}]\n",
    ),
    (
        "rc-labels.yaml",
        "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec:\n  minReadySeconds: 0\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: nginx}]\n",
    ),
    (
        "job-zeros.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: zeros}\nspec:\n  suspend: false\n  manualSelector: false\n  template:\n    spec:\n      restartPolicy: Never\n      automountServiceAccountToken: false\n      containers: [{name: c, image: busybox, tty: false}]\n",
    ),
    (
        "secret-zeros.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: zeros}\ntype: \"\"\nimmutable: false\nstringData: {a: \"\"}\n",
    ),
];

/// Objects whose manifests hold zero values, or leave out fields Go always writes, through
/// kubectl against a real kube-apiserver and the fake: the same objects stored, with the same
/// managed fields, also after a patch that sets a field to its zero value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_zero_values_are_stored_as_a_real_kube_apiserver_stores_them() {
    same_on_both(
        GO_ENCODING,
        steps,
        "zeros",
        OBJECTS,
        (0, "true namespace/zeros created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "zeros"]);
        s.each_manifest("create", GO_ENCODING, &["-n", "zeros"]);
        s.step(&[
            "patch",
            "statefulset",
            "omitted",
            "-n",
            "zeros",
            "--type=merge",
            "-p",
            r#"{"spec":{"minReadySeconds":0,"serviceName":"","revisionHistoryLimit":0}}"#,
        ]);
    }
    const OBJECTS: &[[&str; 2]] = &[
        ["statefulset", "zeros"],
        ["statefulset", "omitted"],
        ["deployment", "probe"],
        ["replicationcontroller", "rc"],
        ["job", "zeros"],
        ["secret", "zeros"],
        ["replicaset", "rs"],
    ];
}

/// Services' port rules (`validateServicePort` and the duplicate checks of `ValidateService`,
/// the node port allocator refusing a port asked for twice), and server-side apply keying a
/// port without a protocol by its default, `TCP`.
const SERVICE_PORTS: &[(&str, &str)] = &[
    (
        "s1.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s1}\nspec:\n  ports: [{port: 80}, {port: 53, protocol: UDP}]\n",
    ),
    (
        "s2.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s2}\nspec:\n  ports: [{port: 80, name: Web}, {port: 81, name: web}, {port: 82, name: web}]\n",
    ),
    (
        "s3.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s3}\nspec:\n  ports: [{port: 0, targetPort: 70000, name: a}, {port: 80, targetPort: HTTP_X, name: b, appProtocol: a/b/c}]\n",
    ),
    (
        "s4.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s4}\nspec:\n  ports: [{port: 80, protocol: ICMP}]\n",
    ),
    (
        "s5.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s5}\nspec:\n  ports: [{port: 80, nodePort: 30000, name: a}, {port: 81, nodePort: 30000, name: b}]\n",
    ),
    (
        "s6.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s6}\nspec:\n  ports: [{port: 80, name: a}, {port: 80, name: b}]\n",
    ),
    (
        "s7.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s7}\nspec:\n  type: NodePort\n  ports: [{port: 80, nodePort: 30001, name: a}, {port: 81, nodePort: 30001, name: b}]\n",
    ),
    (
        "s8.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s8}\nspec:\n  type: Bogus\n  ports: [{port: 80, name: \"-x\"}]\n",
    ),
    (
        "s9.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s9}\nspec:\n  ports: [{port: 80, targetPort: 0}]\n",
    ),
];

/// What `kubectl_services_match_a_real_kube_apiserver` applies: ports without a protocol.
const APPLIED_PORTS: &[(&str, &str)] = &[
    (
        "ap-one.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: ap}\nspec:\n  ports: [{port: 80, name: a}, {port: 53, protocol: UDP, name: b}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ap}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: nginx, ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}]}]\n",
    ),
    (
        "ap-two.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: ap}\nspec:\n  ports: [{port: 80, protocol: TCP, name: web}]\n",
    ),
];

#[tokio::test]
async fn kubectl_services_match_a_real_kube_apiserver() {
    const ALL: &[(&str, &str)] = &[
        SERVICE_PORTS[0],
        SERVICE_PORTS[1],
        SERVICE_PORTS[2],
        SERVICE_PORTS[3],
        SERVICE_PORTS[4],
        SERVICE_PORTS[5],
        SERVICE_PORTS[6],
        SERVICE_PORTS[7],
        SERVICE_PORTS[8],
        APPLIED_PORTS[0],
        APPLIED_PORTS[1],
    ];
    same_on_both(
        ALL,
        steps,
        "ports",
        OBJECTS,
        (0, "true namespace/ports created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "ports"]);
        s.each_manifest("create", SERVICE_PORTS, &["-n", "ports"]);
        let one = s.home.join("ap-one.yaml").to_string_lossy().into_owned();
        let two = s.home.join("ap-two.yaml").to_string_lossy().into_owned();
        let apply = ["apply", "--server-side", "-n", "ports", "--field-manager"];
        s.step(&[&apply[..], &["one", "-f", &one]].concat());
        // A conflict on the port keyed by its defaulted protocol, then taken by force.
        s.step(&[&apply[..], &["two", "-f", &two]].concat());
        s.step(&[&apply[..], &["two", "--force-conflicts", "-f", &two]].concat());
    }
    const OBJECTS: &[[&str; 2]] = &[["service", "ap"], ["deployment", "ap"], ["service", "s9"]];
}

/// Secrets and ConfigMaps refused as kube-apiserver refuses them: each Secret type's keys, a
/// value of the wrong type in a map (Go's decoder names the map field, not the key),
/// immutable ConfigMaps, a Secret's immutable type.
const SECRETS: &[(&str, &str)] = &[(
    "secrets.yaml",
    "apiVersion: v1\nkind: Secret\nmetadata: {name: tls1}\ntype: kubernetes.io/tls\nstringData: {tls.crt: a}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: dcj}\ntype: kubernetes.io/dockerconfigjson\nstringData: {.dockerconfigjson: \"not json\"}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: basic}\ntype: kubernetes.io/basic-auth\nstringData: {foo: bar}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: ssh}\ntype: kubernetes.io/ssh-auth\nstringData: {x: y}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: satok}\ntype: kubernetes.io/service-account-token\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: badkey}\nstringData: {\"a/b\": x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: imm}\nimmutable: true\ndata: {a: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: both}\ndata: {a: b}\nbinaryData: {a: YQ==}\n",
)];

#[tokio::test]
async fn kubectl_secrets_and_config_maps_are_refused_as_on_a_real_kube_apiserver() {
    same_on_both(
        SECRETS,
        steps,
        "secrets",
        OBJECTS,
        (0, "true namespace/secrets created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "secrets"]);
        s.each_manifest("create", SECRETS, &["-n", "secrets"]);
        let ns = ["-n", "secrets"];
        s.step(
            &[
                &["patch", "cm", "imm", "-p", r#"{"data":{"a":"c"}}"#][..],
                &ns,
            ]
            .concat(),
        );
        s.step(
            &[
                &["patch", "cm", "imm", "-p", r#"{"immutable":false}"#][..],
                &ns,
            ]
            .concat(),
        );
        s.step(
            &[
                &["create", "secret", "generic", "g1", "--from-literal=a=b"][..],
                &ns,
            ]
            .concat(),
        );
        s.step(
            &[
                &[
                    "patch",
                    "secret",
                    "g1",
                    "-p",
                    r#"{"type":"kubernetes.io/tls"}"#,
                ][..],
                &ns,
            ]
            .concat(),
        );
    }
    const OBJECTS: &[[&str; 2]] = &[["configmap", "imm"], ["secret", "g1"]];
}

/// Pods refused as kube-apiserver refuses them: volumes checked first (bad and repeated
/// names, and mounts of such volumes not found), container port names (valid, unique in
/// their container), container names and images, then node selectors, the pod security
/// context's ids and a `dnsConfig` for `dnsPolicy: None`. (One node selector entry: Go
/// reports a map's entries in random order.)
const PODS: &[(&str, &str)] = &[(
    "pods.yaml",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: pd}\nspec:\n  volumes: [{name: v, emptyDir: {}}, {name: v, configMap: {name: x}}, {name: V_x, emptyDir: {}}]\n  containers: [{name: c, image: nginx, volumeMounts: [{name: w, mountPath: /a}, {name: V_x, mountPath: /b}]}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pe}\nspec:\n  containers: [{name: c, image: nginx, ports: [{containerPort: 80, name: http}, {containerPort: 81, name: http}, {containerPort: 82, name: HTTP_2}]}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: ph}\nspec:\n  volumes: [{name: \"\", emptyDir: {}}]\n  containers: []\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pb}\nspec:\n  containers: [{name: c, image: nginx}, {name: c, image: nginx}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pc}\nspec:\n  restartPolicy: Sometimes\n  containers: [{name: C_1, image: \"\"}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pf}\nspec:\n  containers: [{name: c, image: nginx}]\n  nodeSelector: {\"bad key!\": \"bad value!\"}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pg}\nspec:\n  containers: [{name: c, image: nginx}]\n  securityContext: {runAsUser: -1, runAsGroup: 3000000000, fsGroup: -5}\n  dnsPolicy: None\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pi}\nspec:\n  restartPolicy: Sometimes\n  containers: [{name: c, image: nginx}]\n  dnsPolicy: None\n  dnsConfig: {nameservers: [1.1.1.1]}\n",
)];

#[tokio::test]
async fn kubectl_invalid_pods_are_refused_as_on_a_real_kube_apiserver() {
    same_on_both(PODS, steps, "pods", &[], (0, "true namespace/pods created")).await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "pods"]);
        s.each_manifest("create", PODS, &["-n", "pods"]);
    }
}

/// A Node as kube-apiserver keeps it: `podCIDRs` from `podCIDR`, the not-ready taint the
/// `TaintNodesByCondition` admission plugin adds (owned by no one), and `allocatable` as the
/// capacity a status write leaves it out of.
const NODES: &[(&str, &str)] = &[(
    "node.yaml",
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: b}}\nspec: {podCIDR: 10.1.0.0/24}\n",
)];

#[tokio::test]
async fn kubectl_nodes_match_a_real_kube_apiserver() {
    same_on_both(
        NODES,
        steps,
        "default",
        OBJECTS,
        (0, "true node/n1 created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.each_manifest("create", NODES, &[]);
        s.step(&[
            "patch",
            "node",
            "n1",
            "-p",
            r#"{"spec":{"unschedulable":true}}"#,
        ]);
        s.step(&[
            "patch",
            "node",
            "n1",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"capacity":{"cpu":"4","pods":"110"}}}"#,
        ]);
    }
    const OBJECTS: &[[&str; 2]] = &[["node", "n1"]];
}

/// Struct fields that are not pointers, which Go writes even when absent (`omitempty` does not
/// leave a struct out): a core Event's `source: {}` and `firstTimestamp: null`, an
/// `events.k8s.io` Event's `deprecatedSource: {}`, an EndpointSlice endpoint's
/// `conditions: {}`. Also the Endpoints and EndpointSlice rules: port defaults, an
/// EndpointSlice's generation (bumped by a change of anything but metadata, or of its labels)
/// and the deprecation warning every request to Endpoints gets.
const STRUCT_FIELDS: &[(&str, &str)] = &[
    (
        "event.yaml",
        "apiVersion: v1\nkind: Event\nmetadata: {name: ev}\ninvolvedObject: {kind: Pod, name: p, namespace: structs}\nreason: Test\nmessage: hello\n",
    ),
    (
        "events-event.yaml",
        "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: ev2}\neventTime: \"2026-01-01T00:00:00.000000Z\"\nreportingController: example.com/x\nreportingInstance: x-1\naction: Test\nreason: Test\ntype: Normal\nregarding: {kind: Pod, name: p, namespace: structs}\n",
    ),
    (
        "slice.yaml",
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: es}\naddressType: IPv4\nports: [{port: 81}, {name: http, port: 80, protocol: UDP}]\nendpoints: [{addresses: [10.0.0.3]}]\n",
    ),
    (
        "endpoints.yaml",
        "apiVersion: v1\nkind: Endpoints\nmetadata: {name: ep}\nsubsets: [{addresses: [{ip: 10.0.0.4}], ports: [{port: 81}]}]\n",
    ),
];

#[tokio::test]
async fn kubectl_struct_fields_and_endpoints_are_stored_as_a_real_kube_apiserver_stores_them() {
    same_on_both(
        STRUCT_FIELDS,
        steps,
        "structs",
        OBJECTS,
        (0, "true namespace/structs created"),
    )
    .await;

    fn steps(s: &mut Session<'_>) {
        s.step(&["create", "namespace", "structs"]);
        s.each_manifest("create", STRUCT_FIELDS, &["-n", "structs"]);
        // Labels bump a slice's generation, annotations do not, a port does.
        s.step(&["label", "endpointslice", "es", "a=b", "-n", "structs"]);
        s.step(&["annotate", "endpointslice", "es", "x=y", "-n", "structs"]);
        s.step(&[
            "patch",
            "endpointslice",
            "es",
            "-n",
            "structs",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/ports/0/port","value":82}]"#,
        ]);
        s.step(&[
            "patch",
            "endpoints",
            "ep",
            "-n",
            "structs",
            "-p",
            r#"{"subsets":[{"addresses":[{"ip":"10.0.0.5"}],"ports":[{"port":90,"name":"x"}]}]}"#,
        ]);
        s.step(&[
            "patch",
            "event",
            "ev",
            "-n",
            "structs",
            "-p",
            r#"{"count":2}"#,
        ]);
    }
    const OBJECTS: &[[&str; 2]] = &[
        ["event", "ev"],
        ["events.events.k8s.io", "ev2"],
        ["endpointslice", "es"],
        ["endpoints", "ep"],
    ];
}
