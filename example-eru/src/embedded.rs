//! `--embedded` and `--demo`: the operator against kube-codegen's in-memory API server, and the
//! seed's story played by the program itself — an annotated Deployment gets an Eru, two
//! rollouts happen on a per-second schedule, the annotation is removed and the Eru is gone.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{GetParams, Patch, PatchParams, PostParams};
use kube::{Api, CustomResourceExt};
use kube_codegen_runtime::api_status::{is_already_exists, is_not_found};
use kube_codegen_runtime::fake::{Controller, FakeApiServer, ServedApiServer};
use kube_controller_runtime::filters::REVIEW_RESOURCES;
use serde_json::json;

use crate::controller::annotation::controlling_deployment;
use crate::controller::rollout::restarted_at;
use crate::pkg::apis::mtsre::v1::Eru;
use crate::pkg::client::clientset::versioned::Clientset;
use crate::{ERU_ANNOTATION, SCHEDULE_ANNOTATION};

/// What can go wrong in embedded mode or the demo.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// The in-memory API server failed.
    #[error("in-memory API server: {0}")]
    Fake(#[from] kube_codegen_runtime::fake::FakeError),
    /// An API call failed.
    #[error("{action}: {source}")]
    Api {
        /// What the demo was doing.
        action: &'static str,
        /// The error.
        #[source]
        source: kube::Error,
    },
    /// A step did not converge in time.
    #[error("timed out after {0:?} waiting for: {1}")]
    Timeout(Duration, String),
}

fn api(action: &'static str) -> impl FnOnce(kube::Error) -> EmbeddedError {
    move |source| EmbeddedError::Api { action, source }
}

/// The current context of every kubeconfig [`Embedded::start`] writes; a file holding it may be
/// overwritten by a later run.
pub const KUBECONFIG_MARKER: &str = "current-context: kube-codegen-fake";

/// The Deployment the demo annotates (and the Eru's name).
pub const DEMO_DEPLOYMENT: &str = "web";

/// The demo's schedule: every second.
pub const DEMO_SCHEDULE: &str = "* * * * * *";

/// How long each demo step may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// An in-memory API server serving on loopback, with the Eru CRD installed and a kubeconfig
/// written for kubectl.
pub struct Embedded {
    served: ServedApiServer,
    kubeconfig: PathBuf,
}

impl Embedded {
    /// Starts the server on `127.0.0.1:<port>` (0 picks a free one), installs the CRD through
    /// the API (as `kubectl apply -f deploy/crds/mtsre.meitu.com_erus_crd.yaml` would) and
    /// writes a kubeconfig to `kubeconfig`.
    pub async fn start(port: u16, kubeconfig: &Path) -> Result<Embedded, EmbeddedError> {
        // The review kinds too, so that secure metrics (--metrics-secure, the default once
        // --metrics-bind-address is given) can authenticate and authorize scrapes; the
        // garbage collector and the namespace controller, as kube-controller-manager runs them
        // beside a cluster's API server, so that owned objects go with their owner.
        let server = FakeApiServer::builder()
            .resources(REVIEW_RESOURCES)
            .with_controllers([Controller::GarbageCollector, Controller::Namespace])
            .build()?;
        let served = server
            .serve(SocketAddr::from(([127, 0, 0, 1], port)))
            .await?;
        served.write_kubeconfig(kubeconfig)?;
        let client = served.client().await?;
        let crds: Api<CustomResourceDefinition> = Api::all(client);
        match crds.create(&PostParams::default(), &Eru::crd()).await {
            Ok(_) => {}
            Err(e) if is_already_exists(&e) => {}
            Err(e) => return Err(api("installing the Eru CRD")(e)),
        }
        tracing::info!(
            server = %served.url(),
            kubeconfig = %kubeconfig.display(),
            "embedded API server running with the Eru CRD installed"
        );
        Ok(Embedded {
            served,
            kubeconfig: kubeconfig.to_path_buf(),
        })
    }

    /// A client for the embedded server.
    pub async fn client(&self) -> Result<kube::Client, EmbeddedError> {
        Ok(self.served.client().await?)
    }

    /// How to use kubectl against the server, for the user.
    pub fn usage(&self) -> String {
        format!(
            "In-memory Kubernetes API server at {url}. Use it with kubectl:\n\n    export KUBECONFIG={kc}\n    kubectl apply -f example-eru/example/deployment.yaml\n    kubectl get erus\n    kubectl describe eru web\n",
            url = self.served.url(),
            kc = self.kubeconfig.display(),
        )
    }

    /// Stops the server.
    pub async fn shutdown(self) {
        self.served.shutdown().await;
    }
}

