//! Garbage collection and namespace deletion scenarios, run the same way against the
//! in-memory server with its controllers on and against kube-apiserver + kube-controller-manager
//! (`garbage-collector-controller`, `namespace-controller`). Each scenario writes through a
//! `kube::Client`, waits (polling, with a generous deadline) for the state the controllers
//! should reach, and records a transcript normalised as the conformance suite normalises
//! answers: which objects exist, their finalizers, owner references by name, phases and
//! conditions by type, status and reason, errors by code, reason and message — never uids,
//! timestamps, resourceVersions or the run's name prefix. `tests/tests/controllers_real.rs` compares the two
//! transcripts; timings are printed, not asserted.

use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Client, Error};
use serde_json::{Value, json};

/// The CRD the custom-resource scenario uses (install it, established, before the
/// controllers start, so that the real garbage collector watches its kind from the start).
pub fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.gc.example.com"},
        "spec": {
            "group": "gc.example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    })
}

/// A scenario's transcript and how long its controllers took.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The scenario's name.
    pub name: &'static str,
    /// Normalised answers and states, in order.
    pub transcript: Vec<Value>,
    /// Wall time spent waiting for the controllers.
    pub waited: Duration,
}

/// The scenarios' names, in the order [`run_all`] runs them.
pub const SCENARIOS: &[&str] = &[
    "background",
    "foreground",
    "orphan",
    "dangling",
    "some-owners-left",
    "cross-namespace",
    "custom-resource",
    "namespace",
];

struct Run {
    client: Client,
    prefix: String,
    deadline: Duration,
    waited: Duration,
    transcript: Vec<Value>,
}

fn ar(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn configmaps() -> ApiResource {
    ar("v1", "ConfigMap", "configmaps")
}

fn error_of(e: &Error) -> Value {
    match e {
        Error::Api(s) => json!({"code": s.code, "reason": s.reason, "message": s.message}),
        other => json!({"error": other.to_string()}),
    }
}

/// An object's normalised state (or `null` when it does not exist).
fn state_of(obj: Option<&DynamicObject>) -> Value {
    let Some(o) = obj else { return Value::Null };
    let m = &o.metadata;
    let owners: Vec<&str> = m
        .owner_references
        .iter()
        .flatten()
        .map(|r| r.name.as_str())
        .collect();
    let mut out = json!({
        "deleting": m.deletion_timestamp.is_some(),
        "finalizers": m.finalizers.clone().unwrap_or_default(),
        "owners": owners,
    });
    if let Some(phase) = o.data.pointer("/status/phase") {
        out["phase"] = phase.clone();
    }
    if let Some(f) = o.data.pointer("/spec/finalizers") {
        out["specFinalizers"] = f.clone();
    }
    if let Some(Value::Array(conds)) = o.data.pointer("/status/conditions") {
        out["conditions"] = conds
            .iter()
            .map(|c| json!([c["type"], c["status"], c["reason"], c["message"]]))
            .collect();
    }
    out
}

impl Run {
    fn api(&self, res: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, res),
            None => Api::all_with(self.client.clone(), res),
        }
    }

    fn ns(&self, n: u32) -> String {
        format!("{}-{n}", self.prefix)
    }

    async fn create(
        &mut self,
        res: &ApiResource,
        ns: Option<&str>,
        body: Value,
    ) -> Option<DynamicObject> {
        let obj: DynamicObject = match serde_json::from_value(body) {
            Ok(o) => o,
            Err(e) => {
                self.transcript.push(json!({"bad-body": e.to_string()}));
                return None;
            }
        };
        match self.api(res, ns).create(&PostParams::default(), &obj).await {
            Ok(o) => Some(o),
            Err(e) => {
                self.transcript
                    .push(json!({"create": obj.metadata.name, "error": error_of(&e)}));
                None
            }
        }
    }

    async fn get(&self, res: &ApiResource, ns: Option<&str>, name: &str) -> Option<DynamicObject> {
        self.api(res, ns).get_opt(name).await.ok().flatten()
    }

    /// Deletes and records the answer's normalised form.
    async fn delete(
        &mut self,
        res: &ApiResource,
        ns: Option<&str>,
        name: &str,
        policy: Option<&str>,
    ) {
        let dp = DeleteParams {
            propagation_policy: match policy {
                Some("Foreground") => Some(kube::api::PropagationPolicy::Foreground),
                Some("Orphan") => Some(kube::api::PropagationPolicy::Orphan),
                Some("Background") => Some(kube::api::PropagationPolicy::Background),
                _ => None,
            },
            ..DeleteParams::default()
        };
        let answer = match self.api(res, ns).delete(name, &dp).await {
            Ok(either) => match either {
                either::Either::Left(o) => json!({"deleted": name, "pending": state_of(Some(&o))}),
                either::Either::Right(s) => {
                    json!({"deleted": name, "status": s.status.map(|s| format!("{s:?}"))})
                }
            },
            Err(e) => json!({"deleted": name, "error": error_of(&e)}),
        };
        self.transcript.push(answer);
    }

    /// Waits until `name`'s state satisfies `done` (or the deadline passes) and records it.
    async fn settle(
        &mut self,
        res: &ApiResource,
        ns: Option<&str>,
        name: &str,
        done: impl Fn(&Value) -> bool,
    ) {
        let start = Instant::now();
        let mut state;
        loop {
            state = state_of(self.get(res, ns, name).await.as_ref());
            if done(&state) || start.elapsed() > self.deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.waited += start.elapsed();
        self.transcript
            .push(json!({"object": name, "state": state}));
    }

    /// Records `name`'s state now.
    async fn record(&mut self, res: &ApiResource, ns: Option<&str>, name: &str) {
        let state = state_of(self.get(res, ns, name).await.as_ref());
        self.transcript
            .push(json!({"object": name, "state": state}));
    }

    async fn remove_finalizers(&mut self, res: &ApiResource, ns: Option<&str>, name: &str) {
        let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
        if let Err(e) = self
            .api(res, ns)
            .patch(name, &PatchParams::default(), &patch)
            .await
        {
            self.transcript
                .push(json!({"unfinalize": name, "error": error_of(&e)}));
        }
    }

    async fn namespace(&mut self, name: &str) {
        let nss = ar("v1", "Namespace", "namespaces");
        self.create(
            &nss,
            None,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        )
        .await;
    }
}

