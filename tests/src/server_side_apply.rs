//! Server-side apply with several field managers, written once against a plain
//! [`kube::Client`] so that the same bodies run against the in-memory fake
//! (`tests/tests/apply_fake.rs`) and a real kube-apiserver (`tests/tests/apply_real.rs`).
//!
//! Each scenario applies overlapping configurations as two or more managers (untyped
//! `Patch::Apply`) and checks what the server keeps, who owns what (through
//! [`kube_codegen_runtime::apply::extract_fields`], which must give back each manager's
//! configuration), the 409 conflicts and their causes
//! ([`kube_codegen_runtime::apply::conflicts`]), `force`, and list merges by key — for a custom
//! resource whose schema has `x-kubernetes-list-type: map` (one- and two-field keys), `set` and
//! `atomic` lists and an atomic map, and for built-ins (Deployment, ConfigMap).
//!
//! Every extraction a scenario checks is recorded as a [`Capture`] (the object as the server
//! returned it, and what each manager's extraction must be). Against the real server these are
//! the test data of the runtime's extract unit tests (`codegen-runtime/testdata/`); the real
//! suite fails when they drift from what kube-apiserver returns.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) {
//! use tests::server_side_apply::{Env, scenarios};
//! let env = Env::setup(client).await.unwrap();
//! for s in scenarios() {
//!     s.run(&env).await.unwrap_or_else(|e| panic!("{}: {e}", s.name));
//! }
//! # }
//! ```

use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::{Client, Resource};
use kube_codegen_runtime::apply::{self, FieldConflict};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::conformance::{Failure, Outcome, ensure, ensure_eq, install_crd};
use crate::fixtures::apply::apis::fleet::v1::{Fleet, Mode};
use crate::fixtures::apply::client::applyconfiguration::fleet::v1::{
    FleetApplyConfiguration, FleetSpecApplyConfiguration, FleetStatusApplyConfiguration,
    PortApplyConfiguration, RouteApplyConfiguration, extract_fleet, extract_fleet_status,
};
use crate::fixtures::apply::client::clientset::versioned::Clientset as FleetClientset;
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::apply::meta::{
    ConditionApplyConfiguration, LabelSelectorApplyConfiguration,
};

/// The group of the suite's CRD.
pub const GROUP: &str = "apply.kube-codegen.dev";
/// Its version.
pub const VERSION: &str = "v1";
/// `apiVersion` of a Ship.
pub const SHIP_API_VERSION: &str = "apply.kube-codegen.dev/v1";

/// The `Ship` CRD: namespaced, with a status subresource, and a schema with every list and map
/// type server-side apply distinguishes.
pub fn ship_crd() -> Value {
    let string = json!({"type": "string"});
    let int = json!({"type": "integer"});
    let spec = json!({
        "type": "object",
        "properties": {
            "size": int, "image": string,
            "tags": {"type": "array", "items": string, "x-kubernetes-list-type": "set"},
            "args": {"type": "array", "items": string, "x-kubernetes-list-type": "atomic"},
            "ports": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"],
                          "properties": {"name": string, "port": int, "protocol": string}}
            },
            "routes": {
                "type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["host", "port"],
                "items": {"type": "object", "required": ["host", "port"],
                          "properties": {"host": string, "port": int, "weight": int}}
            },
            "selector": {
                "type": "object", "x-kubernetes-map-type": "atomic",
                "properties": {"matchLabels": {"type": "object", "additionalProperties": string}}
            },
            "params": {"type": "object", "additionalProperties": string}
        }
    });
    let status = json!({
        "type": "object",
        "properties": {
            "phase": string, "observedGeneration": int,
            "conditions": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object", "required": ["type", "status"],
                          "properties": {"type": string, "status": string, "reason": string}}
            }
        }
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("ships.{GROUP}")},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"kind": "Ship", "listKind": "ShipList", "plural": "ships", "singular": "ship"},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": spec, "status": status}
                }}
            }]
        }
    })
}

/// One checked extraction: the object as the server returned it, and what a manager's
/// extraction from it must be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// `<scenario>/<step>`.
    pub name: String,
    /// The object (uid, timestamps and resourceVersion scrubbed, see [`scrub`]).
    pub object: Value,
    /// The extractions.
    pub extractions: Vec<Extraction>,
}

/// What [`apply::extract_fields`] must return for one manager and subresource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    /// The field manager.
    pub manager: String,
    /// `""` or `"status"`.
    pub subresource: String,
    /// The expected apply configuration JSON.
    pub expected: Value,
}

/// What the scenarios work with.
pub struct Env {
    /// The client under test.
    pub client: Client,
    /// `ships.apply.kube-codegen.dev/v1`.
    pub ships: ApiResource,
    captures: Mutex<Vec<Capture>>,
}

