//! `kube_controller_runtime::webhook` against a real kube-apiserver v1.37.1, the envtest way:
//! the test makes a CA and a serving certificate for 127.0.0.1, runs a manager whose webhook
//! server listens on loopback, and registers a Validating- and a MutatingWebhookConfiguration
//! whose `clientConfig.url` points at it with the CA as `caBundle`. ConfigMaps created in the
//! test's namespace are then defaulted (the JSON patch applied by kube-apiserver), allowed or
//! denied with the validator's message and causes, and dry runs reach both webhooks. A CRD
//! with two versions and `conversion.strategy: Webhook` is converted through the test's
//! `/convert` on create, get, list and update of the version that is not stored. The manifests
//! `kube-codegen add webhook` generates are accepted by kube-apiserver as written.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use kube::core::TypeMeta;
use kube_controller_runtime::Manager;
use kube_controller_runtime::webhook::admission::{
    Defaulter, Denial, Request, ValidationResult, Validator,
};
use kube_controller_runtime::webhook::conversion::{
    ConversionError, Convertible, Hub, LOST_FIELDS_ANNOTATION, LossPolicy,
};
use kube_controller_runtime::webhook::{Webhook, mutate_path, validate_path};
use serde_json::json;
use tests::apiserver::{RealApiServer, apply_crd, wait_crd_established};
use tests::e2e::{create_namespace, init_tracing, run_id};
use tests::fake_vs_real::loopback_certificates;
use tokio_util::sync::CancellationToken;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// A CA (PEM) and, written into `dir`, a serving certificate it signed for 127.0.0.1.
fn certificates(dir: &std::path::Path) -> String {
    let certs = ok(loopback_certificates("webhook-e2e-ca"));
    ok(std::fs::write(dir.join("tls.crt"), certs.cert));
    ok(std::fs::write(dir.join("tls.key"), certs.key));
    certs.ca
}

struct Rules;

impl Validator<ConfigMap> for Rules {
    async fn validate_create(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
        if cm.data.as_ref().is_some_and(|d| d.contains_key("password")) {
            return Err(Denial::invalid("ConfigMaps hold no passwords")
                .with_cause("data.password", "use a Secret"));
        }
        Ok(vec!["checked by the test webhook".into()])
    }
}

struct Defaults;

impl Defaulter<ConfigMap> for Defaults {
    async fn default(&self, req: &Request, cm: &mut ConfigMap) -> Result<(), Denial> {
        cm.metadata
            .labels
            .get_or_insert_default()
            .entry("team".into())
            .or_insert_with(|| "platform".into());
        if req.dry_run {
            cm.data
                .get_or_insert_default()
                .insert("dry-run".into(), "seen".into());
        }
        Ok(())
    }
}

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

fn rule() -> Vec<RuleWithOperations> {
    vec![RuleWithOperations {
        api_groups: Some(vec![String::new()]),
        api_versions: Some(vec!["v1".into()]),
        operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
        resources: Some(vec!["configmaps".into()]),
        scope: Some("Namespaced".into()),
    }]
}

