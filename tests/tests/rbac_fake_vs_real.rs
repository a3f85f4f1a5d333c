//! The RBAC kinds (`rbac.authorization.k8s.io/v1` Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings) on the in-memory server and on kube-apiserver v1.37.1: the same raw
//! requests to both, each answer summarised (the object as stored, without its uid, times and
//! resourceVersion; or the refusal's code, reason, message and causes) and the two transcripts
//! compared. Operators create these objects for the workloads they run, so a test suite on the
//! in-memory server needs them served, defaulted and validated as kube-apiserver does: names
//! such as `system:controller:x`, subjects' `apiGroup` by kind, the rules `ValidatePolicyRule`
//! refuses, a binding's `roleRef` that never changes, server-side apply's atomic lists.

use serde_json::{Value, json};
use tests::apiserver::RealApiServer;
use tests::e2e::run_id;
use tests::fake_vs_real::{Answer, refusal_summary, send, transcript_differences};

use kube_codegen_runtime::fake::FakeApiServer;

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

/// An answer as the transcript keeps it: a refusal's summary, or the status and the object
/// without what differs between any two servers (uid, times, resourceVersion, and the run's
/// namespace and names, replaced by placeholders).
fn summary(a: &Answer, run: &str) -> String {
    let normalise = |s: &str| s.replace(run, "RUN");
    if let Some(r) = refusal_summary(a, normalise) {
        return r;
    }
    let mut body = a.body.clone();
    let strip = |o: &mut Value| {
        if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in ["uid", "resourceVersion", "creationTimestamp", "generation"] {
                m.remove(k);
            }
            if let Some(Value::Array(mf)) = m.get_mut("managedFields") {
                for e in mf.iter_mut().filter_map(Value::as_object_mut) {
                    e.remove("time");
                }
            }
        }
        if let Some(d) = o.get_mut("details").and_then(Value::as_object_mut) {
            d.remove("uid");
        }
    };
    if let Some(Value::Array(mut items)) = body.get("items").cloned() {
        items.iter_mut().for_each(strip);
        body = json!({"kind": body["kind"], "items": items});
    } else {
        strip(&mut body);
    }
    format!("{} {}", a.status, normalise(&body.to_string()))
}

