//! Webhooks served by this process and called by an API server on loopback — envtest's
//! `WebhookInstallOptions`, for tests and `--embedded` runs.
//!
//! In a cluster, a webhook configuration names a Service (`clientConfig.service`) and
//! cert-manager injects the CA that signed the server's certificate (`caBundle`). Run locally,
//! there is no Service and no cert-manager, so [`LocalWebhooks`] does what envtest does:
//!
//! 1. [`LocalWebhooks::generate`] makes a CA and a serving certificate for `localhost`,
//!    `127.0.0.1` and `::1`, and writes `tls.crt` and `tls.key` into the manager's webhook
//!    certificate directory;
//! 2. once the manager's webhook server listens, [`LocalWebhooks::install`] reads the project's
//!    manifests — `ValidatingWebhookConfiguration`s, `MutatingWebhookConfiguration`s and
//!    `CustomResourceDefinition`s with `spec.conversion.strategy: Webhook` — rewrites every
//!    `clientConfig` to `url: https://127.0.0.1:<port><path>` with the CA as `caBundle`, and
//!    applies them (server-side apply, field manager [`FIELD_MANAGER`]).
//!
//! ```no_run
//! use kube_controller_runtime::Manager;
//! use kube_controller_runtime::webhook::local::LocalWebhooks;
//!
//! # async fn demo(client: kube::Client, cert_dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
//! let local = LocalWebhooks::generate(cert_dir)?;
//! let mgr = Manager::builder(client.clone())
//!     .webhook_host("127.0.0.1")
//!     .webhook_port(0)
//!     .webhook_cert_dir(cert_dir)
//!     .build()?;
//! // … register webhooks, start the manager; then:
//! let manifests = std::fs::read_to_string("deploy/webhook.yaml")?;
//! let installed = local.install_when_serving(&mgr, &client, &manifests).await?;
//! # let _ = installed; Ok(()) }
//! ```

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;

use crate::{Manager, ManagerBuilder};

/// The field manager of what [`LocalWebhooks::install`] applies.
pub const FIELD_MANAGER: &str = "kube-controller-runtime-local-webhooks";

/// Why local webhooks could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LocalWebhookError {
    /// The certificate could not be made.
    #[error("cannot make the local webhook certificate: {0}")]
    Certificate(String),
    /// A certificate file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The manifests are not YAML, or a document is not what this module installs.
    #[error("webhook manifests: {0}")]
    Manifest(String),
    /// The manager has no webhook server, or it stopped before it listened.
    #[error("the webhook server: {0}")]
    Server(String),
    /// The API server refused a document; retrying may help when it is not ready yet.
    #[error("cannot apply {kind} {name}: {source}")]
    Apply {
        /// The document's kind.
        kind: String,
        /// Its name.
        name: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
}

/// A CA and a serving certificate made by this process, for webhooks an API server on
/// loopback calls; see the [module docs](self).
#[derive(Clone)]
pub struct LocalWebhooks {
    ca_pem: String,
}

impl std::fmt::Debug for LocalWebhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalWebhooks").finish_non_exhaustive()
    }
}

impl LocalWebhooks {
    /// Makes a CA and a serving certificate for `localhost`, `127.0.0.1` and `::1`, and writes
    /// `tls.crt` (the chain) and `tls.key` into `cert_dir` (created if missing; the key file
    /// readable by its owner only).
    pub fn generate(cert_dir: &Path) -> Result<Self, LocalWebhookError> {
        let pki = crate::tls::local_pki("kube-controller-runtime-webhook")
            .map_err(|e| LocalWebhookError::Certificate(e.to_string()))?;
        std::fs::create_dir_all(cert_dir).map_err(|source| LocalWebhookError::Write {
            path: cert_dir.to_path_buf(),
            source,
        })?;
        write_private(&cert_dir.join("tls.key"), &pki.key_pem)?;
        let crt = cert_dir.join("tls.crt");
        std::fs::write(&crt, &pki.chain_pem)
            .map_err(|source| LocalWebhookError::Write { path: crt, source })?;
        Ok(LocalWebhooks { ca_pem: pki.ca_pem })
    }