fn client_config(url: String, ca: &str) -> WebhookClientConfig {
    WebhookClientConfig {
        url: Some(url),
        ca_bundle: Some(ByteString(ca.as_bytes().to_vec())),
        service: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_apiserver_calls_the_typed_webhooks() {
    init_tracing();
    let server = ok(RealApiServer::start().await);
    let client = ok(server.client());
    let ns = format!("webhooks-{}", run_id());
    ok(create_namespace(&client, &ns).await);

    let dir = ok(tempfile::tempdir());
    let ca = certificates(dir.path());
    let mgr = ok(Manager::builder(client.clone())
        .webhook_host("127.0.0.1")
        .webhook_port(0)
        .webhook_cert_dir(dir.path())
        .build());
    ok(Webhook::builder(&mgr)
        .for_::<ConfigMap>()
        .with_defaulter(Defaults)
        .with_validator(Rules)
        .complete());
    let stop = CancellationToken::new();
    let (m, s) = (mgr.clone(), stop.clone());
    let running = tokio::spawn(async move { m.start(s.cancelled_owned()).await });
    let webhook = ok(mgr.webhook_server());
    let mut addr = None;
    for _ in 0..200 {
        addr = webhook.local_addr();
        if addr.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let addr = addr.unwrap_or_else(|| panic!("the webhook server did not start"));

    // Only the test's namespace: kube-apiserver's own ConfigMaps are never sent.
    let selector = LabelSelector {
        match_labels: Some(BTreeMap::from([(
            "kubernetes.io/metadata.name".to_string(),
            ns.clone(),
        )])),
        ..LabelSelector::default()
    };
    let validating = ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(format!("validate-{ns}")),
            ..ObjectMeta::default()
        },
        webhooks: Some(vec![ValidatingWebhook {
            name: "vconfigmap.webhooks.example.com".into(),
            admission_review_versions: vec!["v1".into()],
            client_config: client_config(
                format!("https://{addr}{}", validate_path::<ConfigMap>()),
                &ca,
            ),
            failure_policy: Some("Fail".into()),
            side_effects: "None".into(),
            namespace_selector: Some(selector.clone()),
            rules: Some(rule()),
            timeout_seconds: Some(10),
            ..ValidatingWebhook::default()
        }]),
    };
    let mutating = MutatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(format!("mutate-{ns}")),
            ..ObjectMeta::default()
        },
        webhooks: Some(vec![MutatingWebhook {
            name: "mconfigmap.webhooks.example.com".into(),
            admission_review_versions: vec!["v1".into()],
            client_config: client_config(
                format!("https://{addr}{}", mutate_path::<ConfigMap>()),
                &ca,
            ),
            failure_policy: Some("Fail".into()),
            side_effects: "None".into(),
            namespace_selector: Some(selector),
            rules: Some(rule()),
            timeout_seconds: Some(10),
            ..MutatingWebhook::default()
        }]),
    };
    let pp = PostParams::default();
    ok(Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&pp, &validating)
        .await);
    ok(Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&pp, &mutating)
        .await);

    let cms = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    // kube-apiserver picks registrations up from its informer: wait until both act.
    let mut n = 0;
    let created = loop {
        n += 1;
        let name = format!("probe-{n}");
        let c = ok(cms.create(&pp, &config_map(&name, &[("k", "v")])).await);
        let _ = cms.delete(&name, &DeleteParams::default()).await;
        let denied = cms
            .create(
                &pp,
                &config_map(&format!("{name}-pw"), &[("password", "x")]),
            )
            .await
            .is_err();
        if c.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("team"))
            && denied
        {
            break c;
        }
        assert!(n < 300, "the webhooks never took effect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // Patched by kube-apiserver with the defaulter's JSON patch.
    assert_eq!(
        created.metadata.labels.as_ref().and_then(|l| l.get("team")),
        Some(&"platform".to_string())
    );
    assert_eq!(
        created.data.as_ref().and_then(|d| d.get("k")),
        Some(&"v".to_string())
    );

    // The validator's warnings reach the client as `Warning` headers.
    let body = ok(serde_json::to_vec(&config_map("warned", &[("k", "v")])));
    let req = ok(
        http::Request::post(format!("/api/v1/namespaces/{ns}/configmaps"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(kube::client::Body::from(body)),
    );
    let resp = ok(client.send(req).await);
    assert_eq!(resp.status(), http::StatusCode::CREATED);
    let warnings: Vec<String> = resp
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("checked by the test webhook")),
        "{warnings:?}"
    );

    // Denied with the validator's message, code, reason and causes.
    let err = cms
        .create(&pp, &config_map("secret-ish", &[("password", "x")]))
        .await
        .err()
        .unwrap_or_else(|| panic!("a password must be denied"));
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!(status.code, 422, "{status:?}");
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        "admission webhook \"vconfigmap.webhooks.example.com\" denied the request: ConfigMaps hold no passwords"
    );
    let causes = status.details.map(|d| d.causes).unwrap_or_default();
    assert!(
        causes
            .iter()
            .any(|c| c.field == "data.password" && c.message == "use a Secret"),
        "{causes:?}"
    );

    // A dry run reaches the defaulter (`dryRun: true`) and stores nothing.
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let seen = ok(cms.create(&dry, &config_map("dry", &[("k", "v")])).await);
    assert_eq!(
        seen.data.as_ref().and_then(|d| d.get("dry-run")),
        Some(&"seen".to_string())
    );
    assert!(ok(cms.get_opt("dry").await).is_none());

    // The server answered every one of those, counted per path.
    let metrics = mgr.metrics().encode();
    for path in [validate_path::<ConfigMap>(), mutate_path::<ConfigMap>()] {
        assert!(
            metrics.contains(&format!(
                "controller_runtime_webhook_requests_total{{webhook=\"{path}\",code=\"200\"}}"
            )),
            "{metrics}"
        );
    }
    stop.cancel();
    ok(ok(running.await));
}

