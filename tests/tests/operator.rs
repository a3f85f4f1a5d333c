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
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_controller_runtime::operator::{Operator, OperatorError, OperatorFlags};

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

/// The CRDs a server at `kubeconfig` serves, once the file exists.
async fn crds_at(kubeconfig: &Path) -> Result<Vec<String>, String> {
    for _ in 0..200 {
        if kubeconfig.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let kc = Kubeconfig::read_from(kubeconfig).map_err(|e| e.to_string())?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
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
