//! The crddemo controller written with the Builder: the same sync handler, the same behaviour
//! (tests/controller.rs runs every scenario against both), in thirty lines.
//!
//! ```text
//! cargo run -p example-crddemo --example builder     # against $KUBECONFIG, with the CRD applied
//! ```
use std::sync::Arc;

use example_crddemo::controller::{CONTROLLER_NAME, Context, reconcile};
use example_crddemo::pkg::apis::crddemo::v1::Mydemo;
use example_crddemo::pkg::client::{
    clientset::versioned::Clientset, listers::crddemo::v1::MydemoLister,
};
use k8s_openapi::api::{core::v1::Service, discovery::v1::EndpointSlice};
use kube::runtime::events::{Recorder, Reporter};
use kube_codegen_kubernetes::InformerGroups;
use kube_controller_runtime::predicate::ResourceVersionChanged;
use kube_controller_runtime::{Action, BuilderError, Controller, Manager, Request};

/// The Mydemo controller: reconcile Mydemos, and the Mydemo that owns a changed Service or
/// EndpointSlice; skip resyncs of unchanged objects.
pub fn controller(mgr: &Manager, workers: usize) -> Result<Controller, BuilderError> {
    let reporter = Reporter {
        controller: CONTROLLER_NAME.into(),
        instance: Some(mgr.identity().into()),
    };
    let ctx = Arc::new(Context {
        clientset: Clientset::new(mgr.client()),
        client: mgr.client(),
        mydemos: MydemoLister::new(mgr.informer::<Mydemo>().store()),
        // The manager's one factory: the same caches `owns` below watches.
        services: mgr.factory().core().v1().services().lister(),
        slices: mgr.factory().discovery().v1().endpoint_slices().lister(),
        recorder: Recorder::new(mgr.client(), reporter),
    });
    Controller::builder(mgr)
        .for_::<Mydemo>()
        .owns::<Service>()
        .owns::<EndpointSlice>()
        .with_event_filter(ResourceVersionChanged)
        .max_concurrent_reconciles(workers)
        .build(move |req: Request, _: kube_controller_runtime::Context| {
            let ctx = ctx.clone();
            async move {
                reconcile::sync(&ctx, &req.to_string())
                    .await
                    .map(|_| Action::done())
            }
        })
}

#[allow(dead_code)] // the tests and the bench include this file for `controller`
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter("info,kube_client=warn,kube_runtime=warn")
        .with_ansi(ansi)
        .init();
    let mgr = Manager::builder(kube::Client::try_default().await?)
        .leader_election_id("crddemo-builder") // a Lease in the kubeconfig's namespace
        .health_probe_bind_address(":8081") // /healthz, /readyz
        .metrics_bind_address(":8080") // /metrics
        .build()?;
    mgr.add(controller(&mgr, 2)?)?;
    mgr.start(kube_controller_runtime::shutdown_signal())
        .await?; // SIGTERM/SIGINT: drain, release
    Ok(())
}