// ---------------------------------------------------------------------------------------------
// Conversion: kube-apiserver converts a two-version CRD through the test's `/convert`.

macro_rules! resource {
    ($t:ident, $version:literal) => {
        impl kube::Resource for $t {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;
            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                "Mydemo".into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                "webhooks.example.com".into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                "mydemos".into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// The storage version and hub: `ip`, `port`, and a `weight` v1alpha1 cannot hold.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct MydemoV1 {
    #[serde(flatten)]
    types: TypeMeta,
    metadata: ObjectMeta,
    spec: V1Spec,
}
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct V1Spec {
    ip: String,
    port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    weight: Option<u32>,
}
resource!(MydemoV1, "v1");
impl Hub for MydemoV1 {}

/// `address: "<ip>:<port>"`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct MydemoV1alpha1 {
    #[serde(flatten)]
    types: TypeMeta,
    metadata: ObjectMeta,
    spec: V1alpha1Spec,
}
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct V1alpha1Spec {
    address: String,
}
resource!(MydemoV1alpha1, "v1alpha1");

impl Convertible<MydemoV1> for MydemoV1alpha1 {
    fn convert_to(&self) -> Result<MydemoV1, ConversionError> {
        let (ip, port) = self.spec.address.rsplit_once(':').ok_or_else(|| {
            ConversionError::new(format!("address {:?} is no ip:port", self.spec.address))
        })?;
        let port = port
            .parse()
            .map_err(|e| ConversionError::new(format!("port {port:?}: {e}")))?;
        Ok(MydemoV1 {
            types: TypeMeta::resource::<MydemoV1>(),
            metadata: self.metadata.clone(),
            spec: V1Spec {
                ip: ip.into(),
                port,
                weight: None,
            },
        })
    }

    fn convert_from(hub: &MydemoV1) -> Result<Self, ConversionError> {
        Ok(MydemoV1alpha1 {
            types: TypeMeta::resource::<MydemoV1alpha1>(),
            metadata: hub.metadata.clone(),
            spec: V1alpha1Spec {
                address: format!("{}:{}", hub.spec.ip, hub.spec.port),
            },
        })
    }
}

fn crd(url: String, ca: &str) -> CustomResourceDefinition {
    let version = |name: &str, storage: bool, spec: serde_json::Value| {
        json!({
            "name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": spec}
            }}}
        })
    };
    ok(serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "mydemos.webhooks.example.com"},
        "spec": {
            "group": "webhooks.example.com",
            "scope": "Namespaced",
            "names": {"kind": "Mydemo", "listKind": "MydemoList", "plural": "mydemos", "singular": "mydemo"},
            "versions": [
                version("v1", true, json!({
                    "ip": {"type": "string"}, "port": {"type": "integer"}, "weight": {"type": "integer"}
                })),
                version("v1alpha1", false, json!({"address": {"type": "string"}})),
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": url, "caBundle": base64_std(ca.as_bytes())},
                },
            },
        },
    })))
}