impl Env {
    /// Installs the Ship CRD and waits until it is served.
    pub async fn setup(client: Client) -> Result<Env, Failure> {
        install_crd(&client, ship_crd(), Duration::from_secs(60)).await?;
        let fleet = serde_json::to_value(<Fleet as kube::CustomResourceExt>::crd())?;
        install_crd(&client, fleet, Duration::from_secs(60)).await?;
        Ok(Env {
            client,
            ships: ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk(GROUP, VERSION, "Ship"),
                "ships",
            ),
            captures: Mutex::new(Vec::new()),
        })
    }

    /// Creates the namespace `apply-<suffix>` and returns its name.
    pub async fn namespace(&self, suffix: &str) -> Result<String, Failure> {
        let name = format!("apply-{suffix}");
        match crate::e2e::create_namespace(&self.client, &name).await {
            Ok(_) => Ok(name),
            Err(e) if kube_codegen_runtime::api_status::is_already_exists(&e) => Ok(name),
            Err(e) => Err(e.into()),
        }
    }

    /// Ships in `ns`.
    pub fn ships(&self, ns: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), ns, &self.ships)
    }

    /// Every extraction checked so far, in order.
    pub fn captures(&self) -> Vec<Capture> {
        self.captures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Checks that each `(manager, subresource, config)` extracts from `object` as exactly
    /// `config` plus apiVersion, kind, name and namespace, and records the capture `name`.
    fn check_extractions<K: Serialize>(
        &self,
        name: &str,
        object: &K,
        expected: &[(&str, &str, Value)],
    ) -> Outcome {
        let object = serde_json::to_value(object)?;
        let mut extractions = Vec::new();
        for (manager, subresource, config) in expected {
            let want = with_identity(&object, config.clone());
            let got = apply::extract_fields(&object, manager, subresource)
                .map_err(|e| Failure::new(format!("{name}: extract {manager:?}: {e}")))?;
            ensure!(
                got == want,
                "{name}: extraction of {manager:?} ({subresource:?})\n  got:  {got}\n  want: {want}\n  object: {object}"
            );
            extractions.push(Extraction {
                manager: manager.to_string(),
                subresource: subresource.to_string(),
                expected: want,
            });
        }
        self.captures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Capture {
                name: name.to_string(),
                object: scrub(object),
                extractions,
            });
        Ok(())
    }
}

/// `config` with apiVersion, kind, metadata.name and metadata.namespace taken from `object`.
fn with_identity(object: &Value, config: Value) -> Value {
    let mut out = match config {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    for key in ["apiVersion", "kind"] {
        out.insert(key.into(), object[key].clone());
    }
    let meta = out
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = meta {
        for key in ["name", "namespace"] {
            if let Some(v) = object["metadata"][key].as_str() {
                m.insert(key.into(), Value::String(v.into()));
            }
        }
    }
    Value::Object(out)
}

/// The object without what differs from run to run: uid, creationTimestamp, resourceVersion,
/// the managedFields times, and the managedFields order (kube-apiserver orders entries by
/// time, so two managers within the same second come in either order): entries are sorted by
/// manager, operation and subresource.
pub fn scrub(mut object: Value) -> Value {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in ["uid", "creationTimestamp", "resourceVersion"] {
            meta.remove(key);
        }
        if let Some(entries) = meta.get_mut("managedFields").and_then(Value::as_array_mut) {
            for e in entries.iter_mut() {
                if let Some(e) = e.as_object_mut() {
                    e.remove("time");
                }
            }
            let key = |e: &Value| {
                ["manager", "operation", "subresource"]
                    .map(|k| e[k].as_str().unwrap_or_default().to_string())
            };
            entries.sort_by_key(key);
        }
    }
    object
}

/// A Ship apply configuration: `body` with apiVersion, kind, name.
fn ship(name: &str, body: Value) -> Value {
    let mut out = match body {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    out.insert("apiVersion".into(), json!(SHIP_API_VERSION));
    out.insert("kind".into(), json!("Ship"));
    let meta = out
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = meta {
        m.insert("name".into(), json!(name));
    }
    Value::Object(out)
}

/// The configuration as an extraction of it reads: without apiVersion, kind and name (the
/// identity is added by the check).
fn body(config: &Value) -> Value {
    let mut c = config.clone();
    if let Some(m) = c.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("name");
            meta.remove("namespace");
            if meta.is_empty() {
                m.remove("metadata");
            }
        }
    }
    c
}

fn params(manager: &str, force: bool) -> PatchParams {
    let p = PatchParams::apply(manager);
    if force { p.force() } else { p }
}

async fn apply_as<K>(api: &Api<K>, manager: &str, config: &Value, force: bool) -> kube::Result<K>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = config["metadata"]["name"].as_str().unwrap_or_default();
    api.patch(name, &params(manager, force), &Patch::Apply(config))
        .await
}

async fn apply_status_as<K>(api: &Api<K>, manager: &str, config: &Value) -> kube::Result<K>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = config["metadata"]["name"].as_str().unwrap_or_default();
    api.patch_status(name, &params(manager, false), &Patch::Apply(config))
        .await
}

/// Expects a 409 apply conflict whose causes are exactly `want` (`(manager, field)`, any
/// order).
fn expect_conflicts<T: std::fmt::Debug>(
    r: kube::Result<T>,
    want: &[(&str, &str)],
    what: &str,
) -> Outcome {
    let err = match r {
        Ok(v) => return Err(Failure::new(format!("{what}: expected 409, got {v:?}"))),
        Err(e) => e,
    };
    let status = crate::conformance::status_of(&err)
        .ok_or_else(|| Failure::new(format!("{what}: expected 409, got {err:?}")))?;
    ensure_eq!(
        (status.code, status.reason.as_str()),
        (409, "Conflict"),
        "{what}: status"
    );
    let n = want.len();
    let prefix = if n == 1 {
        "Apply failed with 1 conflict: ".to_string()
    } else {
        format!("Apply failed with {n} conflicts: ")
    };
    ensure!(
        status.message.starts_with(&prefix),
        "{what}: message {:?} does not start with {prefix:?}",
        status.message
    );
    let mut got: Vec<(String, String)> = apply::conflicts(&err)
        .into_iter()
        .map(|FieldConflict { manager, field, .. }| (manager, field))
        .collect();
    got.sort();
    let mut want: Vec<(String, String)> = want
        .iter()
        .map(|(m, f)| (m.to_string(), f.to_string()))
        .collect();
    want.sort();
    ensure_eq!(got, want, "{what}: conflict causes (manager, field)");
    for (manager, field) in &want {
        ensure!(
            status.message.contains(&format!("\"{manager}\"")) && status.message.contains(field),
            "{what}: message {:?} names {manager} and {field}",
            status.message
        );
    }
    Ok(())
}

