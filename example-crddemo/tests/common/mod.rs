//! What the in-memory-server tests of crddemo's controller share.

use std::time::Duration;

use example_crddemo::controller::{Controller, Options, informer_options};
use kube_controller_runtime::Manager;

/// A Manager on `client` and crddemo's controller with one worker (so its log's order is the
/// order of its reconciles), named `instance`; the controller is not added yet.
pub fn one_worker_controller(client: kube::Client, instance: &str) -> (Manager, Controller) {
    let opts = Options {
        workers: 1,
        namespace: None,
        resync: None,
        instance: instance.into(),
        reconcile_delay: Duration::ZERO,
    };
    let mgr = Manager::builder(client)
        .informer_options(informer_options(&opts))
        .build()
        .unwrap();
    let controller = Controller::with_manager(&mgr, opts).unwrap();
    (mgr, controller)
}