fn base64_std(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_apiserver_converts_through_the_hub_and_keeps_what_a_version_cannot_hold() {
    init_tracing();
    let server = ok(RealApiServer::start().await);
    let client = ok(server.client());
    let ns = format!("conversion-{}", run_id());
    ok(create_namespace(&client, &ns).await);

    let dir = ok(tempfile::tempdir());
    let ca = certificates(dir.path());
    let mgr = ok(Manager::builder(client.clone())
        .webhook_host("127.0.0.1")
        .webhook_port(0)
        .webhook_cert_dir(dir.path())
        .build());
    ok(Webhook::builder(&mgr)
        .for_::<MydemoV1>()
        .with_spoke::<MydemoV1alpha1>()
        .with_loss_policy(LossPolicy::Annotate)
        .complete());
    let stop = CancellationToken::new();
    let (m, s) = (mgr.clone(), stop.clone());
    let running = tokio::spawn(async move { m.start(s.cancelled_owned()).await });
    let webhook = ok(mgr.webhook_server());
    let mut addr = None;
    for _ in 0..200 {
        addr = webhook.local_addr();
        if addr.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let addr = addr.unwrap_or_else(|| panic!("the webhook server did not start"));

    ok(apply_crd(&client, &crd(format!("https://{addr}/convert"), &ca)).await);
    ok(wait_crd_established(&client, "mydemos.webhooks.example.com").await);
    let v1 = Api::<MydemoV1>::namespaced(client.clone(), &ns);
    let v1alpha1 = Api::<MydemoV1alpha1>::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    let meta = |name: &str| ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    };

    // Created through the spoke, stored as the hub, read through both.
    let created = ok(v1alpha1
        .create(
            &pp,
            &MydemoV1alpha1 {
                types: TypeMeta::resource::<MydemoV1alpha1>(),
                metadata: meta("a"),
                spec: V1alpha1Spec {
                    address: "10.0.0.1:80".into(),
                },
            },
        )
        .await);
    assert_eq!(created.spec.address, "10.0.0.1:80");
    let hub = ok(v1.get("a").await);
    assert_eq!((hub.spec.ip.as_str(), hub.spec.port), ("10.0.0.1", 80));
    let listed = ok(v1alpha1.list(&Default::default()).await);
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].spec.address, "10.0.0.1:80");

    // A weight v1alpha1 cannot hold: read through v1alpha1 it is kept in the annotation, and
    // an update through v1alpha1 changes the address and keeps the weight.
    ok(v1
        .create(
            &pp,
            &MydemoV1 {
                types: TypeMeta::resource::<MydemoV1>(),
                metadata: meta("heavy"),
                spec: V1Spec {
                    ip: "10.0.0.2".into(),
                    port: 81,
                    weight: Some(7),
                },
            },
        )
        .await);
    let mut spoke = ok(v1alpha1.get("heavy").await);
    assert!(
        spoke
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(LOST_FIELDS_ANNOTATION)),
        "{spoke:?}"
    );
    spoke.spec.address = "10.0.0.3:82".into();
    ok(v1alpha1.replace("heavy", &pp, &spoke).await);
    let hub = ok(v1.get("heavy").await);
    assert_eq!(
        (hub.spec.ip.as_str(), hub.spec.port, hub.spec.weight),
        ("10.0.0.3", 82, Some(7))
    );
    assert!(
        hub.metadata
            .annotations
            .as_ref()
            .is_none_or(|a| !a.contains_key(LOST_FIELDS_ANNOTATION)),
        "{hub:?}"
    );

    // A conversion that fails fails the request, with the webhook's reason.
    let err = v1alpha1
        .create(
            &pp,
            &MydemoV1alpha1 {
                types: TypeMeta::resource::<MydemoV1alpha1>(),
                metadata: meta("bad"),
                spec: V1alpha1Spec {
                    address: "nowhere".into(),
                },
            },
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("an address without a port must not convert"));
    assert!(
        err.to_string().contains("\"nowhere\" is no ip:port"),
        "{err}"
    );

    stop.cancel();
    ok(ok(running.await));
}