/// `(manager, operation, subresource)` of every managedFields entry, sorted.
fn managers<K: Resource>(obj: &K) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = obj
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
                m.subresource.clone().unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

fn entry(manager: &str, operation: &str, subresource: &str) -> (String, String, String) {
    (manager.into(), operation.into(), subresource.into())
}

/// The items of a list sorted by the string value of `key`.
fn sorted_by(list: &Value, key: &str) -> Value {
    let mut items = list.as_array().cloned().unwrap_or_default();
    items.sort_by(|a, b| a[key].to_string().cmp(&b[key].to_string()));
    Value::Array(items)
}

/// The names of the items of the list at `pointer`, in order.
fn item_names(obj: &Value, pointer: &str, key: &str) -> Vec<String> {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|i| match &i[key] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Two managers apply overlapping Ship configurations: the object is their union, each owns
/// what it applied, and extracting each gives back exactly its configuration.
pub async fn crd_two_managers(env: &Env) -> Outcome {
    let ns = env.namespace("two-managers").await?;
    let api = env.ships(&ns);
    let alice = ship(
        "s",
        json!({
            "metadata": {"labels": {"app": "ship"}, "annotations": {"owner": "alice"}},
            "spec": {"size": 1, "image": "a:1", "tags": ["x", "y"], "args": ["--a"],
                     "ports": [{"name": "http", "port": 80}],
                     "routes": [{"host": "h1", "port": 80, "weight": 1}],
                     "selector": {"matchLabels": {"app": "ship"}},
                     "params": {"a": "1"}}
        }),
    );
    let bob = ship(
        "s",
        json!({
            "metadata": {"labels": {"tier": "b"}},
            "spec": {"tags": ["z"], "ports": [{"name": "metrics", "port": 9090, "protocol": "TCP"}],
                     "routes": [{"host": "h1", "port": 81, "weight": 2}],
                     "params": {"b": "2"}}
        }),
    );
    let s = apply_as(&api, "alice", &alice, false).await?;
    ensure_eq!(s.metadata.generation, Some(1), "apply creates");
    env.check_extractions("crd_two_managers/alice", &s, &[("alice", "", body(&alice))])?;
    let s = apply_as(&api, "bob", &bob, false).await?;
    ensure_eq!(
        managers(&s),
        vec![entry("alice", "Apply", ""), entry("bob", "Apply", "")],
        "managedFields"
    );
    let v = serde_json::to_value(&s)?;
    ensure_eq!(v["spec"]["tags"], json!(["x", "y", "z"]), "set union");
    ensure_eq!(
        item_names(&v, "/spec/ports", "name"),
        vec!["http", "metrics"],
        "ports merged by name"
    );
    ensure_eq!(
        item_names(&v, "/spec/routes", "port"),
        vec!["80", "81"],
        "routes merged by (host, port)"
    );
    ensure_eq!(
        v["metadata"]["labels"],
        json!({"app": "ship", "tier": "b"}),
        "labels merged"
    );
    ensure_eq!(
        v["spec"]["params"],
        json!({"a": "1", "b": "2"}),
        "map merged"
    );
    env.check_extractions(
        "crd_two_managers/both",
        &s,
        &[
            ("alice", "", body(&alice)),
            ("bob", "", body(&bob)),
            ("carol", "", json!({})),
            ("alice", "status", json!({})),
        ],
    )?;
    Ok(())
}

/// Conflicts (409 with one cause per field, naming the owner), shared ownership of equal
/// values, `force`, dry run, and ownership after a field is taken.
pub async fn crd_conflicts_and_force(env: &Env) -> Outcome {
    let ns = env.namespace("conflicts").await?;
    let api = env.ships(&ns);
    let alice = ship(
        "s",
        json!({"spec": {"size": 1, "image": "a:1", "ports": [{"name": "http", "port": 80}],
                        "args": ["--a"], "selector": {"matchLabels": {"app": "a"}}}}),
    );
    apply_as(&api, "alice", &alice, false).await?;

    // Different values for alice's fields: one cause per field, none written.
    let bob = ship("s", json!({"spec": {"size": 5, "image": "b:1"}}));
    expect_conflicts(
        apply_as(&api, "bob", &bob, false).await,
        &[("alice", ".spec.size"), ("alice", ".spec.image")],
        "bob changes size and image",
    )?;
    // A field inside a keyed item, an atomic list and an atomic map.
    expect_conflicts(
        apply_as(
            &api,
            "bob",
            &ship(
                "s",
                json!({"spec": {"ports": [{"name": "http", "port": 81}]}}),
            ),
            false,
        )
        .await,
        &[("alice", ".spec.ports[name=\"http\"].port")],
        "bob changes a port of alice's item",
    )?;
    expect_conflicts(
        apply_as(
            &api,
            "bob",
            &ship("s", json!({"spec": {"args": ["--b"]}})),
            false,
        )
        .await,
        &[("alice", ".spec.args")],
        "bob replaces an atomic list",
    )?;

    // The same value is no conflict: both own it, and it stays when alice lets go.
    let bob_same = ship("s", json!({"spec": {"image": "a:1"}}));
    let s = apply_as(&api, "bob", &bob_same, false).await?;
    env.check_extractions(
        "crd_conflicts_and_force/shared",
        &s,
        &[("alice", "", body(&alice)), ("bob", "", body(&bob_same))],
    )?;
    let alice2 = ship(
        "s",
        json!({"spec": {"size": 1, "ports": [{"name": "http", "port": 80}],
                        "args": ["--a"], "selector": {"matchLabels": {"app": "a"}}}}),
    );
    let s = apply_as(&api, "alice", &alice2, false).await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(v["spec"]["image"], json!("a:1"), "bob still owns image");

    // Dry run with force: the answer shows the change, nothing is stored.
    // (An apply declares all a manager wants: bob keeps image by applying it again.)
    let bob_size = ship("s", json!({"spec": {"image": "a:1", "size": 7}}));
    let dry = api
        .patch(
            "s",
            &PatchParams::apply("bob").force().dry_run(),
            &Patch::Apply(&bob_size),
        )
        .await?;
    ensure_eq!(
        serde_json::to_value(&dry)?["spec"]["size"],
        json!(7),
        "dry run answer"
    );
    let stored = api.get("s").await?;
    ensure_eq!(
        serde_json::to_value(&stored)?["spec"]["size"],
        json!(1),
        "dry run stores nothing"
    );

    // Force takes the field: bob owns it, alice no longer does, and alice now conflicts.
    let s = apply_as(&api, "bob", &bob_size, true).await?;
    ensure_eq!(
        serde_json::to_value(&s)?["spec"]["size"],
        json!(7),
        "forced"
    );
    let mut alice_left = body(&alice2);
    if let Some(spec) = alice_left["spec"].as_object_mut() {
        spec.remove("size");
    }
    env.check_extractions(
        "crd_conflicts_and_force/forced",
        &s,
        &[
            ("alice", "", alice_left),
            ("bob", "", json!({"spec": {"image": "a:1", "size": 7}})),
        ],
    )?;
    expect_conflicts(
        apply_as(&api, "alice", &alice2, false).await,
        &[("bob", ".spec.size")],
        "alice re-applies the size bob took",
    )?;
    Ok(())
}

/// Keyed lists merge item by item: a manager's dropped item goes, a co-owned item stays, a
/// two-field key tells items apart, and fields inside items belong to whoever set them.
pub async fn crd_list_map_merge(env: &Env) -> Outcome {
    let ns = env.namespace("list-map").await?;
    let api = env.ships(&ns);
    let alice = ship(
        "s",
        json!({"spec": {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
                        "routes": [{"host": "h", "port": 80}, {"host": "h", "port": 81}],
                        "tags": ["a", "shared"]}}),
    );
    apply_as(&api, "alice", &alice, false).await?;
    // Bob adds an item, sets a field alice left unset in her item, and co-owns a set value.
    let bob = ship(
        "s",
        json!({"spec": {"ports": [{"name": "http", "protocol": "TCP"}, {"name": "metrics", "port": 9090}],
                        "routes": [{"host": "h", "port": 81, "weight": 5}],
                        "tags": ["shared", "b"]}}),
    );
    let s = apply_as(&api, "bob", &bob, false).await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(
        sorted_by(&v["spec"]["ports"], "name"),
        json!([{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "https", "port": 443},
               {"name": "metrics", "port": 9090}]),
        "ports merged by key, fields merged inside an item"
    );
    ensure_eq!(
        v["spec"]["routes"],
        json!([{"host": "h", "port": 80}, {"host": "h", "port": 81, "weight": 5}]),
        "routes merged by (host, port)"
    );
    env.check_extractions(
        "crd_list_map_merge/merged",
        &s,
        &[("alice", "", body(&alice)), ("bob", "", body(&bob))],
    )?;
    // Alice drops https, the shared tag and route 81, and changes her http port: https and
    // route 81's alice fields go; what bob co-owns stays.
    let alice2 = ship(
        "s",
        json!({"spec": {"ports": [{"name": "http", "port": 8080}],
                        "routes": [{"host": "h", "port": 80}],
                        "tags": ["a"]}}),
    );
    let s = apply_as(&api, "alice", &alice2, false).await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(
        sorted_by(&v["spec"]["ports"], "name"),
        json!([{"name": "http", "port": 8080, "protocol": "TCP"}, {"name": "metrics", "port": 9090}]),
        "alice's dropped item removed, bob's kept"
    );
    ensure_eq!(
        v["spec"]["routes"],
        json!([{"host": "h", "port": 80}, {"host": "h", "port": 81, "weight": 5}]),
        "a route bob co-owns stays"
    );
    ensure_eq!(
        v["spec"]["tags"],
        json!(["a", "shared", "b"]),
        "a tag bob co-owns stays"
    );
    env.check_extractions(
        "crd_list_map_merge/dropped",
        &s,
        &[("alice", "", body(&alice2)), ("bob", "", body(&bob))],
    )?;
    Ok(())
}

/// The wording of conflicts, exactly as kube-apiserver writes it: one conflict, several grouped
/// by manager, and a manager that updated (rather than applied) named with its API version.
pub async fn conflict_messages(env: &Env) -> Outcome {
    let ns = env.namespace("conflict-messages").await?;
    let api = env.ships(&ns);
    apply_as(
        &api,
        "alice",
        &ship("s", json!({"spec": {"size": 1, "image": "a:1"}})),
        false,
    )
    .await?;
    let message = |r: kube::Result<DynamicObject>| -> Result<(String, Vec<String>), Failure> {
        match r {
            Err(kube::Error::Api(s)) => Ok((
                s.message.clone(),
                s.details
                    .iter()
                    .flat_map(|d| d.causes.iter())
                    .map(|c| format!("{}|{}|{}", c.reason, c.message, c.field))
                    .collect(),
            )),
            other => Err(Failure::new(format!(
                "expected an API error, got {other:?}"
            ))),
        }
    };
    let (msg, causes) =
        message(apply_as(&api, "bob", &ship("s", json!({"spec": {"size": 5}})), false).await)?;
    ensure_eq!(
        msg,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.size",
        "one conflict"
    );
    ensure_eq!(
        causes,
        vec!["FieldManagerConflict|conflict with \"alice\"|.spec.size".to_string()],
        "its cause"
    );
    let (msg, _) = message(
        apply_as(
            &api,
            "bob",
            &ship("s", json!({"spec": {"size": 5, "image": "b:1"}})),
            false,
        )
        .await,
    )?;
    ensure_eq!(
        msg,
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.image\n- .spec.size",
        "two conflicts"
    );
    let edited = api
        .patch(
            "s",
            &PatchParams {
                field_manager: Some("editor".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"spec": {"image": "e:1"}})),
        )
        .await?;
    ensure!(
        managers(&edited).contains(&entry("editor", "Update", "")),
        "editor has an Update entry: {:?}",
        managers(&edited)
    );
    let (msg, causes) = message(
        apply_as(
            &api,
            "bob",
            &ship("s", json!({"spec": {"image": "b:1"}})),
            false,
        )
        .await,
    )?;
    let who = format!("conflict with \"editor\" using {SHIP_API_VERSION}");
    ensure_eq!(
        msg,
        format!("Apply failed with 1 conflict: {who}: .spec.image"),
        "an updater's conflict"
    );
    ensure_eq!(
        causes,
        vec![format!("FieldManagerConflict|{who}|.spec.image")],
        "its cause"
    );
    let conflicts = apply::conflicts(
        &apply_as(
            &api,
            "bob",
            &ship("s", json!({"spec": {"image": "b:1"}})),
            false,
        )
        .await
        .err()
        .ok_or_else(|| Failure::new("expected a conflict"))?,
    );
    ensure_eq!(
        conflicts
            .iter()
            .map(|c| (c.manager.as_str(), c.field.as_str()))
            .collect::<Vec<_>>(),
        vec![("editor", ".spec.image")],
        "apply::conflicts reads the manager out of the cause"
    );
    Ok(())
}

