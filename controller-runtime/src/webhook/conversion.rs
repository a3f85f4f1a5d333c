//! CRD conversion (controller-runtime's `pkg/webhook/conversion`): hub and spokes. One version
//! of a kind is the [`Hub`]; every other version is [`Convertible`] to and from it, so `n`
//! versions need `n - 1` pairs of functions, and any version converts to any other through the
//! hub. The webhook at `/convert` answers every `ConversionReview` of every registered kind.
//!
//! A review is converted **whole or not at all**: if any object cannot be converted the
//! response has no objects and `result` says which object failed and why (kube-apiserver then
//! fails the request that needed it). It fails for an object whose group or kind is not
//! registered, for a source or desired version that is not (an **unknown version**), for an
//! error returned by a conversion function, and for a conversion that **loses data**.
//!
//! ## Round-trip loss
//!
//! Kubernetes requires conversions to round-trip: an object read through another version and
//! written back must be unchanged. Every object converted from version `A` to `B` is therefore
//! converted back to `A` and compared with the original (both as the Rust types read them); a
//! difference is *loss*, and the [`LossPolicy`] decides:
//!
//! * [`LossPolicy::Refuse`] (the default): the review fails, naming the fields
//!   (`converting example.com/v1 Mydemo ns/a to v1alpha1 loses /spec/weight`). Nothing is
//!   silently dropped; the fix is a version that can hold the field, or the next policy;
//! * [`LossPolicy::Annotate`]: what `B` cannot hold is kept in the annotation
//!   [`LOST_FIELDS_ANNOTATION`] of the `B` object (the technique Kubebuilder projects use by
//!   hand), and restored when that object is converted back to `A` — for each field, only if
//!   the object still has the value the round trip gave it (a field changed through `B` is
//!   not overwritten). The round trip is checked again with the annotation; if it still loses
//!   data the review fails as with `Refuse`.
//!
//! The comparison is of the objects as the Rust types serialise them: a field the CRD's schema
//! has but the type does not is lost before conversion starts, and is not reported.
//!
//! A kind's versions are registered on the hub's webhook builder:
//! `Webhook::builder(&mgr).for_::<MydemoV1>().with_spoke::<MydemoV1alpha1>().complete()`, with
//! `impl Hub for MydemoV1 {}` and `impl Convertible<MydemoV1> for MydemoV1alpha1` (its
//! `convert_to` and `convert_from`); the guide (`docs/guide/webhooks.md`) has the whole example.
//! Conversion functions copy `metadata` unchanged, as Kubernetes requires.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kube::Resource;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use parking_lot::RwLock;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The annotation in which [`LossPolicy::Annotate`] keeps what a version cannot hold:
/// `{"from": "<group>/<version>", "fields": {"<JSON pointer>": {"value": …, "roundTrip": …}}}`.
pub const LOST_FIELDS_ANNOTATION: &str = "conversion.kube-codegen.io/lost-fields";

/// The version every other version of a kind converts to and from (controller-runtime's
/// `conversion.Hub`): usually the storage version. A marker: `impl Hub for MyKindV1 {}`.
pub trait Hub:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

/// A version of a kind that converts to and from the hub `H` (controller-runtime's
/// `conversion.Convertible`, a "spoke").
pub trait Convertible<H: Hub>:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + Sized + 'static
{
    /// This object in the hub version.
    fn convert_to(&self) -> Result<H, ConversionError>;
    /// The hub object in this version.
    fn convert_from(hub: &H) -> Result<Self, ConversionError>;
}

/// Why a conversion function could not convert an object; the review fails with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConversionError(pub String);

impl ConversionError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ConversionError(message.into())
    }
}

/// What a conversion that loses data does; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LossPolicy {
    /// The review fails, naming the fields lost.
    #[default]
    Refuse,
    /// The fields lost are kept in [`LOST_FIELDS_ANNOTATION`] and restored on the way back.
    Annotate,
}

