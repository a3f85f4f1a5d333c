//! Request shapes of the built-in clientset (`kube_codegen_kubernetes`): every hand-written
//! expansion (pod logs and log streams, eviction, binding), the tag-generated ones
//! (service-account tokens, scale), a sample of generated verbs across groups and scopes, and
//! the per-group-version REST client send the HTTP method, path, query and body client-go's
//! would, checked against a recording mock under `kube::Client` (`tests::request_mock`).

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, ObjectMeta};
use kube::api::{
    ListParams, LogParams, ObjectList, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube_codegen_kubernetes::Clientset;
use kube_codegen_kubernetes::expansion::core_v1;
use kube_codegen_runtime::rest::RestClient;
use serde_json::{Value, json};
use tests::request_mock::mock;

fn status_ok() -> String {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
        .to_string()
}

#[tokio::test]
async fn pod_logs_send_the_log_options_as_query() {
    let (client, seen) = mock(|_| "line 1\nline 2\n".to_string());
    let text = core_v1::get_logs(
        &client,
        "ns1",
        "web-0",
        &LogParams {
            container: Some("app".into()),
            follow: false,
            limit_bytes: Some(4096),
            previous: true,
            since_seconds: Some(300),
            tail_lines: Some(20),
            timestamps: true,
            ..LogParams::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, "line 1\nline 2\n");
    let s = seen.last();
    assert_eq!(s.method, "GET");
    assert_eq!(s.path, "/api/v1/namespaces/ns1/pods/web-0/log");
    assert_eq!(
        s.query(),
        [
            ("container", "app"),
            ("limitBytes", "4096"),
            ("previous", "true"),
            ("sinceSeconds", "300"),
            ("tailLines", "20"),
            ("timestamps", "true"),
        ]
    );
    assert!(s.body.is_none());

    // A followed stream reads line by line.
    let stream = core_v1::stream_logs(
        &client,
        "ns1",
        "web-0",
        &LogParams {
            follow: true,
            since_time: Some(
                "2026-01-02T03:04:05Z"
                    .parse()
                    .unwrap_or_else(|e| panic!("{e}")),
            ),
            ..LogParams::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<String> = stream
        .lines()
        .map(|l| l.unwrap_or_else(|e| panic!("{e}")))
        .collect()
        .await;
    assert_eq!(lines, ["line 1", "line 2"]);
    let s = seen.last();
    assert_eq!(s.path, "/api/v1/namespaces/ns1/pods/web-0/log");
    assert_eq!(
        s.query(),
        [("follow", "true"), ("sinceTime", "2026-01-02T03:04:05Z")]
    );
}

#[tokio::test]
async fn evict_posts_a_policy_v1_eviction() {
    let (client, seen) = mock(|_| status_ok());
    let eviction = Eviction {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            namespace: Some("ns1".into()),
            ..ObjectMeta::default()
        },
        delete_options: Some(DeleteOptions {
            grace_period_seconds: Some(0),
            ..DeleteOptions::default()
        }),
    };
    let st = core_v1::evict(
        &client,
        "ns1",
        &eviction,
        &PostParams {
            dry_run: true,
            field_manager: None,
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        st.status,
        Some(kube::core::response::StatusSummary::Success)
    );
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("POST", "/api/v1/namespaces/ns1/pods/web-0/eviction")
    );
    assert_eq!(s.query(), [("dryRun", "All")]);
    assert_eq!(s.content_type.as_deref(), Some("application/json"));
    assert_eq!(
        s.body,
        Some(json!({
            "apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": "web-0", "namespace": "ns1"},
            "deleteOptions": {"gracePeriodSeconds": 0}
        }))
    );
    // No name: refused before sending.
    let before = seen.all().len();
    let err = core_v1::evict(&client, "ns1", &Eviction::default(), &PostParams::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the eviction has no metadata.name"),
        "{err}"
    );
    assert_eq!(seen.all().len(), before);
}

#[tokio::test]
async fn bind_posts_a_binding() {
    let (client, seen) = mock(|_| status_ok());
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some("node-1".into()),
            ..ObjectReference::default()
        },
    };
    core_v1::bind(
        &client,
        "ns1",
        &binding,
        &PostParams {
            dry_run: false,
            field_manager: Some("scheduler".into()),
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("POST", "/api/v1/namespaces/ns1/pods/web-0/binding")
    );
    assert_eq!(s.query(), [("fieldManager", "scheduler")]);
    assert_eq!(
        s.body,
        Some(json!({
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "web-0"},
            "target": {"kind": "Node", "name": "node-1"}
        }))
    );
}