/// Where a manager's new items go in a keyed list: the server interleaves the applied list's
/// order with the live one (structured-merge-diff's merge), so items the applier lists first come
/// first.
pub async fn crd_list_map_order(env: &Env) -> Outcome {
    let ns = env.namespace("list-order").await?;
    let api = env.ships(&ns);
    let alice = ship(
        "s",
        json!({"spec": {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}}),
    );
    apply_as(&api, "alice", &alice, false).await?;
    let bob = ship(
        "s",
        json!({"spec": {"ports": [{"name": "metrics", "port": 9090}, {"name": "http", "protocol": "TCP"}]}}),
    );
    let s = apply_as(&api, "bob", &bob, false).await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(
        item_names(&v, "/spec/ports", "name"),
        vec!["metrics", "http", "https"],
        "bob's applied order first, alice's remaining item after"
    );
    env.check_extractions(
        "crd_list_map_order/merged",
        &s,
        &[("alice", "", body(&alice)), ("bob", "", body(&bob))],
    )?;
    let alice2 = ship(
        "s",
        json!({"spec": {"ports": [{"name": "http", "port": 8080}]}}),
    );
    let s = apply_as(&api, "alice", &alice2, false).await?;
    ensure_eq!(
        item_names(&serde_json::to_value(&s)?, "/spec/ports", "name"),
        vec!["metrics", "http"],
        "the live order is kept when alice drops https"
    );
    Ok(())
}