type ValueFn = Arc<dyn Fn(Value) -> Result<Value, ConversionError> + Send + Sync>;

/// One version of a kind: to the hub, from the hub (both as JSON of the hub type).
#[derive(Clone)]
pub(crate) struct VersionFns {
    pub(crate) to_hub: ValueFn,
    pub(crate) from_hub: ValueFn,
    /// Decoded and encoded as this version's type, no conversion.
    pub(crate) normalize: ValueFn,
}

fn decode<T: DeserializeOwned>(v: Value, what: &str) -> Result<T, ConversionError> {
    serde_json::from_value(v).map_err(|e| ConversionError(format!("cannot decode {what}: {e}")))
}

fn encode<T: Resource<DynamicType = ()> + Serialize>(t: &T) -> Result<Value, ConversionError> {
    let mut v = serde_json::to_value(t).map_err(|e| ConversionError(e.to_string()))?;
    if let Value::Object(m) = &mut v {
        m.insert("apiVersion".into(), T::api_version(&()).into());
        m.insert("kind".into(), T::kind(&()).into());
    }
    Ok(v)
}

impl VersionFns {
    pub(crate) fn hub<H: Hub>() -> Self {
        let pass: ValueFn = Arc::new(|v| encode(&decode::<H>(v, "the hub object")?));
        VersionFns {
            to_hub: pass.clone(),
            from_hub: pass.clone(),
            normalize: pass,
        }
    }

    pub(crate) fn spoke<H: Hub, S: Convertible<H>>() -> Self {
        VersionFns {
            to_hub: Arc::new(|v| {
                let spoke: S = decode(v, &format!("the {} object", S::version(&())))?;
                encode(&spoke.convert_to()?)
            }),
            from_hub: Arc::new(|v| {
                let hub: H = decode(v, "the hub object")?;
                encode(&S::convert_from(&hub)?)
            }),
            normalize: Arc::new(|v| {
                encode(&decode::<S>(v, &format!("the {} object", S::version(&())))?)
            }),
        }
    }
}

/// The versions of one kind.
#[derive(Clone)]
pub(crate) struct KindConversion {
    pub(crate) versions: HashMap<String, VersionFns>,
    pub(crate) policy: LossPolicy,
}

/// Every kind served at `/convert`, by group and kind.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    kinds: Arc<RwLock<HashMap<(String, String), KindConversion>>>,
}

/// Why one object could not be converted.
#[derive(Debug)]
struct Failure(String);

impl Registry {
    /// Adds (or replaces) the conversions of `group`/`kind`.
    pub(crate) fn insert(&self, group: &str, kind: &str, conversion: KindConversion) {
        self.kinds
            .write()
            .insert((group.to_string(), kind.to_string()), conversion);
    }

    /// Whether `group`/`kind` has conversions.
    pub(crate) fn contains(&self, group: &str, kind: &str) -> bool {
        self.kinds
            .read()
            .contains_key(&(group.to_string(), kind.to_string()))
    }

    /// Answers one HTTP body: the HTTP status and a `ConversionReview`.
    pub(crate) fn review(&self, body: &[u8]) -> (u16, Vec<u8>) {
        let review: ConversionReview = match serde_json::from_slice(body) {
            Ok(r) => r,
            Err(e) => {
                let status = Status::failure(
                    &format!("cannot decode the ConversionReview: {e}"),
                    "BadRequest",
                )
                .with_code(400);
                return (
                    400,
                    encode_review(ConversionResponse::invalid(status).into_review()),
                );
            }
        };
        let request = match ConversionRequest::try_from(review) {
            Ok(r) => r,
            Err(e) => {
                let status = Status::failure(&e.to_string(), "BadRequest").with_code(400);
                return (
                    400,
                    encode_review(ConversionResponse::invalid(status).into_review()),
                );
            }
        };
        let desired = request.desired_api_version.clone();
        let uid = request.uid.clone();
        let objects = request.objects.clone();
        let response = ConversionResponse::for_request(request);
        let mut converted = Vec::with_capacity(objects.len());
        for (i, obj) in objects.into_iter().enumerate() {
            match self.convert(obj, &desired) {
                Ok(o) => converted.push(o),
                Err(Failure(why)) => {
                    tracing::warn!(%uid, desired = %desired, object = i, reason = %why, "conversion failed");
                    let status = Status::failure(&why, "ConversionFailed");
                    return (200, encode_review(response.failure(status).into_review()));
                }
            }
        }
        tracing::debug!(%uid, desired = %desired, objects = converted.len(), "conversion review answered");
        (
            200,
            encode_review(response.success(converted).into_review()),
        )
    }

