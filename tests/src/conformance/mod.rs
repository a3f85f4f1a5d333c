//! API-server conformance scenarios, written once against a plain [`kube::Client`] so that the
//! same suite runs against kube-codegen's fake API server and against a real kube-apiserver.
//!
//! The suite installs its own CRDs through the API (`widgets.conformance.kube-codegen.dev`,
//! namespaced with a status subresource and a structural schema, and the cluster-scoped
//! `gizmos.conformance.kube-codegen.dev`), waits until they are `Established` and served by
//! discovery, and gives every scenario namespaces of its own (`cf-<run>-<scenario>`). It
//! relies on nothing a bare API server lacks: no garbage collection, no namespace deletion,
//! no controllers, no pods.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) {
//! use tests::conformance::{Ctx, run_all};
//! let report = run_all(client, &Ctx::default()).await;
//! assert!(report.is_success(), "{report}");
//! # }
//! ```

mod builtins;
mod crd;
mod crd_changes;
mod create;
mod crud;
mod discovery;
mod lifecycle;
mod limits;
mod misc;
mod ownership;
mod patch;
mod read;
mod versions;
mod watch;
mod wire;

use std::fmt;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind, Status};
use kube::{Client, Resource};
use serde_json::{Value, json};

/// The API group of the suite's CRDs.
pub const GROUP: &str = "conformance.kube-codegen.dev";
/// Their version.
pub const VERSION: &str = "v1";

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Makes namespace names unique per run (lower-case alphanumerics).
    pub run_id: String,
    /// How long waits (CRD establishment, watch events) may take.
    pub timeout: Duration,
    /// Run only scenarios whose name contains one of these (all when empty).
    pub only: Vec<String>,
    /// Delete the suite's CRDs at the end (`run_all`).
    pub delete_crds: bool,
}

impl Default for Ctx {
    fn default() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Ctx {
            run_id: format!("{:x}", (nanos % 0xff_ffff) as u32),
            timeout: Duration::from_secs(30),
            only: Vec::new(),
            delete_crds: true,
        }
    }
}

/// Why a scenario failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// What went wrong.
    pub message: String,
}

impl Failure {
    /// A failure with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl From<kube::Error> for Failure {
    fn from(e: kube::Error) -> Self {
        Failure::new(format!("unexpected API error: {e}"))
    }
}

impl From<serde_json::Error> for Failure {
    fn from(e: serde_json::Error) -> Self {
        Failure::new(format!("JSON: {e}"))
    }
}

/// The outcome of a scenario.
pub type Outcome = Result<(), Failure>;

/// `ensure!(cond, "format", args…)`: fail the scenario unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err($crate::conformance::Failure::new(format!($($arg)+)));
        }
    };
}

/// `ensure_eq!(left, right, "format", args…)`.
macro_rules! ensure_eq {
    ($left:expr, $right:expr, $($arg:tt)+) => {{
        let (l, r) = (&$left, &$right);
        if l != r {
            return Err($crate::conformance::Failure::new(format!(
                "{}: {:?} != {:?}",
                format!($($arg)+),
                l,
                r
            )));
        }
    }};
}

pub(crate) use {ensure, ensure_eq};

/// What scenarios work with: the client and the suite's resources.
pub struct Env {
    /// The client under test.
    pub client: Client,
    /// The run settings.
    pub ctx: Ctx,
    /// `widgets.conformance.kube-codegen.dev/v1` (namespaced, status subresource).
    pub widgets: ApiResource,
    /// `gizmos.conformance.kube-codegen.dev/v1` (cluster-scoped, no status subresource).
    pub gizmos: ApiResource,
    /// `checks.conformance.kube-codegen.dev/v1`: every schema feature (formats, patterns,
    /// list and map types, CEL rules), the scale subresource and printer columns.
    pub checks: ApiResource,
}

/// A raw HTTP response: status, headers, body.
#[derive(Debug)]
pub struct Raw {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl Raw {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// `(code, reason, message)` of a `Status` body.
    pub fn status(&self) -> (u16, String, String) {
        let v = self.json();
        (
            self.status,
            v["reason"].as_str().unwrap_or("").to_string(),
            v["message"].as_str().unwrap_or("").to_string(),
        )
    }