/// A map with `x-kubernetes-map-type: atomic` belongs whole to its applier: another value is one
/// conflict on the map itself, and an extraction takes it whole.
pub async fn crd_atomic_map(env: &Env) -> Outcome {
    let ns = env.namespace("atomic-map").await?;
    let api = env.ships(&ns);
    let alice = ship(
        "s",
        json!({"spec": {"selector": {"matchLabels": {"app": "a", "tier": "web"}}}}),
    );
    apply_as(&api, "alice", &alice, false).await?;
    expect_conflicts(
        apply_as(
            &api,
            "bob",
            &ship(
                "s",
                json!({"spec": {"selector": {"matchLabels": {"app": "b"}}}}),
            ),
            false,
        )
        .await,
        &[("alice", ".spec.selector")],
        "bob replaces an atomic map",
    )?;
    let bob = ship(
        "s",
        json!({"spec": {"selector": {"matchLabels": {"app": "b"}}}}),
    );
    let s = apply_as(&api, "bob", &bob, true).await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(
        v["spec"]["selector"],
        json!({"matchLabels": {"app": "b"}}),
        "replaced whole, not merged"
    );
    env.check_extractions(
        "crd_atomic_map/forced",
        &s,
        &[("alice", "", json!({})), ("bob", "", body(&bob))],
    )?;
    Ok(())
}

/// Status applied through `/status` is tracked apart from the main resource, per manager;
/// conditions merge by `type`.
pub async fn crd_status_subresource(env: &Env) -> Outcome {
    let ns = env.namespace("status").await?;
    let api = env.ships(&ns);
    let spec = ship("s", json!({"spec": {"size": 1}}));
    apply_as(&api, "ctrl", &spec, false).await?;
    let ready = ship(
        "s",
        json!({"status": {"phase": "Ready", "observedGeneration": 1,
                          "conditions": [{"type": "Ready", "status": "True", "reason": "Up"}]}}),
    );
    let synced = ship(
        "s",
        json!({"status": {"conditions": [{"type": "Synced", "status": "False"}]}}),
    );
    apply_status_as(&api, "ctrl", &ready).await?;
    let s = apply_status_as(&api, "syncer", &synced).await?;
    ensure_eq!(
        managers(&s),
        vec![
            entry("ctrl", "Apply", ""),
            entry("ctrl", "Apply", "status"),
            entry("syncer", "Apply", "status"),
        ],
        "one entry per manager and subresource"
    );
    let v = serde_json::to_value(&s)?;
    ensure_eq!(
        item_names(&v, "/status/conditions", "type"),
        vec!["Ready", "Synced"],
        "conditions merged by type"
    );
    env.check_extractions(
        "crd_status_subresource/applied",
        &s,
        &[
            ("ctrl", "", body(&spec)),
            ("ctrl", "status", body(&ready)),
            ("syncer", "status", body(&synced)),
            ("syncer", "", json!({})),
        ],
    )?;
    // The main resource ignores status; a status apply ignores the rest.
    let s = apply_as(
        &api,
        "ctrl",
        &ship(
            "s",
            json!({"spec": {"size": 2}, "status": {"phase": "Gone"}}),
        ),
        false,
    )
    .await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(
        (v["spec"]["size"].clone(), v["status"]["phase"].clone()),
        (json!(2), json!("Ready")),
        "main apply ignores status"
    );
    Ok(())
}

