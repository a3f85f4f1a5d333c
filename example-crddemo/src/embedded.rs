//! `--embedded` and `--demo`: the controller against kube-codegen's in-memory API server, and
//! the seed's walkthrough (create `example-mydemo` at 127.0.0.1:8080, change the port to 9090,
//! delete it) driven by the program itself.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, GetParams, Patch, PatchParams, PostParams};
use kube::{Api, CustomResourceExt};
use kube_codegen_runtime::api_status::{is_already_exists, is_not_found};
use kube_codegen_runtime::fake::{Controller, FakeApiServer, ServedApiServer};
use kube_controller_runtime::filters::REVIEW_RESOURCES;

use crate::controller::status::ready_condition;
use crate::pkg::apis::crddemo::v1::{Mydemo, MydemoSpec};
use crate::pkg::client::clientset::versioned::Clientset;
use crate::pkg::client::listers::crddemo::v1::MydemoLister;
use kube_codegen_runtime::workqueue::RateLimitingQueue;

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

/// An in-memory API server serving on loopback, with the Mydemo CRD installed and a kubeconfig
/// written for kubectl.
pub struct Embedded {
    served: ServedApiServer,
    kubeconfig: PathBuf,
}

impl Embedded {
    /// Starts the server on `127.0.0.1:<port>` (0 picks a free one), installs the CRD through
    /// the API (as `kubectl apply -f crd/mydemo.yaml` would) and writes a kubeconfig to
    /// `kubeconfig`.
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
        match crds.create(&PostParams::default(), &Mydemo::crd()).await {
            Ok(_) => {}
            Err(e) if is_already_exists(&e) => {}
            Err(e) => return Err(api("installing the Mydemo CRD")(e)),
        }
        tracing::info!(
            server = %served.url(),
            kubeconfig = %kubeconfig.display(),
            "embedded API server running with the Mydemo CRD installed"
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
            "In-memory Kubernetes API server at {url}. Use it with kubectl:\n\n    export KUBECONFIG={kc}\n    kubectl get mydemos\n    kubectl apply -f example-crddemo/example/example-mydemo.yaml\n    kubectl get services,endpointslices\n    kubectl edit mydemo example-mydemo\n",
            url = self.served.url(),
            kc = self.kubeconfig.display(),
        )
    }

    /// Stops the server.
    pub async fn shutdown(self) {
        self.served.shutdown().await;
    }
}

/// The current context of every kubeconfig [`Embedded::start`] writes; a file holding it may be
/// overwritten by a later run.
pub const KUBECONFIG_MARKER: &str = "current-context: kube-codegen-fake";

/// The Mydemo the walkthrough creates, changes and deletes (the seed's name).
pub const DEMO_NAME: &str = "example-mydemo";

/// How long each demo step may take to converge.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Waits until the controller has caught up with the API: `namespace/name` gone from its cache
/// and its queue idle (nothing waiting, nothing in hand) for a moment. The demo's last step
/// calls it so that the controller logs the deletion before `--demo` stops it.
pub async fn wait_controller_idle(
    lister: &MydemoLister,
    queue: &RateLimitingQueue<String>,
    namespace: &str,
    name: &str,
) -> Result<(), EmbeddedError> {
    // Handlers run just after the cache changes: an idle queue must stay idle a few polls.
    let mut idle_polls = 0;
    wait_for("the controller to handle the deletion", || {
        let gone = lister.namespaced(namespace).get(name).is_err();
        let idle = queue.is_empty() && queue.processing() == 0 && queue.waiting() == 0;
        idle_polls = if gone && idle { idle_polls + 1 } else { 0 };
        std::future::ready(Ok((idle_polls >= 10).then_some(())))
    })
    .await
}

/// Waits until the Mydemo's Ready condition reflects its current generation; returns it.
async fn wait_ready(clientset: &Clientset, ns: &str, name: &str) -> Result<Mydemo, EmbeddedError> {
    let client = clientset.crddemo_v1().mydemos(ns);
    wait_for(&format!("Mydemo {ns}/{name} to be Ready"), || {
        let client = client.clone();
        async move {
            let m = client
                .get(name, &GetParams::default())
                .await
                .map_err(api("reading the Mydemo"))?;
            let observed =
                m.status.as_ref().and_then(|s| s.observed_generation) == m.metadata.generation;
            let ready = ready_condition(&m).is_some_and(|c| c.status == "True");
            Ok((observed && ready).then_some(m))
        }
    })
    .await
}

/// The seed's walkthrough against a running controller: create `example-mydemo`
/// (127.0.0.1:8080), change its port to 9090, delete it — logging what the controller made of
/// each step.
pub async fn run_demo(clientset: &Clientset, namespace: &str) -> Result<(), EmbeddedError> {
    let name = DEMO_NAME;
    let demos = clientset.crddemo_v1().mydemos(namespace);
    let client = clientset.client().clone();
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), namespace);

    let namespaces: Api<Namespace> = Api::all(client);
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
        "demo: creating Mydemo {namespace}/{name} with ip 127.0.0.1, port 8080"
    );
    let mydemo = Mydemo {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        spec: MydemoSpec {
            ip: "127.0.0.1".into(),
            port: 8080,
        },
        status: None,
    };
    demos
        .create(&mydemo, &PostParams::default())
        .await
        .map_err(api("creating the Mydemo"))?;
    let ready = wait_ready(clientset, namespace, name).await?;
    let svc = services
        .get(name)
        .await
        .map_err(api("reading the Service"))?;
    tracing::info!(
        step = 1,
        service = %name,
        cluster_ip = ?svc.spec.and_then(|s| s.cluster_ip),
        condition = ?ready_condition(&ready).map(|c| c.message.clone()),
        "demo: Mydemo is Ready"
    );

    tracing::info!(step = 2, "demo: changing the port to 9090");
    demos
        .patch(
            name,
            &Patch::Merge(serde_json::json!({"spec": {"port": 9090}})),
            &PatchParams::default(),
        )
        .await
        .map_err(api("patching the port"))?;
    let ready = wait_ready(clientset, namespace, name).await?;
    let slice = wait_for("the EndpointSlice to expose port 9090", || {
        let slices = slices.clone();
        async move {
            let s = slices
                .get(name)
                .await
                .map_err(api("reading the EndpointSlice"))?;
            let port = s.ports.iter().flatten().find_map(|p| p.port);
            Ok((port == Some(9090)).then_some(s))
        }
    })
    .await?;
    tracing::info!(
        step = 2,
        generation = ?ready.metadata.generation,
        observed_generation = ?ready.status.as_ref().and_then(|s| s.observed_generation),
        endpoints = ?slice.endpoints.iter().flatten().flat_map(|e| e.addresses.clone()).collect::<Vec<_>>(),
        "demo: EndpointSlice now exposes 127.0.0.1:9090"
    );

    tracing::info!(step = 3, "demo: deleting the Mydemo");
    demos
        .delete(name, &DeleteParams::default())
        .await
        .map_err(api("deleting the Mydemo"))?;
    wait_for("the Mydemo to be gone", || {
        let demos = demos.clone();
        async move {
            match demos.get(name, &GetParams::default()).await {
                Err(e) if is_not_found(&e) => Ok(Some(())),
                Ok(_) => Ok(None),
                Err(e) => Err(api("reading the Mydemo")(e)),
            }
        }
    })
    .await?;
    tracing::info!(step = 3, "demo: Mydemo deleted");
    Ok(())
}