    /// The `Status` causes as `(reason, field, message)`, sorted (kube-apiserver orders some
    /// by Go map iteration).
    pub fn causes(&self) -> Vec<(String, String, String)> {
        let v = self.json();
        let mut out: Vec<(String, String, String)> = v["details"]["causes"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
                        (s("reason"), s("field"), s("message"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    /// The `Warning` headers' texts.
    pub fn warnings(&self) -> Vec<String> {
        self.headers
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(|w| {
                let text = w.splitn(3, ' ').nth(2).unwrap_or(w);
                serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_string())
            })
            .collect()
    }

    /// The `Content-Type` header.
    pub fn content_type(&self) -> String {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }
}

/// A `GET` of `path` through the environment's client.
pub(super) async fn get(env: &Env, path: &str) -> Result<Raw, Failure> {
    raw(&env.client, "GET", path, None, None, None).await
}

/// Sends a raw request through the client (its auth, TLS and base URL).
pub async fn raw(
    client: &Client,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    accept: Option<&str>,
    body: Option<Vec<u8>>,
) -> Result<Raw, Failure> {
    use http_body_util::BodyExt;
    let mut b = http::Request::builder().method(method).uri(path);
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    if let Some(a) = accept {
        b = b.header("accept", a);
    }
    let req = b
        .body(kube::client::Body::from(body.unwrap_or_default()))
        .map_err(|e| Failure::new(e.to_string()))?;
    let resp = client
        .send(req)
        .await
        .map_err(|e| Failure::new(format!("{method} {path}: {e}")))?;
    let (parts, body) = resp.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| Failure::new(format!("{method} {path}: reading the body: {e}")))?
        .to_bytes()
        .to_vec();
    Ok(Raw {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
    })
}

/// `ensure_status!(raw, code, reason, message)`: the response is a `Status` with exactly these.
macro_rules! ensure_status {
    ($raw:expr, $code:expr, $reason:expr, $message:expr, $($what:tt)+) => {{
        let got = $raw.status();
        let want = ($code as u16, $reason.to_string(), $message.to_string());
        if got != want {
            return Err($crate::conformance::Failure::new(format!(
                "{}: got {:?}, want {:?}",
                format!($($what)+),
                got,
                want
            )));
        }
    }};
}

pub(crate) use ensure_status;

/// Causes as `(reason, field, message)` triples, sorted, for comparing with [`Raw::causes`].
pub fn causes(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = list
        .iter()
        .map(|(r, f, m)| (r.to_string(), f.to_string(), m.to_string()))
        .collect();
    v.sort();
    v
}

impl Env {
    /// Creates (or reuses) the namespace `cf-<run>-<suffix>` and returns its name.
    pub async fn namespace(&self, suffix: &str) -> Result<String, Failure> {
        let name = format!("cf-{}-{suffix}", self.ctx.run_id);
        let api: Api<Namespace> = Api::all(self.client.clone());
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
        match api.create(&PostParams::default(), &ns).await {
            Ok(_) => {}
            Err(e) if status_of(&e).is_some_and(|s| s.code == 409) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(name)
    }

    /// Widgets in a namespace.
    pub fn widgets(&self, ns: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), ns, &self.widgets)
    }

    /// Widgets in all namespaces.
    pub fn all_widgets(&self) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), &self.widgets)
    }

    /// Gizmos (cluster-scoped).
    pub fn gizmos(&self) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), &self.gizmos)
    }

    /// Waits `d` (polling loops use this).
    pub async fn pause(&self, d: Duration) {
        tokio::time::sleep(d).await;
    }
}

/// A widget object with a name and `spec.size`.
pub fn widget(name: &str, size: i64) -> DynamicObject {
    dynamic(json!({
        "apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget",
        "metadata": {"name": name}, "spec": {"size": size}
    }))
}

/// A `DynamicObject` from JSON (invalid JSON becomes an empty object, which the server
/// rejects).
pub fn dynamic(v: Value) -> DynamicObject {
    serde_json::from_value(v).unwrap_or_else(|_| DynamicObject {
        types: None,
        metadata: Default::default(),
        data: Value::Null,
    })
}