/// Read-modify-apply: extract what a manager owns, change it, apply it back: nothing of the
/// other manager is claimed or dropped, and the next extraction is the changed configuration.
pub async fn extract_modify_apply(env: &Env) -> Outcome {
    let ns = env.namespace("extract-modify").await?;
    let api = env.ships(&ns);
    let alice = ship(
        "s",
        json!({"metadata": {"labels": {"app": "ship"}},
               "spec": {"size": 1, "ports": [{"name": "http", "port": 80}], "params": {"a": "1"}}}),
    );
    let bob = ship(
        "s",
        json!({"spec": {"image": "b:1", "ports": [{"name": "metrics", "port": 9090}], "params": {"b": "2"}}}),
    );
    apply_as(&api, "alice", &alice, false).await?;
    apply_as(&api, "bob", &bob, false).await?;
    let current = serde_json::to_value(api.get("s").await?)?;
    let mut mine = apply::extract_fields(&current, "alice", "")
        .map_err(|e| Failure::new(format!("extract: {e}")))?;
    ensure_eq!(mine, with_identity(&current, body(&alice)), "extracted");
    mine["spec"]["size"] = json!(2);
    if let Some(ports) = mine["spec"]["ports"].as_array_mut() {
        ports.push(json!({"name": "https", "port": 443}));
    }
    // Applied without force: claiming nothing of bob's, it cannot conflict.
    let s = apply_as(&api, "alice", &mine, false).await?;
    let v = serde_json::to_value(&s)?;
    ensure_eq!(v["spec"]["size"], json!(2), "changed");
    ensure_eq!(v["spec"]["image"], json!("b:1"), "bob's image kept");
    ensure_eq!(
        item_names(&v, "/spec/ports", "name"),
        vec!["http", "metrics", "https"],
        "bob's port kept, alice's added"
    );
    env.check_extractions(
        "extract_modify_apply/after",
        &s,
        &[("alice", "", body(&mine)), ("bob", "", body(&bob))],
    )?;
    Ok(())
}

/// A Deployment: containers merge by name, their ports by (containerPort, protocol), env by
/// name; defaulted fields belong to nobody; replicas conflict.
pub async fn builtin_deployment(env: &Env) -> Outcome {
    use k8s_openapi::api::apps::v1::Deployment;
    let ns = env.namespace("deployment").await?;
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), &ns);
    let alice = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "app", "image": "nginx:1",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"}]
                }]}
            }
        }
    });
    let bob = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "app", "ports": [{"containerPort": 9090, "protocol": "TCP"}],
             "env": [{"name": "B", "value": "2"}]},
            {"name": "sidecar", "image": "busybox:1"}
        ]}}}
    });
    apply_as(&api, "alice", &alice, false).await?;
    let d = apply_as(&api, "bob", &bob, false).await?;
    let v = serde_json::to_value(&d)?;
    ensure_eq!(
        item_names(&v, "/spec/template/spec/containers", "name"),
        vec!["app", "sidecar"],
        "containers merged by name"
    );
    ensure_eq!(
        item_names(
            &v,
            "/spec/template/spec/containers/0/ports",
            "containerPort"
        ),
        vec!["80", "9090"],
        "ports merged by (containerPort, protocol)"
    );
    ensure_eq!(
        item_names(&v, "/spec/template/spec/containers/0/env", "name"),
        vec!["A", "B"],
        "env merged by name"
    );
    env.check_extractions(
        "builtin_deployment/merged",
        &d,
        &[("alice", "", body(&alice)), ("bob", "", body(&bob))],
    )?;
    expect_conflicts(
        apply_as(
            &api,
            "bob",
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                    "spec": {"replicas": 3}}),
            false,
        )
        .await,
        &[("alice", ".spec.replicas")],
        "bob scales alice's deployment",
    )?;
    Ok(())
}