/// The steps, sent to one server; returns (step, summary) in order.
async fn transcript(client: kube::Client, run: &str) -> Vec<(String, String)> {
    let ns = format!("rbac-{run}");
    let roles = format!("{RBAC}/namespaces/{ns}/roles");
    let bindings = format!("{RBAC}/namespaces/{ns}/rolebindings");
    let cluster_roles = format!("{RBAC}/clusterroles");
    let cluster_bindings = format!("{RBAC}/clusterrolebindings");
    let json_ct = "application/json";
    let merge = "application/merge-patch+json";
    let strategic = "application/strategic-merge-patch+json";
    let apply = "application/apply-patch+yaml";
    let role = |name: &str, rules: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": name}, "rules": rules})
    };
    let cluster_role = |name: &str, extra: Value| {
        let mut r = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                           "metadata": {"name": name}});
        if let (Some(r), Some(e)) = (r.as_object_mut(), extra.as_object()) {
            r.extend(e.clone());
        }
        r
    };
    let binding = |kind: &str, name: &str, role_ref: Value, subjects: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
               "metadata": {"name": name}, "roleRef": role_ref, "subjects": subjects})
    };
    let reader_rules = json!([{"apiGroups": [""], "resources": ["configmaps"],
                               "verbs": ["get", "list", "watch"]}]);
    let steps: Vec<(&str, &str, String, &str, Option<Value>)> = vec![
        (
            "namespace",
            "POST",
            "/api/v1/namespaces".into(),
            json_ct,
            Some(json!({"metadata": {"name": ns}})),
        ),
        (
            "role",
            "POST",
            roles.clone(),
            json_ct,
            Some(role("reader", reader_rules.clone())),
        ),
        (
            "role with a colon in its name",
            "POST",
            roles.clone(),
            json_ct,
            Some(role("system:reader", reader_rules.clone())),
        ),
        (
            "role named '..'",
            "POST",
            roles.clone(),
            json_ct,
            Some(role("..", reader_rules.clone())),
        ),
        (
            "role named with '%'",
            "POST",
            roles.clone(),
            json_ct,
            Some(role("a%b", reader_rules.clone())),
        ),
        (
            "role whose rules lack verbs, groups and resources",
            "POST",
            roles.clone(),
            json_ct,
            Some(role(
                "bad-rules",
                json!([{"resourceNames": ["x"]}, {"verbs": ["get"]}]),
            )),
        ),
        (
            "role with a non-resource URL",
            "POST",
            roles.clone(),
            json_ct,
            Some(role(
                "urls",
                json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics"],
                        "resources": ["pods"]}]),
            )),
        ),
        (
            "role without rules",
            "POST",
            roles.clone(),
            json_ct,
            Some(role("empty", Value::Null)),
        ),
        (
            "cluster role with non-resource URLs",
            "POST",
            cluster_roles.clone(),
            json_ct,
            Some(cluster_role(
                &format!("system:{run}:metrics"),
                json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]}),
            )),
        ),
        (
            "cluster role mixing URLs and resources",
            "POST",
            cluster_roles.clone(),
            json_ct,
            Some(cluster_role(
                &format!("{run}-mixed"),
                json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"],
                                  "apiGroups": [""]}]}),
            )),
        ),
        (
            "aggregated cluster role",
            "POST",
            cluster_roles.clone(),
            json_ct,
            Some(cluster_role(
                &format!("{run}-aggregate"),
                json!({"aggregationRule": {"clusterRoleSelectors": [
                    {"matchLabels": {"rbac.example.com/aggregate-to": run}}]}}),
            )),
        ),
        (
            "aggregation rule without selectors",
            "POST",
            cluster_roles.clone(),
            json_ct,
            Some(cluster_role(
                &format!("{run}-no-selectors"),
                json!({"aggregationRule": {}}),
            )),
        ),
        (
            "role binding: groups defaulted",
            "POST",
            bindings.clone(),
            json_ct,
            Some(binding(
                "RoleBinding",
                "readers",
                json!({"kind": "Role", "name": "reader"}),
                json!([{"kind": "ServiceAccount", "name": "default"},
                       {"kind": "User", "name": "jane@example.com"},
                       {"kind": "Group", "name": "system:authenticated"}]),
            )),
        ),
        (
            "role binding of a cluster role",
            "POST",
            bindings.clone(),
            json_ct,
            Some(binding(
                "RoleBinding",
                "view",
                json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                       "name": "view"}),
                json!([{"kind": "ServiceAccount", "name": "builder", "namespace": "other"}]),
            )),
        ),
        (
            "role binding: bad role reference and subjects",
            "POST",
            bindings.clone(),
            json_ct,
            Some(binding(
                "RoleBinding",
                "bad",
                json!({"apiGroup": "example.com", "kind": "Robot", "name": "a/b"}),
                json!([{"kind": "Robot", "name": ""},
                       {"kind": "ServiceAccount", "name": "Not_Valid", "apiGroup": "v1"},
                       {"kind": "User", "name": "u", "apiGroup": "example.com"},
                       {"kind": "Group", "name": ""}]),
            )),
        ),
        (
            "role binding without a role reference",
            "POST",
            bindings.clone(),
            json_ct,
            Some(json!({"metadata": {"name": "noref"},
                        "subjects": [{"kind": "Robot", "name": "x"}]})),
        ),
        (
            "role binding: roleRef changed by a merge patch",
            "PATCH",
            format!("{bindings}/readers"),
            merge,
            Some(json!({"roleRef": {"name": "other"}})),
        ),
        (
            "role binding: a subject added by a strategic merge patch",
            "PATCH",
            format!("{bindings}/readers"),
            strategic,
            Some(json!({"subjects": [{"kind": "User", "name": "joe"}]})),
        ),
        (
            "role: rules replaced by a strategic merge patch",
            "PATCH",
            format!("{roles}/reader"),
            strategic,
            Some(
                json!({"rules": [{"apiGroups": ["apps"], "resources": ["deployments"],
                                   "verbs": ["get"]}]}),
            ),
        ),
        (
            "role: applied by a second manager",
            "PATCH",
            format!("{roles}/applied?fieldManager=ops"),
            apply,
            Some(role("applied", reader_rules.clone())),
        ),
        (
            "role: applied again with another rule",
            "PATCH",
            format!("{roles}/applied?fieldManager=ops"),
            apply,
            Some(role(
                "applied",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
            )),
        ),
        (
            "cluster role binding: a service account without a namespace",
            "POST",
            cluster_bindings.clone(),
            json_ct,
            Some(binding(
                "ClusterRoleBinding",
                &format!("{run}-nons"),
                json!({"kind": "ClusterRole", "name": "view"}),
                json!([{"kind": "ServiceAccount", "name": "default"}]),
            )),
        ),
        (
            "cluster role binding of a Role",
            "POST",
            cluster_bindings.clone(),
            json_ct,
            Some(binding(
                "ClusterRoleBinding",
                &format!("{run}-role"),
                json!({"kind": "Role", "name": "reader"}),
                json!([]),
            )),
        ),
        (
            "cluster role binding",
            "POST",
            cluster_bindings.clone(),
            json_ct,
            Some(binding(
                "ClusterRoleBinding",
                &format!("system:{run}:metrics"),
                json!({"kind": "ClusterRole", "name": format!("system:{run}:metrics")}),
                json!([{"kind": "ServiceAccount", "name": "default", "namespace": ns},
                       {"kind": "Group", "name": "system:monitoring"}]),
            )),
        ),
        (
            "cluster role binding: roleRef replaced",
            "PUT",
            format!("{cluster_bindings}/system:{run}:metrics"),
            json_ct,
            Some(binding(
                "ClusterRoleBinding",
                &format!("system:{run}:metrics"),
                json!({"kind": "ClusterRole", "name": "view"}),
                json!([]),
            )),
        ),
        ("roles listed", "GET", roles.clone(), json_ct, None),
        (
            "role bindings listed",
            "GET",
            bindings.clone(),
            json_ct,
            None,
        ),
        (
            "cluster role read",
            "GET",
            format!("{cluster_roles}/system:{run}:metrics"),
            json_ct,
            None,
        ),
        (
            "role deleted",
            "DELETE",
            format!("{roles}/system:reader"),
            json_ct,
            None,
        ),
        (
            "cluster role binding deleted",
            "DELETE",
            format!("{cluster_bindings}/system:{run}:metrics"),
            json_ct,
            None,
        ),
    ];
    let mut out = Vec::new();
    for (step, method, path, ct, body) in steps {
        let a = send(&client, method, &path, ct, body)
            .await
            .unwrap_or_else(|e| panic!("{step}: {e}"));
        out.push((step.to_string(), summary(&a, run)));
    }
    out.push(("discovery".into(), discovery(&client).await));
    out
}