/// The `Status` of an API error.
pub fn status_of(e: &kube::Error) -> Option<&Status> {
    match e {
        kube::Error::Api(s) => Some(s),
        _ => None,
    }
}

/// Expects an API error with this code and reason; returns its `Status`.
pub fn expect_error<T: fmt::Debug>(
    r: kube::Result<T>,
    code: u16,
    reason: &str,
    what: &str,
) -> Result<Status, Failure> {
    match r {
        Ok(v) => Err(Failure::new(format!(
            "{what}: expected {code} {reason}, got success: {v:?}"
        ))),
        Err(e) => match status_of(&e) {
            Some(s) if s.code == code && (reason.is_empty() || s.reason == reason) => Ok(s.clone()),
            _ => Err(Failure::new(format!(
                "{what}: expected {code} {reason}, got {e:?}"
            ))),
        },
    }
}

/// `(name, group, kind, uid)` of a Status's details (empty strings when absent).
pub fn details_of(s: &Status) -> (String, String, String, String) {
    match &s.details {
        Some(d) => (
            d.name.clone(),
            d.group.clone(),
            d.kind.clone(),
            d.uid.clone(),
        ),
        None => Default::default(),
    }
}

/// `metadata.resourceVersion` as a number (0 when missing or not numeric).
pub fn rv_of<K: Resource>(obj: &K) -> u64 {
    obj.meta()
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

type ScenarioFn = for<'a> fn(&'a Env) -> BoxFuture<'a, Outcome>;

/// One scenario.
pub struct Scenario {
    /// Its name (`create_generate_name` …).
    pub name: &'static str,
    /// What it checks.
    pub description: &'static str,
    run: ScenarioFn,
}

impl Scenario {
    /// Runs it.
    pub fn run<'a>(&self, env: &'a Env) -> BoxFuture<'a, Outcome> {
        (self.run)(env)
    }
}

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .finish()
    }
}

macro_rules! scenario {
    ($module:ident :: $name:ident, $desc:expr) => {
        Scenario {
            name: stringify!($name),
            description: $desc,
            run: |env| Box::pin($module::$name(env)),
        }
    };
}