async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> Result<T, EmbeddedError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, EmbeddedError>>,
{
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
    loop {
        if let Some(v) = check().await? {
            return Ok(v);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(EmbeddedError::Timeout(STEP_TIMEOUT, what.to_string()));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The Deployment the demo creates: one replica of a web server, annotated for ERU with a
/// per-second schedule.
pub fn demo_deployment(namespace: &str) -> Deployment {
    let labels = json!({"app": DEMO_DEPLOYMENT});
    serde_json::from_value(json!({
        "metadata": {
            "name": DEMO_DEPLOYMENT,
            "namespace": namespace,
            "annotations": {ERU_ANNOTATION: "true", SCHEDULE_ANNOTATION: DEMO_SCHEDULE},
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }))
    .unwrap_or_default()
}

/// The seed's story against a running operator: create an annotated Deployment in
/// `namespace`, see its Eru appear and two rollouts happen, remove the annotation and see the
/// Eru go — logging each step.
pub async fn run_demo(client: &kube::Client, namespace: &str) -> Result<(), EmbeddedError> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let erus = Clientset::new(client.clone()).mtsre_v1().erus(namespace);
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => tracing::info!("demo: created namespace {namespace}"),
        Err(e) if is_already_exists(&e) => {}
        Err(e) => return Err(api("creating the namespace")(e)),
    }

    tracing::info!(
        step = 1,
        "demo: creating Deployment {namespace}/{DEMO_DEPLOYMENT} annotated {ERU_ANNOTATION}=true, {SCHEDULE_ANNOTATION}={DEMO_SCHEDULE:?}"
    );
    let created = deployments
        .create(&PostParams::default(), &demo_deployment(namespace))
        .await
        .map_err(api("creating the Deployment"))?;
    let uid = created.metadata.uid.clone().unwrap_or_default();

    let eru = wait_for("the Eru to appear", || {
        let erus = erus.clone();
        async move {
            match erus.get(DEMO_DEPLOYMENT, &GetParams::default()).await {
                Ok(e) => Ok(Some(e)),
                Err(e) if is_not_found(&e) => Ok(None),
                Err(e) => Err(api("reading the Eru")(e)),
            }
        }
    })
    .await?;
    let owner = controlling_deployment(&eru);
    tracing::info!(
        step = 2,
        eru = %format!("{namespace}/{DEMO_DEPLOYMENT}"),
        schedule = %eru.spec.schedule,
        controlled_by = ?owner.map(|o| format!("{}/{} uid={}", o.kind, o.name, o.uid)),
        same_uid = owner.is_some_and(|o| o.uid == uid),
        "demo: the Eru appeared, controlled by the Deployment"
    );

    for want in 1..=2i64 {
        let eru = wait_for(&format!("rollout {want}"), || {
            let erus = erus.clone();
            async move {
                let e = erus
                    .get(DEMO_DEPLOYMENT, &GetParams::default())
                    .await
                    .map_err(api("reading the Eru"))?;
                let rollouts = e.status.as_ref().map_or(0, |s| s.rollouts);
                Ok((rollouts >= want).then_some(e))
            }
        })
        .await?;
        let d = deployments
            .get(DEMO_DEPLOYMENT)
            .await
            .map_err(api("reading the Deployment"))?;
        let status = eru.status.unwrap_or_default();
        tracing::info!(
            step = 3,
            rollouts = status.rollouts,
            last_schedule_time = ?status.last_schedule_time.map(|t| t.0.to_string()),
            next_schedule_time = ?status.next_schedule_time.map(|t| t.0.to_string()),
            restarted_at = ?restarted_at(&d).map(|t| t.to_string()),
            deployment_generation = ?d.metadata.generation,
            "demo: the Deployment was rolled"
        );
    }

    tracing::info!(step = 4, "demo: removing the {ERU_ANNOTATION} annotation");
    deployments
        .patch(
            DEMO_DEPLOYMENT,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {ERU_ANNOTATION: null}}})),
        )
        .await
        .map_err(api("removing the annotation"))?;
    wait_for("the Eru to be deleted", || {
        let erus = erus.clone();
        async move {
            match erus.get(DEMO_DEPLOYMENT, &GetParams::default()).await {
                Err(e) if is_not_found(&e) => Ok(Some(())),
                Ok(_) => Ok(None),
                Err(e) => Err(api("reading the Eru")(e)),
            }
        }
    })
    .await?;
    let d = deployments
        .get(DEMO_DEPLOYMENT)
        .await
        .map_err(api("reading the Deployment"))?;
    tracing::info!(
        step = 4,
        deployment_generation = ?d.metadata.generation,
        restarted_at = ?restarted_at(&d).map(|t| t.to_string()),
        "demo: the Eru is gone; the Deployment stays as it was last rolled. Story complete"
    );
    Ok(())
}