/// What `kube-codegen add webhook` writes is what kube-apiserver v1.37.1 accepts: the
/// Mutating- and ValidatingWebhookConfiguration of `deploy/webhooks.yaml` (from the
/// `+kubebuilder:webhook` markers of the skeleton) and the CRD whose `spec.conversion` the
/// `+kube-codegen:webhook:conversion` marker wrote, each created with `dryRun=All` (validated
/// and admitted, not stored) and coming back as written.
#[tokio::test]
async fn kube_apiserver_accepts_the_generated_webhook_manifests() {
    use kube_codegen::scaffold::{self, ApiOptions, NewOptions, WebhookOptions};

    init_tracing();
    let tmp = ok(tempfile::tempdir());
    let opts = NewOptions {
        name: "widget-operator".into(),
        domain: Some("example.com".into()),
        ..NewOptions::default()
    };
    ok(scaffold::new_project(tmp.path(), &opts));
    let project = tmp.path().join("widget-operator");
    for version in ["v1", "v2"] {
        let api = ApiOptions {
            api_version: format!("things.example.com/{version}"),
            kind: "Widget".into(),
            namespaced: true,
            plural: None,
        };
        ok(scaffold::add_api(&project, &api));
    }
    let webhook = WebhookOptions {
        api_version: "things.example.com/v1".into(),
        kind: "Widget".into(),
        defaulting: true,
        validation: true,
        conversion: true,
    };
    ok(scaffold::add_webhook(&project, &webhook));
    let manifests = ok(std::fs::read_to_string(
        project.join(scaffold::WEBHOOKS_FILE),
    ));
    let docs: Vec<&str> = manifests.split("---\n").skip(1).collect();
    assert_eq!(docs.len(), 2, "{manifests}");
    let mutating: MutatingWebhookConfiguration = ok(serde_saphyr::from_str(docs[0]));
    let validating: ValidatingWebhookConfiguration = ok(serde_saphyr::from_str(docs[1]));
    let crd = ok(kube_codegen_runtime::crd::from_yaml(&ok(
        std::fs::read_to_string(project.join("deploy/crds/things.example.com_widgets_crd.yaml")),
    )));

    let server = ok(RealApiServer::start().await);
    let client = ok(server.client());
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let got = ok(Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&dry_run, &mutating)
        .await);
    let hooks = got.webhooks.unwrap_or_default();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].name, "mwidget-v1.kb.io");
    let service = hooks[0].client_config.service.clone().unwrap_or_default();
    assert_eq!(
        (
            service.name.as_str(),
            service.namespace.as_str(),
            service.path.as_deref()
        ),
        (
            "webhook-service",
            "system",
            Some("/mutate-things-example-com-v1-widget")
        )
    );
    let got = ok(Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&dry_run, &validating)
        .await);
    let hooks = got.webhooks.unwrap_or_default();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].name, "vwidget-v1.kb.io");
    assert_eq!(hooks[0].side_effects, "None");
    assert_eq!(hooks[0].failure_policy.as_deref(), Some("Fail"));
    let got = ok(Api::<CustomResourceDefinition>::all(client)
        .create(&dry_run, &crd)
        .await);
    let conversion = got
        .spec
        .conversion
        .unwrap_or_else(|| panic!("no spec.conversion"));
    assert_eq!(conversion.strategy, "Webhook");
    let webhook = conversion
        .webhook
        .unwrap_or_else(|| panic!("no conversion webhook"));
    assert_eq!(webhook.conversion_review_versions, vec!["v1".to_string()]);
    let service = webhook
        .client_config
        .and_then(|c| c.service)
        .unwrap_or_else(|| panic!("no conversion service"));
    assert_eq!(
        (
            service.name.as_str(),
            service.namespace.as_str(),
            service.path.as_deref()
        ),
        ("webhook-service", "system", Some("/convert"))
    );
}