/// Every scenario of the suite, in run order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        scenario!(
            limits::json_patch_limits,
            "413 past 10,000 JSON patch operations, 422 for copies past 3 MiB"
        ),
        scenario!(
            limits::patches_decode_as_the_built_in_type,
            "JSON, merge and strategic-merge patches giving a field the wrong type: 422 on patch; apply: 500"
        ),
        scenario!(
            limits::byte_fields_decode_as_base64,
            "binaryData that is not base64: 400 on create and update, 422 on patch, 500 on apply; stored as Go encodes it"
        ),
        scenario!(
            limits::data_and_object_size_limits,
            "1 MiB of ConfigMap and Secret data (422), etcd's request limit (500)"
        ),
        scenario!(
            limits::yaml_alias_expansion_is_bounded,
            "400 for a YAML document with excessive aliasing"
        ),
        scenario!(
            create::create_assigns_server_fields,
            "uid, creationTimestamp, numeric resourceVersion from one global counter, generation 1"
        ),
        scenario!(
            create::create_generate_name,
            "generateName gets a 5-character random suffix; two creates differ"
        ),
        scenario!(
            create::create_already_exists,
            "409 AlreadyExists with Status details"
        ),
        scenario!(
            create::create_requires_name,
            "422 Invalid without name or generateName, and for a bad name"
        ),
        scenario!(
            create::create_namespace_mismatch,
            "400 when the body's namespace differs from the URL's"
        ),
        scenario!(
            create::create_custom_resource_requires_kind,
            "400 for a custom resource without kind or apiVersion"
        ),
        scenario!(
            create::create_in_missing_namespace,
            "404 namespaces \"x\" not found (NamespaceLifecycle)"
        ),
        scenario!(
            create::create_schema_pruning_defaulting_validation,
            "unknown fields pruned, defaults applied, schema violations 422"
        ),
        scenario!(
            read::get_not_found_status,
            "404 with a NotFound Status, message and details"
        ),
        scenario!(
            read::list_label_selectors,
            "=, ==, !=, in, notin, exists, !exists, and parse errors"
        ),
        scenario!(
            read::list_field_selectors,
            "metadata.name, metadata.namespace, selectable fields, 400 for unsupported fields"
        ),
        scenario!(
            read::list_pagination_consistent,
            "limit/continue pages form a snapshot; remainingItemCount"
        ),
        scenario!(read::list_all_namespaces, "lists across namespaces"),
        scenario!(
            read::list_resource_version_semantics,
            "list resourceVersion, Exact reads of the past, 0"
        ),
        scenario!(read::metadata_only_list, "PartialObjectMetadata lists"),
        scenario!(
            versions::get_at_resource_version,
            "GET at 0, an old or the current version reads the present; a bad version is 500"
        ),
        scenario!(
            versions::future_resource_version,
            "a version not reached yet: the read waits, then 504 ResourceVersionTooLarge with Retry-After; WatchList's ERROR event"
        ),
        scenario!(
            versions::resource_version_limit_and_continue,
            "resourceVersion=0 ignores limit (also with continue), a version with a limit reads exactly, continue with a version is 400"
        ),
        scenario!(
            crud::update_optimistic_concurrency,
            "409 Conflict on a stale resourceVersion"
        ),
        scenario!(
            crud::update_generation_semantics,
            "generation bumps on spec changes only"
        ),
        scenario!(
            crud::deployment_generation_counts_annotations,
            "a Deployment's generation also counts annotation changes"
        ),
        scenario!(
            crud::update_without_resource_version,
            "custom resources need a resourceVersion (422); ConfigMaps update unconditionally"
        ),
        scenario!(
            crud::update_noop_keeps_resource_version,
            "an update that changes nothing keeps the resourceVersion"
        ),
        scenario!(
            crud::update_missing_object,
            "PUT of a missing custom resource is 404; a Lease is created"
        ),
        scenario!(
            crud::update_name_mismatch,
            "400 when the body's name differs from the URL's"
        ),
        scenario!(
            crud::status_subresource,
            "main endpoint ignores status, /status ignores the rest"
        ),
        scenario!(patch::merge_patch, "JSON merge patch, null deletes"),
        scenario!(
            patch::json_patch,
            "JSON patch operations; failed test is 422"
        ),
        scenario!(
            patch::strategic_merge_patch,
            "merges lists by key on built-ins; 415 for custom resources"
        ),
        scenario!(
            patch::builtin_list_types,
            "a Service's ports merge by port in a strategic merge patch and by port and protocol in apply; webhooks keyed by name, imagePullSecrets atomic"
        ),
        scenario!(
            patch::server_side_apply,
            "apply creates, merges managers, removes dropped fields, conflicts, force, fieldManager required"
        ),
        scenario!(
            patch::patch_status_subresource,
            "patching /status changes only status"
        ),
        scenario!(
            crud::finalizers_and_deletion_timestamp,
            "finalizers hold deletion; clearing the last one deletes"
        ),
        scenario!(
            crud::delete_preconditions,
            "uid and resourceVersion preconditions are 409"
        ),
        scenario!(
            crud::delete_response_shapes,
            "custom resources and ConfigMaps answer a Success Status, Services the object"
        ),
        scenario!(
            crud::delete_collection,
            "deletecollection with a label selector"
        ),
        scenario!(crud::dry_run, "dryRun=All persists nothing"),
        scenario!(
            watch::watch_from_resource_version,
            "events after the given resourceVersion only"
        ),
        scenario!(
            watch::watch_initial_events,
            "no resourceVersion: synthetic ADDED for existing objects"
        ),
        scenario!(
            watch::watch_send_initial_events,
            "sendInitialEvents ends with the initial-events-end bookmark"
        ),
        scenario!(
            watch::watch_too_old,
            "a resourceVersion older than history: ERROR 410 Expired"
        ),
        scenario!(watch::watch_timeout, "timeoutSeconds ends the stream"),
        scenario!(
            watch::watch_selector_transitions,
            "label selectors on watches; leaving the selector is DELETED"
        ),
        scenario!(watch::watch_all_namespaces, "a watch across namespaces"),
        scenario!(
            watch::watch_as_table,
            "a watch with Accept as=Table sends a Table per event, the columns with the first only"
        ),
        scenario!(
            ownership::client_side_apply_upgrade,
            "apply as \"kubectl\" takes over what the last-applied annotation shows, and rewrites it"
        ),
        scenario!(
            ownership::atomic_label_selectors,
            "a Deployment's label selector is owned and conflicts whole"
        ),
        scenario!(
            ownership::update_field_sets_and_reset,
            "updaters own the maps they create (\".\"); [{}] and a built-in's [] reset managedFields; the next apply hands the rest to before-first-apply"
        ),
        scenario!(
            ownership::managed_fields_set_by_requests,
            "managed fields a request sets start its entry; undecodable ones are ignored; [{}] and [] clear them"
        ),
        scenario!(
            ownership::patch_name_and_kind_errors,
            "renames by any patch, apply without a name, apply of another kind: 400"
        ),
        scenario!(
            ownership::scale_subresource_ownership,
            "writes through /scale own the replicas with subresource scale; a Scale's apply conflicts in the Scale's terms"
        ),
        scenario!(
            lifecycle::deletion_fields_and_finalizer_warnings,
            "deletionTimestamp and its grace period immutable, negative grace, finalizer-name warnings"
        ),
        scenario!(
            lifecycle::delete_options_orphan_and_policy,
            "orphanDependents, with a propagationPolicy 422, a new policy on a repeated delete"
        ),
        scenario!(
            lifecycle::owner_references_and_generate_name,
            "owner-reference fields Required; generateName cut to 58 and its own cause"
        ),
        scenario!(
            misc::cluster_scoped_resources,
            "cluster-scoped custom resources and namespaces"
        ),
        scenario!(
            misc::unknown_resource_and_method,
            "404 for unknown resources, 405 for unsupported verbs"
        ),
        scenario!(
            misc::crd_lifecycle,
            "CRD establishment, discovery, protected groups, deletion unregisters"
        ),
        scenario!(
            misc::builtin_resources,
            "events (v1, events.k8s.io), leases, endpoints, endpoint slices, deployments, secrets, services"
        ),
        scenario!(
            misc::discovery_documents,
            "api, apis, group and resource lists"
        ),
        scenario!(
            misc::pod_deletion,
            "pod defaults; an unbound pod's delete marks it, then removes it"
        ),
        scenario!(
            misc::managed_fields_on_writes,
            "writes record managedFields for their field manager"
        ),
        scenario!(
            crud::delete_propagation_policy,
            "Orphan and Foreground add their finalizers (nothing removes them without a GC)"
        ),
        scenario!(
            misc::builtin_validation,
            "service cluster IPs are immutable, pods need containers and keep their spec, secrets need base64"
        ),
        scenario!(
            builtins::configmap_and_secret_rules,
            "immutable ConfigMaps and Secrets, a Secret's type, bad base64 (400 in bodies, 422 in patches), empty maps not stored"
        ),
        scenario!(
            builtins::workload_defaults_and_owners,
            "probe, StatefulSet and claim-template defaults, a DaemonSet's template generation, a Service's allocated IPs not the creator's"
        ),
        scenario!(
            builtins::pod_and_job_defaults,
            "Pod defaults, Priority and DefaultTolerationSeconds admission (not owned by the creator), Job defaults and generated selector"
        ),
        scenario!(
            builtins::builtin_keys_types_and_names,
            "ConfigMap and Secret keys, each Secret type's keys, finalizer and container names, immutable workload selectors; Namespace finalizer and Pod request defaults"
        ),
        scenario!(
            builtins::pod_binding_and_eviction,
            "a pod's binding (node, annotations, PodScheduled; once) and eviction (DisruptionTarget, then a delete); their errors and discovery"
        ),
        scenario!(
            builtins::pod_log,
            "a pod's log, exec, attach and portforward without a kubelet: the checks, 204, no host, the node looked up"
        ),
        scenario!(
            wire::go_parameters_and_methods,
            "boolean parameters as Go reads them, ?watch on an object, export, the end bookmark only with allowWatchBookmarks, unknown Table groups, UID and kind patches, discovery methods"
        ),
        scenario!(
            builtins::workload_and_pod_spec_rules,
            "workload replicas, selectors, template restart policy and Deployment strategies; Pod restart policy, ports, env names and volume mounts; spec.hostNetwork selects false when unset"
        ),
        scenario!(
            builtins::service_validation,
            "Service port ranges and types"
        ),
        scenario!(
            builtins::builtin_field_selectors,
            "each built-in kind's field labels and error wording; terms checked in sorted order"
        ),
        scenario!(
            discovery::accept_negotiation,
            "406 for Accept types not served (application/*), wording by endpoint; discovery versions and encodings"
        ),
        scenario!(
            discovery::namespace_discovery_and_verbs,
            "namespaces: no deletecollection (405), finalize listed with update only; health checks by path, ?verbose, 404 for unknown ones"
        ),
        scenario!(
            discovery::pretty_output,
            "?pretty indents objects, lists and Status as Go does"
        ),
        scenario!(
            builtins::scale_subresource_bodies,
            "JSON patches of /scale apply to the Scale; a Scale or object body must name the URL's object and namespace"
        ),
        scenario!(
            crd::schema_validation_reasons,
            "types, formats, patterns, bounds, enums, item and property counts, list-type duplicates: paths and reasons"
        ),
        scenario!(
            crd::cel_rules,
            "x-kubernetes-validations with reason and fieldPath; transition rules see oldSelf"
        ),
        scenario!(
            crd::crd_structural_schema_checks,
            "CRDs with non-structural schemas, bad defaults or rules that do not compile are 422"
        ),
        scenario!(
            crd::crd_defaults_on_read,
            "a default added to the CRD appears on objects stored before it"
        ),
        scenario!(
            crd::scale_subresource,
            "scale of custom resources, Deployments and ReplicationControllers"
        ),
        scenario!(
            crd::printer_columns,
            "Table columns of CRD printer columns: types, priorities, ages, first JSONPath result"
        ),
        scenario!(
            crd_changes::crd_value_types,
            "integers stay integers, int-or-string refuses booleans and floats, int32 range, embedded metadata"
        ),
        scenario!(
            crd_changes::crd_served_versions,
            "a deprecated version warns; writes through it pruned to the storage schema; status, scale, columns and OpenAPI per version; scale checked by schema and CEL"
        ),
        scenario!(
            crd_changes::crd_update_rules,
            "scope immutable, stored versions stay in spec.versions, exactly one storage version, storedVersions extended"
        ),
        scenario!(
            crd_changes::crd_validation_ratcheting,
            "after a schema tightens, unchanged values pass and changed ones are checked"
        ),
        scenario!(
            crd_changes::cel_transition_correlation,
            "optionalOldSelf on create, list-map items correlated by key, rule cost estimated at CRD creation"
        ),
        scenario!(
            wire::field_validation_directives,
            "fieldValidation Strict, Warn (Warning headers) and Ignore, for built-ins and custom resources"
        ),
        scenario!(
            wire::content_negotiation,
            "YAML bodies and responses, 406, 415, truncated JSON"
        ),
        scenario!(
            wire::label_selector_errors,
            "labelSelector parse errors in labels.Parse's words; what it accepts"
        ),
        scenario!(
            wire::protobuf_bodies,
            "built-in objects and delete options sent as protobuf; bodies that do not decode"
        ),
        scenario!(
            wire::managed_fields_drop_parameter,
            "Accept drop=metadata.managedFields (KEP-5958): not in v1.37.1, ignored on every verb"
        ),
        scenario!(
            wire::list_and_watch_parameters,
            "limit, resourceVersion, continue and resourceVersionMatch errors"
        ),
        scenario!(
            wire::patch_error_shapes,
            "JSON, merge and strategic patch errors; null, valueless and missing-key operations as kube-apiserver's patch library reads them"
        ),
        scenario!(
            wire::apply_shapes_and_conflicts,
            "apply request errors, conflicts with causes, force, ownership by the CRD's list and map types"
        ),
        scenario!(
            wire::metadata_validation,
            "owner references, field manager length, subdomain names, type errors, apiVersion vs URL"
        ),
        scenario!(
            wire::malformed_requests,
            "a body over 3 MiB is 413; deeply nested JSON and invalid UTF-8 paths get a Status"
        ),
        scenario!(
            wire::aggregated_discovery,
            "apidiscovery.k8s.io/v2 documents for /api and /apis"
        ),
        scenario!(
            wire::openapi_documents,
            "/openapi/v3 index and group-version documents, /openapi/v2"
        ),
    ]
}