    /// The CA's certificate (PEM): what `caBundle` holds.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Points every `clientConfig` of `doc` at the webhook server at `addr`, with this CA:
    /// the webhooks of a `Validating`/`MutatingWebhookConfiguration` and the conversion webhook
    /// of a `CustomResourceDefinition`. A service reference's `path` is kept (default `/`); an
    /// unspecified address (`0.0.0.0`, `::`) becomes loopback. Returns how many were rewritten.
    pub fn rewrite(&self, doc: &mut Value, addr: SocketAddr) -> Result<usize, LocalWebhookError> {
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
        let mut configs: Vec<&mut Value> = Vec::new();
        match kind {
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
                if let Some(Value::Array(hooks)) = doc.get_mut("webhooks") {
                    for hook in hooks {
                        if let Some(c) = hook.get_mut("clientConfig") {
                            configs.push(c);
                        }
                    }
                }
            }
            "CustomResourceDefinition" => {
                if let Some(c) = doc.pointer_mut("/spec/conversion/webhook/clientConfig") {
                    configs.push(c);
                }
            }
            other => {
                return Err(LocalWebhookError::Manifest(format!(
                    "a {other:?} document: only webhook configurations and CustomResourceDefinitions are installed"
                )));
            }
        }
        let base = base_url(addr);
        let bundle = base64_std(self.ca_pem.as_bytes());
        for config in &mut configs {
            let path = config
                .pointer("/service/path")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| {
                    config
                        .get("url")
                        .and_then(Value::as_str)
                        .and_then(url_path)
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "/".into());
            **config = serde_json::json!({ "url": format!("{base}{path}"), "caBundle": bundle });
        }
        Ok(configs.len())
    }

    /// Rewrites ([`rewrite`](Self::rewrite)) and applies every document of `manifests` (YAML,
    /// several documents) against `client`, pointing them at `addr`; returns `kind/name` of
    /// each document applied. Documents of other kinds (the Service, cert-manager's
    /// Certificate of a cluster deployment) are skipped, as envtest skips them, and so is a CRD
    /// without a conversion webhook: its installation is the caller's.
    pub async fn install(
        &self,
        client: &kube::Client,
        manifests: &str,
        addr: SocketAddr,
    ) -> Result<Vec<String>, LocalWebhookError> {
        self.install_documents(client, parse_manifests(manifests)?, addr)
            .await
    }

    /// [`install`](Self::install) for documents already parsed (e.g. a CRD built in code,
    /// serialised with `serde_json::to_value`).
    pub async fn install_documents(
        &self,
        client: &kube::Client,
        docs: Vec<Value>,
        addr: SocketAddr,
    ) -> Result<Vec<String>, LocalWebhookError> {
        let mut installed = Vec::new();
        for (i, mut doc) in docs.into_iter().enumerate() {
            let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
            if !matches!(
                kind,
                "ValidatingWebhookConfiguration"
                    | "MutatingWebhookConfiguration"
                    | "CustomResourceDefinition"
            ) {
                // The Service, the Certificate … of a cluster's deployment: envtest skips them.
                continue;
            }
            let rewritten = self.rewrite(&mut doc, addr)?;
            if rewritten == 0 && doc["kind"] == "CustomResourceDefinition" {
                continue;
            }
            let obj: DynamicObject = serde_json::from_value(doc)
                .map_err(|e| LocalWebhookError::Manifest(format!("document {}: {e}", i + 1)))?;
            let types = obj.types.clone().unwrap_or_default();
            let name = obj.metadata.name.clone().unwrap_or_default();
            let gvk = GroupVersionKind::try_from(&types)
                .map_err(|e| LocalWebhookError::Manifest(format!("document {}: {e}", i + 1)))?;
            let plural = match types.kind.as_str() {
                "ValidatingWebhookConfiguration" => "validatingwebhookconfigurations",
                "MutatingWebhookConfiguration" => "mutatingwebhookconfigurations",
                _ => "customresourcedefinitions",
            };
            let api: Api<DynamicObject> = Api::all_with(
                client.clone(),
                &ApiResource::from_gvk_with_plural(&gvk, plural),
            );
            api.patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&obj),
            )
            .await
            .map_err(|source| LocalWebhookError::Apply {
                kind: types.kind.clone(),
                name: name.clone(),
                source,
            })?;
            installed.push(format!("{}/{name}", types.kind));
        }
        Ok(installed)
    }

    /// Waits until `mgr`'s webhook server listens, then [`install`](Self::install)s
    /// `manifests` pointing at it. Fails if the manager has no webhook server, or if it has not
    /// listened within a minute.
    pub async fn install_when_serving(
        &self,
        mgr: &Manager,
        client: &kube::Client,
        manifests: &str,
    ) -> Result<Vec<String>, LocalWebhookError> {
        let addr = serving_addr(mgr).await?;
        self.install(client, manifests, addr).await
    }
}