#[tokio::test]
async fn create_token_from_the_tags_posts_a_token_request() {
    let (client, seen) = mock(|_| {
        json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "metadata": {"name": "builder"},
            "spec": {"audiences": ["api"], "expirationSeconds": 600},
            "status": {"token": "abc", "expirationTimestamp": "2026-01-01T00:10:00Z"}
        })
        .to_string()
    });
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            audiences: Some(vec!["api".into()]),
            expiration_seconds: Some(600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let got = Clientset::new(client)
        .core_v1()
        .service_accounts("ns1")
        .create_token("builder", &request, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.status.and_then(|s| s.token).as_deref(), Some("abc"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        (
            "POST",
            "/api/v1/namespaces/ns1/serviceaccounts/builder/token"
        )
    );
    assert!(s.query.is_empty());
    assert_eq!(
        s.body,
        Some(json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "metadata": {},
            "spec": {"audiences": ["api"], "expirationSeconds": 600}
        }))
    );
}

#[tokio::test]
async fn rest_client_builds_client_go_requests() {
    let (client, seen) = mock(|s| {
        if s.query.contains_key("watch") {
            format!(
                "{}\n",
                json!({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w", "resourceVersion": "8"}}})
            )
        } else if s.path.ends_with("/pods") {
            json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": [
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"}}
            ]})
            .to_string()
        } else {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}})
                .to_string()
        }
    });

    // The seed's RESTClient example: pods in `default`, a page of 100.
    let core = RestClient::new(client.clone(), "", "v1");
    let pods: ObjectList<Pod> = core
        .get()
        .namespace("default")
        .resource("pods")
        .list_params(&ListParams::default().limit(100).labels("app=web"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pods.items.len(), 1);
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", "/api/v1/namespaces/default/pods")
    );
    assert_eq!(s.query(), [("labelSelector", "app=web"), ("limit", "100")]);

    // A watch through the REST client.
    let mut events = core
        .get()
        .resource("pods")
        .watch_params(&WatchParams::default().timeout(30), "7")
        .watch::<Pod>()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    match events.next().await {
        Some(Ok(WatchEvent::Added(p))) => assert_eq!(p.metadata.name.as_deref(), Some("w")),
        other => panic!("{other:?}"),
    }
    let s = seen.last();
    assert_eq!(s.path, "/api/v1/pods");
    assert_eq!(
        s.query(),
        [
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", "7"),
            ("timeoutSeconds", "30"),
            ("watch", "true")
        ]
    );

    // A merge patch of a subresource in another group, with a body and its content type.
    let apps = RestClient::new(client.clone(), "apps", "v1");
    let _: Value = apps
        .patch()
        .namespace("ns1")
        .resource("deployments")
        .name("web")
        .sub_resource("scale")
        .param("fieldManager", "me")
        .patch_body(&Patch::Merge(json!({"spec": {"replicas": 3}})))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/ns1/deployments/web/scale"
        )
    );
    assert_eq!(s.query(), [("fieldManager", "me")]);
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(s.body, Some(json!({"spec": {"replicas": 3}})));

    // Apply patches carry their own content type; PUT and POST carry JSON.
    let _: Value = apps
        .patch()
        .namespace("ns1")
        .resource("deployments")
        .name("web")
        .param("fieldManager", "me")
        .patch_body(&Patch::Apply(
            json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
        ))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        seen.last().content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    let _: Value = apps
        .put()
        .namespace("ns1")
        .resource("deployments")
        .name("web")
        .body(&json!({"metadata": {"name": "web"}}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.content_type.as_deref()),
        ("PUT", Some("application/json"))
    );

    // An absolute path, a suffix, a delete.
    let _: Value = core
        .get()
        .abs_path("/apis/apps/v1")
        .suffix(&["deployments"])
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen.last().path, "/apis/apps/v1/deployments");
    let _ = apps
        .delete()
        .namespace("ns1")
        .resource("deployments")
        .name("web")
        .param("propagationPolicy", "Foreground")
        .send_status::<Value>()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("DELETE", "/apis/apps/v1/namespaces/ns1/deployments/web")
    );
    assert_eq!(s.query(), [("propagationPolicy", "Foreground")]);

    // Bad segments are refused before anything is sent.
    let before = seen.all().len();
    for (req, message) in [
        (
            core.get().namespace("a/b").resource("pods"),
            r#"invalid namespace "a/b": may not contain '/'"#,
        ),
        (
            core.get().resource("pods").name(".."),
            r#"invalid name "..": may not be '..'"#,
        ),
        (
            core.get().resource("pods").name(""),
            "resource name may not be empty",
        ),
        (core.get().name("x"), "a name needs a resource"),
    ] {
        let err = req.send::<Value>().await.unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }
    assert_eq!(seen.all().len(), before);
}

