//! `kubectl` against the served fake API server: create, get, apply (client- and server-side),
//! edit, delete, a CRD installed through the API and its custom resources, tables.
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
        kc.run(&["create", "--validate=false", "-f", &f])
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
        kc.run(&["apply", "--validate=false", "-f", &f])
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
        kc.run_env(
            &["edit", "--validate=false", "configmap", "demo"],
            &[("KUBE_EDITOR", &editor)],
        )
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
        kc.run(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--validate=false",
            "-f",
            &f,
        ])
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
        let created = kc.run(&["create", "--validate=false", "-f", &f]);
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
        kc.run(&["apply", "--validate=false", "-f", &f])
    })
    .await;
    assert!(
        out.contains("mydemo.crddemo.k8s.io/example created"),
        "{out}"
    );
    let kc = k.clone();
    let out = blocking(move || {
        let f = kc.file("md2.yaml", MYDEMO_APPLIED);
        kc.run(&["apply", "--validate=false", "-f", &f])
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
            .args(["create", "--validate=false", "-f", &invalid])
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
    served.shutdown().await;
}
