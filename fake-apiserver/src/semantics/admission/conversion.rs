//! Conversion webhooks of custom resources: a CRD with `spec.conversion.strategy: Webhook`
//! has every object read or written through a version that is not its storage version sent to
//! `spec.conversion.webhook.clientConfig` in an `apiextensions.k8s.io/v1` `ConversionReview`
//! (to the storage version before it is stored, to the requested version when it is
//! returned), as kube-apiserver does. A webhook that cannot be called, fails the review or
//! answers with the wrong objects fails the request with kube-apiserver's 500
//! `conversion webhook for <group/version, Kind=kind> failed: <cause>`.
//!
//! Without such a CRD, [`converter`] answers `None` and nothing here runs (strategy `None`
//! only rewrites `apiVersion`, as the registry always did).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::client;
use crate::error::{ApiError, ApiResult};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::storage::object;

/// kube-apiserver's timeout for a conversion webhook call.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The conversion webhook of a resource version that is not stored as it is served.
#[derive(Debug, Clone)]
pub(crate) struct Converter {
    url: String,
    ca: Vec<u8>,
    /// The version objects are stored in.
    pub(crate) storage: Arc<Resource>,
    /// The version of the request.
    pub(crate) served: Arc<Resource>,
}

/// The converter for requests through `res`, when its CRD converts through a webhook and
/// `res` is not the storage version.
pub(crate) fn converter(st: &State, res: &Arc<Resource>) -> Option<Converter> {
    webhook_converter(st, res).filter(|c| c.storage.version != res.version)
}

/// The conversion webhook of `res`'s CRD, whatever version `res` is (admission converts the
/// object to the version a webhook was registered for, storage version or not).
pub(crate) fn webhook_converter(st: &State, res: &Arc<Resource>) -> Option<Converter> {
    let crd_name = &res.custom.as_ref()?.crd_name;
    let crd_res = st
        .registry
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let crd = st.get(&crd_res, "", crd_name)?;
    let conversion = crd.pointer("/spec/conversion")?;
    if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
        return None;
    }
    let storage_version = crd
        .pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))?
        .get("name")?
        .as_str()?;
    let storage = st.registry.get(&res.group, storage_version, &res.plural)?;
    let cc = conversion.pointer("/webhook/clientConfig")?;
    let url = match cc.get("url").and_then(Value::as_str) {
        Some(u) => u.to_string(),
        None => {
            let svc = cc.get("service")?;
            let s = |f: &str| svc.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
            let (ns, name) = (s("namespace"), s("name"));
            let host = st
                .config
                .webhook_services
                .get(&(ns.clone(), name.clone(), port))
                .cloned()
                .unwrap_or_else(|| format!("{name}.{ns}.svc:{port}"));
            format!("https://{host}{}", s("path"))
        }
    };
    let ca = cc
        .get("caBundle")
        .and_then(Value::as_str)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default();
    Some(Converter {
        url,
        ca,
        storage,
        served: res.clone(),
    })
}

/// A conversion that failed: kube-apiserver's `conversion webhook for <group/version>,
/// Kind=<kind> failed: <cause>`, naming the version converted from.
#[derive(Debug)]
pub(crate) struct ConversionFailure(String);

impl Converter {
    /// An object written through the served version, to the storage version; a failure is
    /// kube-apiserver's bare 500.
    pub(crate) async fn to_storage(&self, obj: Value) -> ApiResult<Value> {
        self.convert_one(obj, &self.storage.clone())
            .await
            .map_err(|f| ApiError::new(500, "", f.0))
    }

    /// An object just written, back to the served version.
    pub(crate) async fn written(&self, obj: Value) -> ApiResult<Value> {
        self.convert_one(obj, &self.served.clone())
            .await
            .map_err(|f| ApiError::new(500, "", f.0))
    }

    /// A stored object read through the served version; a failure is the storage error
    /// kube-apiserver gives for an object it cannot decode.
    pub(crate) async fn read(&self, obj: Value) -> ApiResult<Value> {
        let (key, rv) = self.key_of(&obj, false);
        self.convert_one(obj, &self.served.clone())
            .await
            .map_err(|f| {
                let inner = corrupt(&key, &rv, &f);
                ApiError::internal(&inner)
            })
    }

    /// Stored objects listed through the served version, each converted on its own as
    /// kube-apiserver decodes them; failures are reported together.
    pub(crate) async fn read_list(&self, objs: Vec<Value>) -> ApiResult<Vec<Value>> {
        let mut out = Vec::with_capacity(objs.len());
        let mut causes = Vec::new();
        for obj in objs {
            let (key, rv) = self.key_of(&obj, true);
            match self.convert_one(obj, &self.served.clone()).await {
                Ok(o) => out.push(o),
                Err(f) => causes.push(json!({"field": key, "message": corrupt(&key, &rv, &f),
                    "reason": "UnexpectedServerResponse"})),
            }
        }
        if causes.is_empty() {
            return Ok(out);
        }
        let first = causes[0]["message"].as_str().unwrap_or("").to_string();
        Err(ApiError::new(
            500,
            "StorageReadError",
            format!(
                "failed to read one or more {} from the storage: {first}",
                self.served.store_key()
            ),
        )
        .with_details(json!({"causes": causes})))
    }

