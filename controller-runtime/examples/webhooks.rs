//! Webhooks served by a manager, as `docs/guide/webhooks.md` shows them: a validator and a
//! defaulter of ConfigMaps, and a kind with two versions converted through its hub.
//!
//! `cargo run -p kube-controller-runtime --example webhooks` serves them on port 9443 with the
//! certificate of `/tmp/k8s-webhook-server/serving-certs`, for the webhook configurations and
//! the CRD of a cluster that point at this process.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use kube_controller_runtime::webhook::Webhook;
use kube_controller_runtime::webhook::admission::{
    Defaulter, Denial, Request, ValidationResult, Validator,
};
use kube_controller_runtime::webhook::conversion::{ConversionError, Convertible, Hub, LossPolicy};
use kube_controller_runtime::{Manager, shutdown_signal};
use serde::{Deserialize, Serialize};

/// Refuses passwords in ConfigMaps; warns about empty ones.
struct ConfigMapRules;

impl Validator<ConfigMap> for ConfigMapRules {
    async fn validate_create(&self, _req: &Request, cm: &ConfigMap) -> ValidationResult {
        let data = cm.data.clone().unwrap_or_default();
        if data.contains_key("password") {
            return Err(Denial::invalid("ConfigMaps hold no passwords")
                .with_cause("data.password", "use a Secret"));
        }
        if data.is_empty() {
            return Ok(vec!["an empty ConfigMap".into()]);
        }
        Ok(vec![])
    }

    async fn validate_update(
        &self,
        req: &Request,
        _old: &ConfigMap,
        new: &ConfigMap,
    ) -> ValidationResult {
        self.validate_create(req, new).await
    }
    // validate_delete: allowed (the default).
}

/// Labels every ConfigMap with the team given on the command line.
struct TeamLabel(String);

impl Defaulter<ConfigMap> for TeamLabel {
    async fn default(&self, _req: &Request, cm: &mut ConfigMap) -> Result<(), Denial> {
        let labels = cm.metadata.labels.get_or_insert_default();
        labels
            .entry("team".into())
            .or_insert_with(|| self.0.clone());
        Ok(())
    }
}

/// `kube::Resource` of one version of Mydemo (generated code and `#[derive(CustomResource)]`
/// implement it).
macro_rules! mydemo_resource {
    ($type:ident, $version:literal) => {
        impl kube::Resource for $type {
            type DynamicType = ();
            type Scope = kube::core::NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                "Mydemo".into()
            }
            fn group(_: &()) -> Cow<'_, str> {
                "demo.example.com".into()
            }
            fn version(_: &()) -> Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> Cow<'_, str> {
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

/// demo.example.com/v1, the storage version: the hub.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MydemoV1 {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: V1Spec,
}

/// The v1 spec.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct V1Spec {
    pub ip: String,
    pub port: u16,
}

mydemo_resource!(MydemoV1, "v1");
impl Hub for MydemoV1 {}

/// demo.example.com/v1alpha1: `address: "<ip>:<port>"`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MydemoV1alpha1 {
    #[serde(flatten)]
    pub types: TypeMeta,
    pub metadata: ObjectMeta,
    pub spec: V1alpha1Spec,
}

/// The v1alpha1 spec.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct V1alpha1Spec {
    pub address: String,
}

mydemo_resource!(MydemoV1alpha1, "v1alpha1");

impl Convertible<MydemoV1> for MydemoV1alpha1 {
    fn convert_to(&self) -> Result<MydemoV1, ConversionError> {
        let (ip, port) = self
            .spec
            .address
            .rsplit_once(':')
            .ok_or_else(|| ConversionError::new("address is no <ip>:<port>"))?;
        let port = port
            .parse()
            .map_err(|e| ConversionError::new(format!("port: {e}")))?;
        Ok(MydemoV1 {
            types: TypeMeta::resource::<MydemoV1>(),
            metadata: self.metadata.clone(), // metadata is copied unchanged, always
            spec: V1Spec {
                ip: ip.into(),
                port,
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mgr = Manager::builder(kube::Client::try_default().await?)
        .webhook_port(9443) // --webhook-port
        .webhook_cert_dir("/tmp/k8s-webhook-server/serving-certs") // --webhook-cert-dir
        .health_probe_bind_address(":8081") // /readyz checks "webhook"
        .build()?;
    Webhook::builder(&mgr)
        .for_::<ConfigMap>()
        .with_defaulter(TeamLabel("platform".into())) // POST /mutate--v1-configmap
        .with_validator(ConfigMapRules) // POST /validate--v1-configmap
        .complete()?;
    Webhook::builder(&mgr)
        .for_::<MydemoV1>()
        .with_spoke::<MydemoV1alpha1>() // one call per other version; POST /convert
        .with_loss_policy(LossPolicy::Refuse) // the default
        .complete()?;
    mgr.start(shutdown_signal()).await?;
    Ok(())
}