/// The group's discovery document: each resource's name, kind, scope, verbs and short names.
async fn discovery(client: &kube::Client) -> String {
    let a = send(client, "GET", RBAC, "application/json", None)
        .await
        .unwrap_or_else(|e| panic!("discovery: {e}"));
    let mut rows: Vec<String> = a.body["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{} {} namespaced={} verbs={} shortNames={}",
                r["name"], r["kind"], r["namespaced"], r["verbs"], r["shortNames"]
            )
        })
        .collect();
    rows.sort();
    format!("{} {}", a.status, rows.join("; "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_kinds_fake_vs_real() {
    let run = format!("r{}", run_id());
    let fake = FakeApiServer::new();
    let fake_t = transcript(fake.client().unwrap_or_else(|e| panic!("{e}")), &run).await;
    let real = RealApiServer::start()
        .await
        .unwrap_or_else(|e| panic!("cannot start kube-apiserver: {e}"));
    let real_t = transcript(real.client().unwrap_or_else(|e| panic!("{e}")), &run).await;
    assert_eq!(fake_t.len(), real_t.len());
    // Checks of our own, so that two servers agreeing on nothing useful cannot pass.
    let step = |t: &[(String, String)], name: &str| {
        t.iter()
            .find(|(s, _)| s == name)
            .map(|(_, a)| a.clone())
            .unwrap_or_default()
    };
    for t in [&fake_t, &real_t] {
        assert!(step(t, "role with a colon in its name").starts_with("201 "));
        assert!(step(t, "role named '..'").starts_with("422 Invalid"));
        assert!(
            step(t, "role binding: groups defaulted")
                .contains("{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"User\"")
        );
        assert!(step(t, "cluster role binding: roleRef replaced").contains("field is immutable"));
    }
    let diffs = transcript_differences(&fake_t, &real_t);
    assert!(
        diffs.is_empty(),
        "the in-memory server differs from kube-apiserver on {} steps:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