/// A ConfigMap: data keys, labels, annotations, finalizers (a set) and owner references (keyed
/// by uid) merge per manager; a field changed by an update belongs to that manager
/// (operation `Update`), which apply conflicts name as such, and extraction leaves out.
pub async fn builtin_configmap(env: &Env) -> Outcome {
    use k8s_openapi::api::core::v1::ConfigMap;
    let ns = env.namespace("configmap").await?;
    let api: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let owner = |uid: &str, name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid});
    let alice = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"a": "1"}, "annotations": {"note": "alice"},
                     "finalizers": ["example.com/alice"],
                     "ownerReferences": [owner("00000000-0000-0000-0000-00000000000a", "owner-a")]},
        "data": {"a": "1", "b": "2"}
    });
    let bob = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"b": "1"},
                     "finalizers": ["example.com/bob"],
                     "ownerReferences": [owner("00000000-0000-0000-0000-00000000000b", "owner-b")]},
        "data": {"c": "3"}
    });
    apply_as(&api, "alice", &alice, false).await?;
    let c = apply_as(&api, "bob", &bob, false).await?;
    let v = serde_json::to_value(&c)?;
    ensure_eq!(
        v["metadata"]["finalizers"],
        json!(["example.com/alice", "example.com/bob"]),
        "finalizers merged as a set"
    );
    ensure_eq!(
        item_names(&v, "/metadata/ownerReferences", "name"),
        vec!["owner-a", "owner-b"],
        "owner references merged by uid"
    );
    env.check_extractions(
        "builtin_configmap/merged",
        &c,
        &[("alice", "", body(&alice)), ("bob", "", body(&bob))],
    )?;
    expect_conflicts(
        apply_as(
            &api,
            "bob",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                    "data": {"a": "9", "c": "3"}}),
            false,
        )
        .await,
        &[("alice", ".data.a")],
        "bob changes alice's key",
    )?;
    // An update takes the field it changes.
    let c = api
        .patch(
            "c",
            &PatchParams {
                field_manager: Some("editor".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"data": {"b": "20"}})),
        )
        .await?;
    ensure!(
        managers(&c).contains(&entry("editor", "Update", "")),
        "editor has an Update entry: {:?}",
        managers(&c)
    );
    let mut alice_left = body(&alice);
    if let Some(data) = alice_left["data"].as_object_mut() {
        data.remove("b");
    }
    env.check_extractions(
        "builtin_configmap/updated",
        &c,
        &[
            ("alice", "", alice_left),
            ("bob", "", body(&bob)),
            ("editor", "", json!({})),
        ],
    )?;
    let err = apply_as(&api, "alice", &alice, false).await;
    expect_conflicts(err, &[("editor", ".data.b")], "alice re-applies b")?;
    // Let the namespace go when it is deleted.
    api.patch(
        "c",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await?;
    Ok(())
}

fn extract_failure(e: kube_codegen_runtime::apply::ExtractError) -> Failure {
    Failure::new(format!("extract: {e}"))
}

fn port(name: &str, number: i32) -> PortApplyConfiguration {
    PortApplyConfiguration::default()
        .with_name(name)
        .with_port(number)
}

/// The two-manager scenario again with generated apply configurations and the generated typed
/// client: `apply` claims exactly what the configuration sets, `extract_fleet` gives each
/// manager's configuration back (`==`), conflicts and `force` work through `ApplyOptions`, and an
/// extract-modify-apply cycle leaves the other manager's fields alone.
pub async fn typed_two_managers(env: &Env) -> Outcome {
    let ns = env.namespace("typed").await?;
    let fleets = FleetClientset::new(env.client.clone())
        .fleet_v1()
        .fleets(&ns);
    let alice = FleetApplyConfiguration::new("f", &ns)
        .with_labels([("app", "fleet")])
        .with_spec(
            FleetSpecApplyConfiguration::default()
                .with_size(1)
                .with_image("a:1")
                .with_tags(["x", "y"])
                .with_args(["--a"])
                .with_ports([port("http", 80)])
                .with_routes([RouteApplyConfiguration::default()
                    .with_host("h")
                    .with_port(80)
                    .with_weight(1)])
                .with_selector(
                    LabelSelectorApplyConfiguration::default()
                        .with_match_labels([("app", "fleet")]),
                )
                .with_params([("a", "1")])
                .with_mode(Mode::Fast),
        );
    let bob = FleetApplyConfiguration::new("f", &ns).with_spec(
        FleetSpecApplyConfiguration::default()
            .with_tags(["z"])
            .with_ports([port("metrics", 9090)])
            .with_routes([RouteApplyConfiguration::default()
                .with_host("h")
                .with_port(81)
                .with_weight(2)])
            .with_params([("b", "2")]),
    );
    let f = fleets.apply(&alice, &ApplyOptions::new("alice")).await?;
    ensure_eq!(f.spec.size, Some(1), "created by apply");
    let f = fleets.apply(&bob, &ApplyOptions::new("bob")).await?;
    let mut ports: Vec<&str> = f.spec.ports.iter().map(|p| p.name.as_str()).collect();
    ports.sort();
    ensure_eq!(ports, vec!["http", "metrics"], "ports merged by name");
    ensure_eq!(f.spec.routes.len(), 2, "routes merged by (host, port)");
    ensure_eq!(f.spec.params.len(), 2, "params merged");
    ensure_eq!(f.spec.mode, Some(Mode::Fast), "the enum");
    ensure_eq!(
        extract_fleet(&f, "alice").map_err(extract_failure)?,
        alice,
        "alice's configuration comes back"
    );
    ensure_eq!(
        extract_fleet(&f, "bob").map_err(extract_failure)?,
        bob,
        "bob's configuration comes back"
    );
    // The typed object serializes without apiVersion and kind; the API server's JSON has them.
    let mut served = serde_json::to_value(&f)?;
    served["apiVersion"] = json!(Fleet::api_version(&()));
    served["kind"] = json!(Fleet::kind(&()));
    env.check_extractions(
        "typed_two_managers/both",
        &served,
        &[
            ("alice", "", body(&serde_json::to_value(&alice)?)),
            ("bob", "", body(&serde_json::to_value(&bob)?)),
        ],
    )?;

    // Bob asks for another size: a conflict naming alice, unless forced.
    let mut bob_sized = bob.clone();
    if let Some(spec) = bob_sized.spec.as_mut() {
        spec.size = Some(5);
    }
    expect_conflicts(
        fleets.apply(&bob_sized, &ApplyOptions::new("bob")).await,
        &[("alice", ".spec.size")],
        "bob resizes alice's fleet",
    )?;
    let f = fleets
        .apply(&bob_sized, &ApplyOptions::new("bob").force())
        .await?;
    ensure_eq!(f.spec.size, Some(5), "forced");
    let mut alice_left = alice.clone();
    if let Some(spec) = alice_left.spec.as_mut() {
        spec.size = None;
    }
    ensure_eq!(
        extract_fleet(&f, "alice").map_err(extract_failure)?,
        alice_left,
        "alice no longer owns size"
    );

    // Extract, modify, apply: alice changes her port and adds one; bob keeps everything.
    let mut mine = extract_fleet(&f, "alice").map_err(extract_failure)?;
    if let Some(spec) = mine.spec.as_mut() {
        spec.ports = Some(vec![port("http", 8080), port("https", 443)]);
        spec.image = Some("a:2".into());
    }
    let f = fleets.apply(&mine, &ApplyOptions::new("alice")).await?;
    ensure_eq!(f.spec.image.as_deref(), Some("a:2"), "alice's change");
    ensure_eq!(f.spec.size, Some(5), "bob's size kept");
    let mut ports: Vec<(String, Option<i32>)> = f
        .spec
        .ports
        .iter()
        .map(|p| (p.name.clone(), p.port))
        .collect();
    ports.sort();
    ensure_eq!(
        ports,
        vec![
            ("http".to_string(), Some(8080)),
            ("https".to_string(), Some(443)),
            ("metrics".to_string(), Some(9090)),
        ],
        "bob's port kept"
    );
    ensure_eq!(
        extract_fleet(&f, "alice").map_err(extract_failure)?,
        mine,
        "the next extraction is the changed configuration"
    );
    ensure_eq!(
        extract_fleet(&f, "bob").map_err(extract_failure)?,
        bob_sized,
        "bob's configuration is untouched"
    );
    Ok(())
}

