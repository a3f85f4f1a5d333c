//! `kube_controller_runtime::operator`: an operator binary's `main` through its public
//! interface — `--embedded` starts an in-memory API server with the operator's CRDs, writes a
//! kubeconfig kubectl can use and runs the controllers' set-up; bad flags and a foreign
//! kubeconfig are refused naming the flag.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Parser;
use example_crddemo::pkg::apis::crddemo::v1::Mydemo;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_controller_runtime::operator::{Operator, OperatorError, OperatorFlags};
use kube_controller_runtime::webhook::Webhook;
use kube_controller_runtime::webhook::admission::{Denial, Request, ValidationResult, Validator};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    operator: OperatorFlags,
}

fn flags(args: &[&str]) -> OperatorFlags {
    let mut all = vec!["op"];
    all.extend_from_slice(args);
    Cli::try_parse_from(all)
        .unwrap_or_else(|e| panic!("{e}"))
        .operator
}

/// A client of the server `kubeconfig` names.
async fn client_at(kubeconfig: &Path) -> Result<kube::Client, String> {
    let kc = Kubeconfig::read_from(kubeconfig).map_err(|e| e.to_string())?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    Ok(client)
}

/// The CRDs a server at `kubeconfig` serves, once the file exists.
async fn crds_at(kubeconfig: &Path) -> Result<Vec<String>, String> {
    for _ in 0..200 {
        if kubeconfig.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let client = client_at(kubeconfig).await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    let list = crds
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect())
}