/// The result of one scenario.
#[derive(Debug)]
pub struct ScenarioResult {
    /// The scenario's name.
    pub name: &'static str,
    /// Its outcome.
    pub outcome: Outcome,
    /// How long it took.
    pub elapsed: Duration,
}

/// The results of a run.
#[derive(Debug, Default)]
pub struct Report {
    /// Setup failure, if the suite could not start.
    pub setup: Option<Failure>,
    /// Each scenario's result.
    pub results: Vec<ScenarioResult>,
}

impl Report {
    /// Whether setup and every scenario passed.
    pub fn is_success(&self) -> bool {
        self.setup.is_none() && self.results.iter().all(|r| r.outcome.is_ok())
    }

    /// The failed scenarios.
    pub fn failures(&self) -> Vec<&ScenarioResult> {
        self.results.iter().filter(|r| r.outcome.is_err()).collect()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.setup {
            writeln!(f, "setup failed: {s}")?;
        }
        for r in &self.results {
            match &r.outcome {
                Ok(()) => writeln!(f, "ok    {} ({:?})", r.name, r.elapsed)?,
                Err(e) => writeln!(f, "FAIL  {} ({:?}): {e}", r.name, r.elapsed)?,
            }
        }
        let failed = self.failures().len();
        write!(
            f,
            "{} scenarios, {} passed, {failed} failed",
            self.results.len(),
            self.results.len() - failed
        )
    }
}

