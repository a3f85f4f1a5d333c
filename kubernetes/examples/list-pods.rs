//! The seed article's client-go example in Rust: the clientset from the kubeconfig, then
//! `clientset.CoreV1().Pods("").List(…)` — every pod of every namespace.
//!
//! ```sh
//! cargo run -p kube-codegen-kubernetes --features core --example list-pods
//! ```

use kube::api::ListParams;
use kube_codegen_kubernetes::Clientset;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // $KUBECONFIG or ~/.kube/config, else the pod's service account (clientcmd's rules).
    let clientset = Clientset::try_default().await?;
    let pods = clientset
        .core_v1()
        .pods("")
        .list(&ListParams::default())
        .await?;
    println!("There are {} pods in the cluster", pods.items.len());
    for pod in &pods {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        println!(
            "NAMESPACE: {} \t NAME: {} \t STATUS: {}",
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.name.as_deref().unwrap_or_default(),
            phase.unwrap_or("Unknown"),
        );
    }
    Ok(())
}