/// `apply_status` with generated configurations: two managers' conditions merge by type, each
/// manager's status comes back from `extract_fleet_status`, and its main-resource extraction is
/// empty.
pub async fn typed_status(env: &Env) -> Outcome {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let ns = env.namespace("typed-status").await?;
    let fleets = FleetClientset::new(env.client.clone())
        .fleet_v1()
        .fleets(&ns);
    fleets
        .apply(
            &FleetApplyConfiguration::new("f", &ns)
                .with_spec(FleetSpecApplyConfiguration::default().with_size(1)),
            &ApplyOptions::new("owner"),
        )
        .await?;
    let at = Time(
        "2026-01-02T03:04:05Z"
            .parse()
            .map_err(|e| Failure::new(format!("time: {e}")))?,
    );
    let condition = |t: &str, status: &str| {
        ConditionApplyConfiguration::default()
            .with_type(t)
            .with_status(status)
            .with_reason("Checked")
            .with_message("by the test")
            .with_last_transition_time(at.clone())
    };
    let ctrl = FleetApplyConfiguration::new("f", &ns).with_status(
        FleetStatusApplyConfiguration::default()
            .with_phase("Sailing")
            .with_observed_generation(1_i64)
            .with_conditions([condition("Ready", "True")]),
    );
    let syncer = FleetApplyConfiguration::new("f", &ns).with_status(
        FleetStatusApplyConfiguration::default().with_conditions([condition("Synced", "False")]),
    );
    fleets
        .apply_status(&ctrl, &ApplyOptions::new("ctrl"))
        .await?;
    let f = fleets
        .apply_status(&syncer, &ApplyOptions::new("syncer"))
        .await?;
    let types: Vec<&str> = f
        .status
        .iter()
        .flat_map(|s| s.conditions.iter().map(|c| c.type_.as_str()))
        .collect();
    ensure_eq!(types, vec!["Ready", "Synced"], "conditions merged by type");
    ensure_eq!(f.spec.size, Some(1), "spec untouched");
    ensure_eq!(
        extract_fleet_status(&f, "ctrl").map_err(extract_failure)?,
        ctrl,
        "ctrl's status"
    );
    ensure_eq!(
        extract_fleet_status(&f, "syncer").map_err(extract_failure)?,
        syncer,
        "syncer's status"
    );
    ensure_eq!(
        extract_fleet(&f, "ctrl").map_err(extract_failure)?,
        FleetApplyConfiguration::new("f", &ns),
        "ctrl owns nothing of the main resource"
    );
    Ok(())
}

type ScenarioFn = for<'a> fn(&'a Env) -> BoxFuture<'a, Outcome>;

/// One scenario.
pub struct Scenario {
    /// Its name (the function's).
    pub name: &'static str,
    run: ScenarioFn,
}

impl Scenario {
    /// Runs it.
    pub fn run<'a>(&self, env: &'a Env) -> BoxFuture<'a, Outcome> {
        (self.run)(env)
    }
}

macro_rules! scenario {
    ($name:ident) => {
        Scenario {
            name: stringify!($name),
            run: |env| Box::pin($name(env)),
        }
    };
}

/// Every scenario, in run order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        scenario!(crd_two_managers),
        scenario!(crd_conflicts_and_force),
        scenario!(conflict_messages),
        scenario!(crd_list_map_merge),
        scenario!(crd_list_map_order),
        scenario!(crd_atomic_map),
        scenario!(crd_status_subresource),
        scenario!(extract_modify_apply),
        scenario!(builtin_deployment),
        scenario!(builtin_configmap),
        scenario!(typed_two_managers),
        scenario!(typed_status),
    ]
}

/// Runs the scenario `name` on a fresh environment over `client` (for per-scenario tests).
pub async fn run_one(client: Client, name: &str) -> Outcome {
    let env = Env::setup(client).await?;
    let s = scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Failure::new(format!("no scenario {name}")))?;
    s.run(&env).await
}

/// Where the real server's captures are kept: the runtime's extract unit tests read them.
pub fn captures_path() -> std::path::PathBuf {
    crate::apiserver::repo_root().join("codegen-runtime/testdata/managed-fields.json")
}