    fn convert(&self, obj: Value, desired: &str) -> Result<Value, Failure> {
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let name = object_name(&obj);
        let (group, from) = split_api_version(&api_version);
        let (desired_group, to) = split_api_version(desired);
        if api_version.is_empty() || kind.is_empty() {
            return Err(Failure(format!("{name} has no apiVersion or kind")));
        }
        if group != desired_group {
            return Err(Failure(format!(
                "cannot convert {api_version} {kind} {name} to {desired}: another group"
            )));
        }
        let conversion = self
            .kinds
            .read()
            .get(&(group.to_string(), kind.clone()))
            .cloned()
            .ok_or_else(|| {
                Failure(format!(
                    "no conversion is registered for kind {kind} of group {group:?}"
                ))
            })?;
        let known = || {
            let mut v: Vec<&str> = conversion.versions.keys().map(String::as_str).collect();
            v.sort_unstable();
            v.join(", ")
        };
        let src = conversion.versions.get(from).ok_or_else(|| {
            Failure(format!(
                "unknown version {from:?} of {kind} {name} (registered: {})",
                known()
            ))
        })?;
        let dst = conversion.versions.get(to).ok_or_else(|| {
            Failure(format!(
                "unknown desired version {to:?} of {kind} (registered: {})",
                known()
            ))
        })?;
        if from == to {
            return Ok(obj);
        }
        let what = |e: ConversionError| {
            Failure(format!(
                "converting {api_version} {kind} {name} to {to}: {e}"
            ))
        };
        // The original as its type reads it; lost-fields annotations are bookkeeping, not data.
        let normalized = without_note((src.normalize)(obj.clone()).map_err(what)?);
        let hub = (src.to_hub)(obj).map_err(what)?;
        let out = (dst.from_hub)(hub).map_err(what)?;
        // Fields `to` lost on an earlier trip to `from` come back now.
        let out = restore_if_back(out, group, to);

        let back = self.round_trip(src, dst, &out, group, from).map_err(what)?;
        let lost = json_patch::diff(&normalized, &back);
        if lost.0.is_empty() {
            return Ok(out);
        }
        let paths = lost
            .0
            .iter()
            .map(|op| op.path().to_string())
            .collect::<Vec<_>>();
        if conversion.policy == LossPolicy::Refuse {
            return Err(Failure(format!(
                "converting {api_version} {kind} {name} to {to} loses {} (round trip through {to} changes them; make {to} hold them, or use LossPolicy::Annotate)",
                paths.join(", ")
            )));
        }
        let mut fields = BTreeMap::new();
        for path in &paths {
            fields.insert(
                path.clone(),
                serde_json::json!({
                    "value": normalized.pointer(path).cloned().unwrap_or(Value::Null),
                    "roundTrip": back.pointer(path).cloned().unwrap_or(Value::Null),
                }),
            );
        }
        let note = serde_json::json!({ "from": api_version, "fields": fields });
        let annotated = annotate(out, &note.to_string());
        let back = self
            .round_trip(src, dst, &annotated, group, from)
            .map_err(what)?;
        let still = json_patch::diff(&normalized, &back);
        if still.0.is_empty() {
            Ok(annotated)
        } else {
            let paths: Vec<String> = still.0.iter().map(|op| op.path().to_string()).collect();
            Err(Failure(format!(
                "converting {api_version} {kind} {name} to {to} loses {} even with the lost fields kept in {LOST_FIELDS_ANNOTATION}",
                paths.join(", ")
            )))
        }
    }