fn widget_schema() -> Value {
    let parts = json!({
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"],
                  "properties": {"name": {"type": "string"}, "count": {"type": "integer"}}}
    });
    let spec = json!({
        "type": "object", "required": ["size"],
        "properties": {
            "size": {"type": "integer", "minimum": 0, "maximum": 100},
            "color": {"type": "string", "default": "blue"},
            "note": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "parts": parts
        }
    });
    let status = json!({"type": "object", "properties": {
        "phase": {"type": "string"}, "observedGeneration": {"type": "integer"}
    }});
    json!({"type": "object", "properties": {"spec": spec, "status": status}})
}

fn widget_crd() -> Value {
    let version = json!({
        "name": VERSION, "served": true, "storage": true,
        "subresources": {"status": {}},
        "selectableFields": [{"jsonPath": ".spec.color"}],
        "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
        "schema": {"openAPIV3Schema": widget_schema()}
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget",
                      "shortNames": ["wdg"], "categories": ["conformance"]},
            "versions": [version]
        }
    })
}

fn gizmo_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gizmos.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Cluster",
            "names": {"kind": "Gizmo", "plural": "gizmos"},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}
            }]
        }
    })
}

fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// Creates a CRD (reusing an existing one) and waits until it is established and discovery
/// serves its resource.
pub async fn install_crd(client: &Client, crd: Value, timeout: Duration) -> Result<(), Failure> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(crd)?;
    let name = crd.metadata.name.clone().unwrap_or_default();
    let plural = crd.spec.names.plural.clone();
    let deadline = Instant::now() + timeout;
    loop {
        match api.create(&PostParams::default(), &crd).await {
            Ok(_) => break,
            Err(e) if status_of(&e).is_some_and(|s| s.code == 409) => {
                // Left over from an earlier run: reuse it unless it is going away.
                let existing = api.get(&name).await?;
                if existing.metadata.deletion_timestamp.is_none() {
                    break;
                }
            }
            Err(e) => return Err(e.into()),
        }
        if Instant::now() > deadline {
            return Err(Failure::new(format!("CRD {name} stayed terminating")));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    loop {
        let got = api.get(&name).await?;
        if established(&got) {
            let path = format!("/apis/{}/{}", crd.spec.group, VERSION);
            let req = http::Request::get(path)
                .body(Vec::new())
                .map_err(|e| Failure::new(e.to_string()))?;
            if let Ok(doc) = client.request::<Value>(req).await {
                let served = doc["resources"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["name"] == plural.as_str()));
                if served {
                    return Ok(());
                }
            }
        }
        if Instant::now() > deadline {
            return Err(Failure::new(format!(
                "CRD {name} was not established and served within {timeout:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The `Check` CRD: a schema with every validation kube-apiserver applies to custom resources.
pub fn check_crd() -> Value {
    let spec = json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.minReplicas <= self.replicas", "message": "replicas must be at least minReplicas", "fieldPath": ".replicas", "reason": "FieldValueForbidden"},
            {"rule": "!has(oldSelf.mode) || self.mode == oldSelf.mode", "message": "mode is immutable"}
        ],
        "properties": {
            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 10, "default": 1},
            "minReplicas": {"type": "integer", "default": 0},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "email": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date-time"},
            "code": {"type": "string", "pattern": "^[a-z]{3}$", "maxLength": 5},
            "ratio": {"type": "number", "multipleOf": 0.5},
            "tags": {"type": "array", "maxItems": 3, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "value": {"type": "integer"}}}},
            "labels": {"type": "object", "maxProperties": 2, "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "granular"},
            "settings": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('n-')", "message": "must start with n-"}]},
            "size": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "size may only grow"}]}
        }
    });
    let status = json!({"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("checks.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"kind": "Check", "plural": "checks", "listKind": "CheckList", "singular": "check"},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Names", "type": "string", "jsonPath": ".spec.items[*].name"},
                    {"name": "Created", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    {"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "priority": 1}
                ],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec, "status": status}}}
            }]
        }
    })
}