#[tokio::test]
async fn pod_client_methods_are_the_expansions_in_its_namespace() {
    let (client, seen) = mock(|s| {
        if s.path.ends_with("/log") {
            "hello\n".into()
        } else {
            status_ok()
        }
    });
    let cs = Clientset::new(client);
    let pods = cs.core_v1().pods("ns2");
    let logs = pods
        .get_logs(
            "web-0",
            &LogParams {
                tail_lines: Some(1),
                ..LogParams::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(logs, "hello\n");
    let s = seen.last();
    assert_eq!(s.path, "/api/v1/namespaces/ns2/pods/web-0/log");
    assert_eq!(s.query(), [("tailLines", "1")]);

    let eviction = Eviction {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            ..ObjectMeta::default()
        },
        ..Eviction::default()
    };
    pods.evict(&eviction, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        seen.last().path,
        "/api/v1/namespaces/ns2/pods/web-0/eviction"
    );
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some("n1".into()),
            ..ObjectReference::default()
        },
    };
    pods.bind(&binding, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        seen.last().path,
        "/api/v1/namespaces/ns2/pods/web-0/binding"
    );

    // policy/v1 Evictions take the namespace from the eviction (client-go's EvictionExpansion).
    let in_ns3 = Eviction {
        metadata: ObjectMeta {
            name: Some("api-1".into()),
            namespace: Some("ns3".into()),
            ..ObjectMeta::default()
        },
        ..Eviction::default()
    };
    cs.policy_v1()
        .evictions("ignored")
        .evict(&in_ns3, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("POST", "/api/v1/namespaces/ns3/pods/api-1/eviction")
    );

    // Across all namespaces a pod expansion has no namespace to go to: refused before sending.
    let before = seen.all().len();
    let err = cs
        .core_v1()
        .pods("")
        .get_logs("web-0", &LogParams::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("needs a namespace"), "{err}");
    assert_eq!(seen.all().len(), before);
}