    /// The etcd key of a stored object (as a get or a list prints it) and its revision.
    fn key_of(&self, obj: &Value, registry_prefix: bool) -> (String, String) {
        let ns = object::namespace(obj);
        let prefix = if registry_prefix { "/registry" } else { "" };
        let res = &self.storage;
        let key = if ns.is_empty() {
            format!(
                "{prefix}/{}/{}/{}",
                res.group,
                res.plural,
                object::name(obj)
            )
        } else {
            format!(
                "{prefix}/{}/{}/{ns}/{}",
                res.group,
                res.plural,
                object::name(obj)
            )
        };
        (key, object::resource_version(obj).to_string())
    }

    /// An object to `to`'s version (unchanged if it is in it); a failure is kube-apiserver's
    /// bare 500, as for a write.
    pub(crate) async fn to_version(&self, obj: Value, to: &Arc<Resource>) -> ApiResult<Value> {
        self.convert_one(obj, to)
            .await
            .map_err(|f| ApiError::new(500, "", f.0))
    }

    async fn convert_one(
        &self,
        obj: Value,
        to: &Arc<Resource>,
    ) -> Result<Value, ConversionFailure> {
        Ok(self
            .convert(vec![obj], to)
            .await?
            .into_iter()
            .next()
            .unwrap_or(Value::Null))
    }

    /// Objects to `to`'s version; those already in it are left as they are.
    async fn convert(
        &self,
        objs: Vec<Value>,
        to: &Arc<Resource>,
    ) -> Result<Vec<Value>, ConversionFailure> {
        let desired = to.api_version();
        let pending: Vec<usize> = (0..objs.len())
            .filter(|&i| objs[i].get("apiVersion").and_then(Value::as_str) != Some(&desired))
            .collect();
        let Some(&first) = pending.first() else {
            return Ok(objs);
        };
        let from = objs[first]
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let fail = |cause: String| {
            ConversionFailure(format!(
                "conversion webhook for {from}, Kind={} failed: {cause}",
                to.kind
            ))
        };
        let uid = uuid::Uuid::new_v4().to_string();
        let review = json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": uid, "desiredAPIVersion": desired,
                "objects": pending.iter().map(|&i| &objs[i]).collect::<Vec<_>>()}});
        tracing::debug!(url = %self.url, %desired, objects = pending.len(), "calling conversion webhook");
        let answer = client::post(
            &self.url,
            &self.ca,
            serde_json::to_vec(&review).unwrap_or_default(),
            TIMEOUT,
        )
        .await
        .map_err(|e| fail(e.to_string()))?;
        let parsed: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| fail(format!("unmarshal failed: {e}")))?;
        let Some(response) = parsed.get("response").filter(|r| r.is_object()) else {
            return Err(fail("no response provided".into()));
        };
        if response.get("uid").and_then(Value::as_str) != Some(uid.as_str()) {
            return Err(fail(format!(
                "expected response.uid={}, got {}",
                crate::error::go_quote(&uid),
                crate::error::go_quote(response.get("uid").and_then(Value::as_str).unwrap_or(""))
            )));
        }
        if response.pointer("/result/status").and_then(Value::as_str) != Some("Success") {
            let message = response
                .pointer("/result/message")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(fail(message.to_string()));
        }
        let converted = response
            .get("convertedObjects")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if converted.len() != pending.len() {
            return Err(fail(format!(
                "expected {} converted objects, got {}",
                pending.len(),
                converted.len()
            )));
        }
        let mut out = objs;
        for (&i, c) in pending.iter().zip(converted) {
            if c.get("apiVersion").and_then(Value::as_str) != Some(&desired) {
                return Err(fail(format!(
                    "invalid converted object at index {i}: invalid apiVersion {}",
                    crate::error::go_quote(
                        c.get("apiVersion").and_then(Value::as_str).unwrap_or("")
                    )
                )));
            }
            if object::uid(&c) != object::uid(&out[i]) && !object::uid(&out[i]).is_empty() {
                return Err(fail(format!(
                    "invalid converted object at index {i}: metadata.uid may not change"
                )));
            }
            out[i] = c;
        }
        Ok(out)
    }
}

/// The storage error of an object that cannot be decoded (converted) as read.
fn corrupt(key: &str, rv: &str, f: &ConversionFailure) -> String {
    format!(
        "StorageError: corrupt object, Code: 7, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision={rv}: {}",
        f.0
    )
}