fn gone(s: &Value) -> bool {
    s.is_null()
}

fn cm(name: &str, owners: Value, finalizers: &[&str]) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "ownerReferences": owners, "finalizers": finalizers},
    })
}

fn owner_ref(o: &DynamicObject, kind: &str, api_version: &str, block: bool) -> Value {
    json!({
        "apiVersion": api_version, "kind": kind,
        "name": o.metadata.name, "uid": o.metadata.uid, "blockOwnerDeletion": block,
    })
}

/// Runs every scenario with namespaces named `<prefix>-<n>` (the prefix must be a DNS label
/// prefix unique to the run), waiting at most `deadline` for each state.
pub async fn run_all(client: Client, prefix: &str, deadline: Duration) -> Vec<Outcome> {
    let mut out = Vec::new();
    for (i, name) in SCENARIOS.iter().enumerate() {
        let mut run = Run {
            client: client.clone(),
            prefix: format!("{prefix}-{i}"),
            deadline,
            waited: Duration::ZERO,
            transcript: Vec::new(),
        };
        match *name {
            "background" => background(&mut run).await,
            "foreground" => foreground(&mut run).await,
            "orphan" => orphan(&mut run).await,
            "dangling" => dangling(&mut run).await,
            "some-owners-left" => some_owners_left(&mut run).await,
            "cross-namespace" => cross_namespace(&mut run).await,
            "custom-resource" => custom_resource(&mut run).await,
            _ => namespace(&mut run).await,
        }
        // Names made from the run's prefix read the same on both servers.
        let transcript = run
            .transcript
            .into_iter()
            .map(|v| {
                let text = v.to_string().replace(prefix, "<run>");
                serde_json::from_str(&text).unwrap_or(v)
            })
            .collect();
        out.push(Outcome {
            name,
            transcript,
            waited: run.waited,
        });
    }
    out
}