/// A sample of generated verbs: namespaced and cluster-scoped kinds of several groups, the
/// status and scale subresources, server-side apply, deletecollection, and `rest_client()`.
#[tokio::test]
async fn generated_verbs_send_client_go_requests() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec};
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_openapi::api::core::v1::{ConfigMap, Node};
    use kube::api::{DeleteParams, GetParams};

    let (client, seen) = mock(|s| {
        let kind = if s.path.contains("/scale") {
            "Scale"
        } else if s.path.contains("deployments") {
            "Deployment"
        } else if s.path.contains("leases") {
            "Lease"
        } else if s.path.contains("nodes") {
            "Node"
        } else if s.path.contains("namespaces/") && s.path.contains("configmaps") {
            "ConfigMap"
        } else {
            "Namespace"
        };
        let av = match kind {
            "Scale" => "autoscaling/v1",
            "Deployment" => "apps/v1",
            "Lease" => "coordination.k8s.io/v1",
            _ => "v1",
        };
        if s.method == "GET" && (s.path.ends_with("configmaps") || s.path.ends_with("deployments"))
            || s.method == "DELETE" && s.path.ends_with("configmaps")
        {
            json!({"apiVersion": av, "kind": format!("{kind}List"), "metadata": {"resourceVersion": "5"}, "items": []})
                .to_string()
        } else {
            json!({"apiVersion": av, "kind": kind, "metadata": {"name": "x", "resourceVersion": "5"}})
                .to_string()
        }
    });
    let cs = Clientset::new(client);

    // core/v1 config maps: create with dry run, list across namespaces, deletecollection.
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("x".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    cs.core_v1()
        .config_maps("ns1")
        .create(
            &cm,
            &PostParams {
                dry_run: true,
                field_manager: Some("me".into()),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("POST", "/api/v1/namespaces/ns1/configmaps")
    );
    assert_eq!(s.query(), [("dryRun", "All"), ("fieldManager", "me")]);
    assert_eq!(
        s.body,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}))
    );
    let list = cs
        .core_v1()
        .config_maps("")
        .list(&ListParams::default().labels("app=web").limit(10))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(list.items.is_empty());
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", "/api/v1/configmaps")
    );
    assert_eq!(s.query(), [("labelSelector", "app=web"), ("limit", "10")]);
    cs.core_v1()
        .config_maps("ns1")
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("app=web"),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("DELETE", "/api/v1/namespaces/ns1/configmaps")
    );
    assert_eq!(s.query(), [("labelSelector", "app=web")]);

    // core/v1 namespaces: cluster-scoped, no deletecollection (skipVerbs); delete.
    cs.core_v1()
        .namespaces()
        .delete("ns1", &DeleteParams::foreground())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("DELETE", "/api/v1/namespaces/ns1")
    );
    assert_eq!(s.body, Some(json!({"propagationPolicy": "Foreground"})));

    // core/v1 nodes: update_status (PUT …/status).
    let node = Node {
        metadata: ObjectMeta {
            name: Some("n1".into()),
            resource_version: Some("4".into()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    };
    cs.core_v1()
        .nodes()
        .update_status(&node, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", "/api/v1/nodes/n1/status")
    );
    assert_eq!(s.body.as_ref().map(|b| &b["kind"]), Some(&json!("Node")));

    // apps/v1 deployments: get, get_scale, update_scale.
    let deployments = cs.apps_v1().deployments("ns1");
    let _: Deployment = deployments
        .get("web", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        seen.last().path,
        "/apis/apps/v1/namespaces/ns1/deployments/web"
    );
    let _: Scale = deployments
        .get_scale("web", &GetParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", "/apis/apps/v1/namespaces/ns1/deployments/web/scale")
    );
    let scale = Scale {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..ObjectMeta::default()
        },
        spec: Some(ScaleSpec { replicas: Some(3) }),
        status: None,
    };
    let _: Scale = deployments
        .update_scale("web", &scale, &PostParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", "/apis/apps/v1/namespaces/ns1/deployments/web/scale")
    );
    assert_eq!(
        s.body,
        Some(
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 3}})
        )
    );

    // coordination.k8s.io/v1 leases: server-side apply through `patch` (built-in kinds have no
    // generated apply configurations, so no typed `apply` verb, as client-gen without
    // `--apply-configuration-package`).
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some("leader".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("me".into()),
            ..LeaseSpec::default()
        }),
    };
    cs.coordination_v1()
        .leases("ns1")
        .patch(
            "leader",
            &kube::api::Patch::Apply(&lease),
            &PatchParams::apply("me").force(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = seen.last();
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        (
            "PATCH",
            "/apis/coordination.k8s.io/v1/namespaces/ns1/leases/leader"
        )
    );
    assert_eq!(s.query(), [("fieldManager", "me"), ("force", "true")]);
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(
        s.body,
        Some(
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "leader"}, "spec": {"holderIdentity": "me"}})
        )
    );

    // rest_client() of a group-version is rooted at its path.
    assert_eq!(cs.core_v1().rest_client().base_path(), "/api/v1");
    assert_eq!(cs.apps_v1().rest_client().base_path(), "/apis/apps/v1");
    assert_eq!(
        cs.flowcontrol_v1().rest_client().base_path(),
        "/apis/flowcontrol.apiserver.k8s.io/v1"
    );
}