/// The address `mgr`'s webhook server listens on, once it does (at most a minute).
async fn serving_addr(mgr: &Manager) -> Result<SocketAddr, LocalWebhookError> {
    let server = mgr
        .webhook_server()
        .map_err(|e| LocalWebhookError::Server(e.to_string()))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let addr = loop {
        if let Some(addr) = server.local_addr().filter(|_| server.is_serving()) {
            break addr;
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(LocalWebhookError::Server(
                "not listening after 60s (did the manager start?)".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    Ok(addr)
}

/// The documents of a YAML stream.
pub(crate) fn parse_manifests(manifests: &str) -> Result<Vec<Value>, LocalWebhookError> {
    serde_saphyr::from_str_multiple(manifests)
        .map_err(|e| LocalWebhookError::Manifest(format!("not YAML: {e}")))
}

/// The webhooks of an `--embedded` run: [`LocalWebhooks`] with the certificate in a directory of
/// their own (in the temporary directory, named after the operator and the process, removed when
/// this is dropped), served on a free loopback port and installed in the in-process API server
/// once the manager's webhook server listens.
///
/// ```no_run
/// use kube_controller_runtime::Manager;
/// use kube_controller_runtime::webhook::local::EmbeddedWebhooks;
///
/// # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let webhooks = EmbeddedWebhooks::generate("my-operator")?;
/// let mgr = webhooks.configure(Manager::builder(client.clone())).build()?;
/// // … register the webhooks with `Webhook::builder(&mgr)`, then, beside `mgr.start(…)`:
/// let manifests = std::fs::read_to_string("deploy/webhooks.yaml")?;
/// webhooks.spawn_install(&mgr, &client, &manifests);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct EmbeddedWebhooks {
    local: LocalWebhooks,
    cert_dir: PathBuf,
}

impl EmbeddedWebhooks {
    /// Makes the CA and the serving certificate ([`LocalWebhooks::generate`]) in
    /// `<temporary directory>/<name>-embedded-<pid>-webhook-certs`.
    pub fn generate(name: &str) -> Result<Self, LocalWebhookError> {
        let cert_dir = std::env::temp_dir().join(format!(
            "{name}-embedded-{}-webhook-certs",
            std::process::id()
        ));
        let local = LocalWebhooks::generate(&cert_dir)?;
        Ok(EmbeddedWebhooks { local, cert_dir })
    }

    /// The certificate's directory (the webhook server's `--webhook-cert-dir`).
    pub fn cert_dir(&self) -> &Path {
        &self.cert_dir
    }

    /// The CA and certificate.
    pub fn local(&self) -> &LocalWebhooks {
        &self.local
    }

    /// `builder`'s webhook server on `127.0.0.1`, a free port, with this certificate — whatever
    /// `--webhook-port` and `--webhook-cert-dir` said.
    pub fn configure(&self, builder: ManagerBuilder) -> ManagerBuilder {
        builder
            .webhook_host("127.0.0.1")
            .webhook_port(0)
            .webhook_cert_dir(self.cert_dir.clone())
    }

    /// Once `mgr`'s webhook server listens, installs `manifests` (YAML) pointing at it, in a
    /// task of its own whose outcome is logged; see [`LocalWebhooks::install`].
    pub fn spawn_install(
        &self,
        mgr: &Manager,
        client: &kube::Client,
        manifests: &str,
    ) -> tokio::task::JoinHandle<Result<Vec<String>, LocalWebhookError>> {
        let docs = parse_manifests(manifests);
        self.spawn_install_documents(mgr, client, docs)
    }

    /// [`spawn_install`](Self::spawn_install) for documents already parsed.
    pub(crate) fn spawn_install_documents(
        &self,
        mgr: &Manager,
        client: &kube::Client,
        docs: Result<Vec<Value>, LocalWebhookError>,
    ) -> tokio::task::JoinHandle<Result<Vec<String>, LocalWebhookError>> {
        let (local, mgr, client) = (self.local.clone(), mgr.clone(), client.clone());
        tokio::spawn(async move {
            let installed = match docs {
                Ok(docs) => match serving_addr(&mgr).await {
                    Ok(addr) => local.install_documents(&client, docs, addr).await,
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            match &installed {
                Ok(installed) => tracing::info!(?installed, "webhooks installed for this process"),
                Err(e) => tracing::error!("cannot install the webhooks for this process: {e}"),
            }
            installed
        })
    }
}

impl Drop for EmbeddedWebhooks {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.cert_dir);
    }
}

/// `https://<ip>:<port>`, loopback for an unspecified address.
fn base_url(addr: SocketAddr) -> String {
    let ip = match addr.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        ip => ip,
    };
    format!("https://{}", SocketAddr::new(ip, addr.port()))
}

/// The path of an `https://host[:port]/path` URL.
fn url_path(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map(|i| &rest[i..])
}

fn base64_std(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> Result<(), LocalWebhookError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let err = |source| LocalWebhookError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(err)?;
    f.write_all(text.as_bytes()).map_err(err)
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> Result<(), LocalWebhookError> {
    std::fs::write(path, text).map_err(|source| LocalWebhookError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn local() -> LocalWebhooks {
        LocalWebhooks {
            ca_pem: "CA".into(),
        }
    }

    #[test]
    fn service_references_become_loopback_urls_with_the_ca() {
        let mut doc = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "v"},
            "webhooks": [
                {"name": "a.x.io", "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/validate-x"}}},
                {"name": "b.x.io", "clientConfig": {"url": "https://elsewhere:443/other"}},
                {"name": "c.x.io", "clientConfig": {"service": {"name": "s", "namespace": "n"}}}
            ]
        });
        let addr: SocketAddr = "0.0.0.0:9443".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            local()
                .rewrite(&mut doc, addr)
                .unwrap_or_else(|e| panic!("{e}")),
            3
        );
        let urls: Vec<&str> = (0..3)
            .map(|i| {
                doc["webhooks"][i]["clientConfig"]["url"]
                    .as_str()
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(
            urls,
            [
                "https://127.0.0.1:9443/validate-x",
                "https://127.0.0.1:9443/other",
                "https://127.0.0.1:9443/"
            ]
        );
        assert_eq!(doc["webhooks"][0]["clientConfig"]["caBundle"], "Q0E=");
        assert!(doc["webhooks"][0]["clientConfig"].get("service").is_none());
    }

    #[test]
    fn a_crd_conversion_webhook_is_rewritten_and_other_kinds_are_refused() {
        let mut crd = json!({
            "kind": "CustomResourceDefinition",
            "spec": {"conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}}}}}
        });
        let addr: SocketAddr = "[::1]:1".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            local()
                .rewrite(&mut crd, addr)
                .unwrap_or_else(|e| panic!("{e}")),
            1
        );
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"],
            "https://[::1]:1/convert"
        );
        let err = local()
            .rewrite(&mut json!({"kind": "Service"}), addr)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("\"Service\" document"), "{err}");
    }

    #[test]
    fn generate_writes_a_chain_and_a_private_key() {
        let dir = std::env::temp_dir().join(format!("local-webhooks-{}", uuid::Uuid::new_v4()));
        let local = LocalWebhooks::generate(&dir).unwrap_or_else(|e| panic!("{e}"));
        let chain = std::fs::read_to_string(dir.join("tls.crt")).unwrap_or_default();
        assert_eq!(chain.matches("BEGIN CERTIFICATE").count(), 2);
        assert!(chain.ends_with(local.ca_pem()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.join("tls.key"))
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or_default();
            assert_eq!(mode, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