async fn background(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let cms = configmaps();
    let Some(owner) = r.create(&cms, Some(&ns), cm("owner", json!([]), &[])).await else {
        return;
    };
    let refs = json!([owner_ref(&owner, "ConfigMap", "v1", false)]);
    let Some(child) = r.create(&cms, Some(&ns), cm("child", refs, &[])).await else {
        return;
    };
    let refs = json!([owner_ref(&child, "ConfigMap", "v1", false)]);
    r.create(&cms, Some(&ns), cm("grandchild", refs, &[])).await;
    r.delete(&cms, Some(&ns), "owner", None).await;
    r.settle(&cms, Some(&ns), "child", gone).await;
    r.settle(&cms, Some(&ns), "grandchild", gone).await;
}

async fn foreground(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let cms = configmaps();
    let Some(owner) = r.create(&cms, Some(&ns), cm("owner", json!([]), &[])).await else {
        return;
    };
    let blocking = json!([owner_ref(&owner, "ConfigMap", "v1", true)]);
    let free = json!([owner_ref(&owner, "ConfigMap", "v1", false)]);
    r.create(
        &cms,
        Some(&ns),
        cm("blocker", blocking, &["example.com/hold"]),
    )
    .await;
    r.create(&cms, Some(&ns), cm("free", free, &[])).await;
    r.delete(&cms, Some(&ns), "owner", Some("Foreground")).await;
    r.settle(&cms, Some(&ns), "free", gone).await;
    r.settle(&cms, Some(&ns), "blocker", |s| s["deleting"] == true)
        .await;
    // The owner waits for its blocking dependent.
    r.record(&cms, Some(&ns), "owner").await;
    r.remove_finalizers(&cms, Some(&ns), "blocker").await;
    r.settle(&cms, Some(&ns), "blocker", gone).await;
    r.settle(&cms, Some(&ns), "owner", gone).await;
}

async fn orphan(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let cms = configmaps();
    let Some(owner) = r.create(&cms, Some(&ns), cm("owner", json!([]), &[])).await else {
        return;
    };
    let Some(other) = r.create(&cms, Some(&ns), cm("other", json!([]), &[])).await else {
        return;
    };
    let refs = json!([
        owner_ref(&owner, "ConfigMap", "v1", true),
        owner_ref(&other, "ConfigMap", "v1", false)
    ]);
    r.create(&cms, Some(&ns), cm("child", refs, &[])).await;
    r.delete(&cms, Some(&ns), "owner", Some("Orphan")).await;
    r.settle(&cms, Some(&ns), "owner", gone).await;
    r.settle(&cms, Some(&ns), "child", |s| {
        s["owners"] == json!(["other"])
    })
    .await;
}

async fn dangling(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let cms = configmaps();
    let missing = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "never",
        "uid": "00000000-0000-0000-0000-000000000001"}]);
    r.create(&cms, Some(&ns), cm("orphaned", missing, &[]))
        .await;
    r.create(&cms, Some(&ns), cm("owner", json!([]), &[])).await;
    // A reference to `owner` by name with another uid: the owner counts as absent.
    let stale = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
        "uid": "00000000-0000-0000-0000-000000000002"}]);
    r.create(&cms, Some(&ns), cm("stale", stale, &[])).await;
    r.settle(&cms, Some(&ns), "orphaned", gone).await;
    r.settle(&cms, Some(&ns), "stale", gone).await;
    r.record(&cms, Some(&ns), "owner").await;
}

async fn some_owners_left(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let cms = configmaps();
    let Some(a) = r.create(&cms, Some(&ns), cm("a", json!([]), &[])).await else {
        return;
    };
    let Some(b) = r.create(&cms, Some(&ns), cm("b", json!([]), &[])).await else {
        return;
    };
    let refs = json!([
        owner_ref(&a, "ConfigMap", "v1", false),
        owner_ref(&b, "ConfigMap", "v1", false)
    ]);
    r.create(&cms, Some(&ns), cm("shared", refs, &[])).await;
    r.delete(&cms, Some(&ns), "a", None).await;
    r.settle(&cms, Some(&ns), "shared", |s| s["owners"] == json!(["b"]))
        .await;
    r.delete(&cms, Some(&ns), "b", None).await;
    r.settle(&cms, Some(&ns), "shared", gone).await;
}