    /// `out` (in `to`) converted back to `from`, with the annotation restored.
    fn round_trip(
        &self,
        src: &VersionFns,
        dst: &VersionFns,
        out: &Value,
        group: &str,
        from: &str,
    ) -> Result<Value, ConversionError> {
        let back = (src.from_hub)((dst.to_hub)(out.clone())?)?;
        Ok(without_note(restore_if_back(back, group, from)))
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

fn object_name(obj: &Value) -> String {
    let meta = obj.get("metadata");
    let get = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str);
    match (get("namespace"), get("name")) {
        (Some(ns), Some(n)) => format!("{ns}/{n}"),
        (None, Some(n)) => n.to_string(),
        _ => "(unnamed)".into(),
    }
}

fn annotations(obj: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    obj.get_mut("metadata")?
        .get_mut("annotations")?
        .as_object_mut()
}

/// Removes the lost-fields annotation of `obj` when it names `group/version` as its origin,
/// returning it.
fn take_lost_fields(mut obj: Value, group: &str, version: &str) -> (Value, Option<Value>) {
    let origin = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let note = annotations(&mut obj)
        .and_then(|a| a.get(LOST_FIELDS_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok());
    match note {
        Some(n) if n.get("from").and_then(Value::as_str) == Some(origin.as_str()) => {
            if let Some(a) = annotations(&mut obj) {
                a.remove(LOST_FIELDS_ANNOTATION);
                if a.is_empty()
                    && let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut)
                {
                    m.remove("annotations");
                }
            }
            (obj, Some(n))
        }
        _ => (obj, None),
    }
}

/// `obj` converted to `group/version`: when it carries lost fields from that version, they are
/// put back (each only where the object still has the round trip's value) and the annotation
/// removed.
fn restore_if_back(obj: Value, group: &str, version: &str) -> Value {
    let (mut obj, note) = take_lost_fields(obj, group, version);
    let Some(fields) = note
        .as_ref()
        .and_then(|n| n.get("fields"))
        .and_then(Value::as_object)
    else {
        return obj;
    };
    for (path, field) in fields {
        let (Some(value), Some(round_trip)) = (field.get("value"), field.get("roundTrip")) else {
            continue;
        };
        let current = obj.pointer(path).cloned().unwrap_or(Value::Null);
        if current != *round_trip {
            continue; // changed through the other version: that change wins
        }
        let Ok(ptr) = json_patch::jsonptr::PointerBuf::parse(path.clone()) else {
            continue;
        };
        let op = if value.is_null() {
            json_patch::PatchOperation::Remove(json_patch::RemoveOperation { path: ptr })
        } else {
            json_patch::PatchOperation::Add(json_patch::AddOperation {
                path: ptr,
                value: value.clone(),
            })
        };
        if let Err(e) = json_patch::patch(&mut obj, &[op]) {
            tracing::debug!(path = %path, error = %e, "a lost field could not be restored");
        }
    }
    obj
}

/// `obj` without the lost-fields annotation (of any origin).
fn without_note(mut obj: Value) -> Value {
    if let Some(a) = annotations(&mut obj) {
        a.remove(LOST_FIELDS_ANNOTATION);
        if a.is_empty()
            && let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            m.remove("annotations");
        }
    }
    obj
}

fn annotate(mut obj: Value, note: &str) -> Value {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let a = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(a) = a.as_object_mut() {
            a.insert(LOST_FIELDS_ANNOTATION.into(), note.into());
        }
    }
    obj
}

fn encode_review(review: ConversionReview) -> Vec<u8> {
    serde_json::to_vec(&review).unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot encode a ConversionReview");
        br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"","result":{"status":"Failure","message":"cannot encode the response"},"convertedObjects":[]}}"#.to_vec()
    })
}