/// Installs the suite's CRDs.
pub async fn setup(client: Client, ctx: &Ctx) -> Result<Env, Failure> {
    install_crd(&client, widget_crd(), ctx.timeout).await?;
    install_crd(&client, gizmo_crd(), ctx.timeout).await?;
    install_crd(&client, check_crd(), ctx.timeout).await?;
    let ar = |kind: &str, plural: &str| {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, kind), plural)
    };
    Ok(Env {
        client,
        ctx: ctx.clone(),
        widgets: ar("Widget", "widgets"),
        gizmos: ar("Gizmo", "gizmos"),
        checks: ar("Check", "checks"),
    })
}

/// Deletes the suite's CRDs (and with them every widget and gizmo).
pub async fn teardown(env: &Env) -> Outcome {
    let api: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    for name in [
        format!("widgets.{GROUP}"),
        format!("gizmos.{GROUP}"),
        format!("checks.{GROUP}"),
    ] {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(e) if status_of(&e).is_some_and(|s| s.code == 404) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Sets up, runs every selected scenario (each bounded by twice the context timeout), and
/// tears down.
pub async fn run_all(client: Client, ctx: &Ctx) -> Report {
    let mut report = Report::default();
    let env = match setup(client, ctx).await {
        Ok(env) => env,
        Err(e) => {
            report.setup = Some(e);
            return report;
        }
    };
    for s in scenarios() {
        if !ctx.only.is_empty() && !ctx.only.iter().any(|o| s.name.contains(o.as_str())) {
            continue;
        }
        let started = Instant::now();
        let outcome = match tokio::time::timeout(ctx.timeout * 2, s.run(&env)).await {
            Ok(o) => o,
            Err(_) => Err(Failure::new(format!(
                "timed out after {:?}",
                ctx.timeout * 2
            ))),
        };
        report.results.push(ScenarioResult {
            name: s.name,
            outcome,
            elapsed: started.elapsed(),
        });
    }
    if ctx.delete_crds
        && let Err(e) = teardown(&env).await
    {
        report.results.push(ScenarioResult {
            name: "teardown",
            outcome: Err(e),
            elapsed: Duration::ZERO,
        });
    }
    report
}