async fn cross_namespace(r: &mut Run) {
    let (ns1, ns2) = (r.ns(0), r.ns(1));
    r.namespace(&ns1).await;
    r.namespace(&ns2).await;
    let cms = configmaps();
    let nodes = ar("v1", "Node", "nodes");
    let Some(owner) = r
        .create(&cms, Some(&ns1), cm("owner", json!([]), &[]))
        .await
    else {
        return;
    };
    // A namespaced owner is looked up in the dependent's namespace: absent there.
    let refs = json!([owner_ref(&owner, "ConfigMap", "v1", false)]);
    r.create(&cms, Some(&ns2), cm("elsewhere", refs.clone(), &[]))
        .await;
    // A cluster-scoped dependent naming a namespaced owner: left alone.
    let role = format!("{}-dependent", r.prefix);
    r.create(
        &nodes,
        None,
        json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": role, "ownerReferences": refs}}),
    )
    .await;
    // A cluster-scoped owner of a namespaced dependent.
    let owner_role = format!("{}-owner", r.prefix);
    let Some(cluster_owner) = r
        .create(
            &nodes,
            None,
            json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": owner_role}}),
        )
        .await
    else {
        return;
    };
    let refs = json!([owner_ref(&cluster_owner, "Node", "v1", false)]);
    r.create(&cms, Some(&ns2), cm("of-cluster", refs, &[]))
        .await;
    r.settle(&cms, Some(&ns2), "elsewhere", gone).await;
    r.record(&cms, Some(&ns1), "owner").await;
    r.record(&cms, Some(&ns2), "of-cluster").await;
    r.delete(&nodes, None, &owner_role, None).await;
    r.settle(&cms, Some(&ns2), "of-cluster", gone).await;
    // The invalid cluster-scoped dependent is still there (after the others settled).
    let role_state = state_of(r.get(&nodes, None, &role).await.as_ref());
    r.transcript
        .push(json!({"object": "cluster-scoped dependent", "state": role_state}));
    r.delete(&nodes, None, &role, None).await;
}

async fn custom_resource(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let gadgets = ar("gc.example.com/v1", "Gadget", "gadgets");
    let cms = configmaps();
    let Some(owner) = r
        .create(
            &gadgets,
            Some(&ns),
            json!({"apiVersion": "gc.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "owner"}, "spec": {"size": 1}}),
        )
        .await
    else {
        return;
    };
    let refs = json!([owner_ref(&owner, "Gadget", "gc.example.com/v1", true)]);
    r.create(&cms, Some(&ns), cm("of-gadget", refs.clone(), &[]))
        .await;
    let Some(cmo) = r
        .create(&cms, Some(&ns), cm("cm-owner", json!([]), &[]))
        .await
    else {
        return;
    };
    let refs = json!([owner_ref(&cmo, "ConfigMap", "v1", false)]);
    r.create(
        &gadgets,
        Some(&ns),
        json!({"apiVersion": "gc.example.com/v1", "kind": "Gadget",
        "metadata": {"name": "of-cm", "ownerReferences": refs}}),
    )
    .await;
    r.delete(&gadgets, Some(&ns), "owner", Some("Foreground"))
        .await;
    r.settle(&cms, Some(&ns), "of-gadget", gone).await;
    r.settle(&gadgets, Some(&ns), "owner", gone).await;
    r.delete(&cms, Some(&ns), "cm-owner", None).await;
    r.settle(&gadgets, Some(&ns), "of-cm", gone).await;
}

async fn namespace(r: &mut Run) {
    let ns = r.ns(0);
    r.namespace(&ns).await;
    let cms = configmaps();
    let nss = ar("v1", "Namespace", "namespaces");
    r.create(&cms, Some(&ns), cm("plain", json!([]), &[])).await;
    r.create(
        &cms,
        Some(&ns),
        cm("held", json!([]), &["example.com/hold"]),
    )
    .await;
    r.delete(&nss, None, &ns, None).await;
    // New content is refused while it terminates.
    r.create(&cms, Some(&ns), cm("late", json!([]), &[])).await;
    r.settle(&cms, Some(&ns), "plain", gone).await;
    r.settle(&nss, None, &ns, |s| {
        s["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c[0] == "NamespaceFinalizersRemaining" && c[1] == "True")
        })
    })
    .await;
    r.record(&cms, Some(&ns), "held").await;
    r.remove_finalizers(&cms, Some(&ns), "held").await;
    r.settle(&cms, Some(&ns), "held", gone).await;
    r.settle(&nss, None, &ns, gone).await;
}