#[tokio::test]
async fn embedded_serves_the_crds_runs_the_setup_and_keeps_a_named_kubeconfig() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig = dir.path().join("op.kubeconfig");
    let set_up = Arc::new(AtomicBool::new(false));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let stop = {
        let kubeconfig = kubeconfig.clone();
        async move {
            let _ = tx.send(crds_at(&kubeconfig).await);
        }
    };
    let flag = set_up.clone();
    let result = Operator::new("op")
        .crds([Mydemo::crd()])
        .run_until(
            flags(&["--embedded", "--kubeconfig", &kubeconfig.to_string_lossy()]),
            move |mgr| {
                assert!(mgr.bound_addresses().is_empty(), "no default listeners");
                flag.store(true, Ordering::SeqCst);
                Ok(())
            },
            stop,
        )
        .await;
    result.unwrap_or_else(|e| panic!("{e}"));
    assert!(set_up.load(Ordering::SeqCst), "the set-up ran");
    let crds = rx.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(crds, Ok(vec!["mydemos.crddemo.k8s.io".to_string()]));
    let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
    assert!(
        text.contains(kube_controller_runtime::operator::EMBEDDED_KUBECONFIG_MARKER),
        "a named kubeconfig is kept: {text}"
    );

    // A second run may overwrite it (an earlier --embedded wrote it) …
    let result = Operator::new("op")
        .run_until(
            flags(&["--embedded", "--kubeconfig", &kubeconfig.to_string_lossy()]),
            |_| Ok(()),
            async {},
        )
        .await;
    assert!(result.is_ok(), "{result:?}");
    // … but never a kubeconfig of the user's.
    let foreign = dir.path().join("config");
    std::fs::write(
        &foreign,
        "apiVersion: v1\nkind: Config\ncurrent-context: prod\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let err = Operator::new("op")
        .run_until(
            flags(&["--embedded", "--kubeconfig", &foreign.to_string_lossy()]),
            |_| Ok(()),
            async {},
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("a foreign kubeconfig was overwritten"));
    assert!(
        matches!(err, OperatorError::ForeignKubeconfig { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .ends_with("the file exists and was not written by --embedded; refusing to overwrite it (name a new file)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap_or_default(),
        "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
    );
}

#[tokio::test]
async fn a_failing_set_up_and_bad_flags_are_reported_by_name() {
    let err = Operator::new("op")
        .run_until(
            flags(&["--embedded"]),
            |_| Err("no such informer".into()),
            async {},
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("a failed set-up ran"));
    assert_eq!(
        err.to_string(),
        "setting up the controllers: no such informer"
    );

    let err = Operator::new("op")
        .run_until(flags(&["--master", "http://[::1"]), |_| Ok(()), async {})
        .await
        .err()
        .unwrap_or_else(|| panic!("a bad --master was accepted"));
    assert!(
        err.to_string().starts_with("--master \"http://[::1\": "),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let missing = dir.path().join("nope");
    let err = Operator::new("op")
        .run_until(
            flags(&["--kubeconfig", &missing.to_string_lossy()]),
            |_| Ok(()),
            async {},
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("a missing kubeconfig was accepted"));
    assert!(
        err.to_string()
            .starts_with(&format!("kubeconfig {}", missing.display())),
        "{err}"
    );

    let err = Operator::new("op")
        .run_until(
            flags(&["--embedded", "--metrics-bind-address", "not-an-address"]),
            |_| Ok(()),
            async {},
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("a bad metrics address was accepted"));
    assert!(
        err.to_string().starts_with("--metrics-bind-address: "),
        "{err}"
    );
}

/// Refuses ConfigMaps named `forbidden`.
struct NoForbidden;

impl Validator<ConfigMap> for NoForbidden {
    async fn validate_create(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
        if cm.metadata.name.as_deref() == Some("forbidden") {
            return Err(Denial::forbidden("no ConfigMap is called forbidden"));
        }
        Ok(vec![])
    }

    async fn validate_update(&self, _: &Request, _: &ConfigMap, _: &ConfigMap) -> ValidationResult {
        Ok(vec![])
    }

    async fn validate_delete(&self, _req: &Request, _cm: &ConfigMap) -> ValidationResult {
        Ok(vec![])
    }
}

/// `deploy/webhooks.yaml` of an operator with [`NoForbidden`], as `kube-codegen manifests`
/// writes it: a Service reference the embedded run rewrites to its loopback server.
const WEBHOOKS_YAML: &str = r#"---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: op-validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service:
      name: op-webhook-service
      namespace: system
      path: /validate--v1-configmap
  failurePolicy: Fail
  name: vconfigmap-v1.kb.io
  rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [configmaps]
  sideEffects: None
"#;

/// Creates ConfigMap `name` in `default` through the server at `kubeconfig`.
async fn create_configmap(kubeconfig: &Path, name: &str) -> Result<(), String> {
    let client = client_at(kubeconfig).await?;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    api.create(&PostParams::default(), &cm)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn embedded_serves_the_webhooks_and_installs_them_pointing_at_itself() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let kubeconfig = dir.path().join("op.kubeconfig");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let stop = {
        let kubeconfig = kubeconfig.clone();
        async move {
            let _ = crds_at(&kubeconfig).await;
            // The configuration is installed once the webhook server listens: until then the
            // name is free (and each attempt that went through is cleaned up by its name).
            let mut denied = None;
            for i in 0..200 {
                match create_configmap(&kubeconfig, "forbidden").await {
                    Err(e) if e.contains("no ConfigMap is called forbidden") => {
                        denied = Some(e);
                        break;
                    }
                    Err(e) if e.contains("AlreadyExists") || e.contains("already exists") => {}
                    Err(e) => {
                        let _ = tx.send(Err(format!("attempt {i}: {e}")));
                        return;
                    }
                    Ok(()) => {
                        // Before the installation; delete it so the next attempt is a create.
                        let _ = delete_configmap(&kubeconfig, "forbidden").await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let allowed = create_configmap(&kubeconfig, "allowed").await;
            let _ = tx.send(Ok((denied, allowed)));
        }
    };
    let result = Operator::new("op")
        .webhooks(WEBHOOKS_YAML)
        .run_until(
            flags(&["--embedded", "--kubeconfig", &kubeconfig.to_string_lossy()]),
            |mgr| {
                Webhook::builder(mgr)
                    .for_::<ConfigMap>()
                    .with_validator(NoForbidden)
                    .complete()?;
                Ok(())
            },
            stop,
        )
        .await;
    result.unwrap_or_else(|e| panic!("{e}"));
    let (denied, allowed) = rx
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let denied = denied.unwrap_or_else(|| panic!("the webhook never denied"));
    assert!(denied.contains("vconfigmap-v1.kb.io"), "{denied}");
    assert_eq!(allowed, Ok(()));
    // The run's certificate directory is gone.
    let certs =
        std::env::temp_dir().join(format!("op-embedded-{}-webhook-certs", std::process::id()));
    assert!(!certs.exists(), "{} left behind", certs.display());
}

async fn delete_configmap(kubeconfig: &Path, name: &str) -> Result<(), String> {
    let client = client_at(kubeconfig).await?;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.delete(name, &Default::default())
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}
