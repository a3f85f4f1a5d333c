//! Every verb of the generated typed clients sends the HTTP method, path, query and body that
//! client-go's would: checked against a recording mock `tower` service under `kube::Client`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::TryStreamExt;
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::autoscaling::v1::{Scale, ScaleSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube_codegen_runtime::ApplyOptions;
use serde_json::{Value, json};

use tests::fixtures::{apiserver, crd, multiversion, verbs};

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    content_type: Option<String>,
    body: Option<Value>,
}

type Responder = Arc<dyn Fn(&Seen) -> String + Send + Sync>;

/// A `kube::Client` over a mock service that records requests and answers with `respond`.
fn mock(
    respond: impl Fn(&Seen) -> String + Send + Sync + 'static,
) -> (kube::Client, Arc<Mutex<Vec<Seen>>>) {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let respond: Responder = Arc::new(respond);
    let log = seen.clone();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let log = log.clone();
        let respond = respond.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let query = parts
                .uri
                .query()
                .unwrap_or_default()
                .split('&')
                .filter(|kv| !kv.is_empty())
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    (k.to_string(), v.replace("%3D", "=").replace("%2C", ","))
                })
                .collect();
            let seen = Seen {
                method: parts.method.to_string(),
                path: parts.uri.path().to_string(),
                query,
                content_type: parts
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from),
                body: serde_json::from_slice(&bytes).ok(),
            };
            let answer = respond(&seen);
            log.lock().unwrap().push(seen);
            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(answer))))
        }
    });
    (kube::Client::new(svc, "default"), seen)
}

fn object(api_version: &str, kind: &str, name: &str) -> String {
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": "ns1", "resourceVersion": "7"},
        "spec": {"replicas": 3},
        "status": {"ready": true},
    })
    .to_string()
}

/// The query as sorted `(key, value)` pairs, to assert it whole.
fn query(s: &Seen) -> Vec<(&str, &str)> {
    s.query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

fn last(seen: &Arc<Mutex<Vec<Seen>>>) -> Seen {
    seen.lock()
        .unwrap()
        .last()
        .cloned()
        .expect("a request was sent")
}

const EX: &str = "/apis/example.crd.code-generator.k8s.io/v1";
const EX_AV: &str = "example.crd.code-generator.k8s.io/v1";

fn test_type(name: &str) -> crd::apis::example::v1::TestType {
    crd::apis::example::v1::TestType {
        metadata: ObjectMeta {
            name: Some(name.into()),
            resource_version: Some("7".into()),
            ..ObjectMeta::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn namespaced_verbs_send_client_go_requests() {
    let (client, seen) = mock(|s| {
        if s.path.ends_with("/testtypes") && s.method == "GET"
            || s.method == "DELETE" && !s.path.ends_with("/x")
        {
            json!({"apiVersion": EX_AV, "kind": "TestTypeList", "metadata": {"resourceVersion": "9", "continue": "next"}, "items": [serde_json::from_str::<Value>(&object(EX_AV, "TestType", "a")).unwrap()]}).to_string()
        } else {
            object(EX_AV, "TestType", "x")
        }
    });
    let cs = crd::client::clientset::versioned::Clientset::new(client);
    let tt = cs.example_v1().test_types("ns1");
    let coll = format!("{EX}/namespaces/ns1/testtypes");

    let created = tt
        .create(
            &test_type("x"),
            &PostParams {
                dry_run: true,
                field_manager: Some("me".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, 3);
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("POST", coll.as_str())
    );
    assert_eq!(s.query.get("dryRun").map(String::as_str), Some("All"));
    assert_eq!(s.query.get("fieldManager").map(String::as_str), Some("me"));
    let body = s.body.unwrap();
    assert_eq!(body["apiVersion"], EX_AV, "apiVersion is filled in");
    assert_eq!(body["kind"], "TestType", "kind is filled in");

    tt.update(&test_type("x"), &PostParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", format!("{coll}/x").as_str())
    );
    assert_eq!(query(&s), [], "default options add no query");
    assert_eq!(s.body.unwrap()["metadata"]["resourceVersion"], "7");

    tt.update(
        &test_type("x"),
        &PostParams {
            dry_run: true,
            field_manager: Some("upd".into()),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        query(&last(&seen)),
        [("dryRun", "All"), ("fieldManager", "upd")]
    );

    tt.update_status(
        &test_type("x"),
        &PostParams {
            dry_run: false,
            field_manager: Some("st".into()),
        },
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", format!("{coll}/x/status").as_str())
    );
    assert_eq!(query(&s), [("fieldManager", "st")]);
    let body = s.body.unwrap();
    assert_eq!(
        (body["kind"].as_str(), body["metadata"]["name"].as_str()),
        (Some("TestType"), Some("x")),
        "the whole object goes to /status"
    );

    let err = tt
        .update(&test_type(""), &PostParams::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("metadata.name"), "{err}");

    let got = tt.get("x", &GetParams::default()).await.unwrap();
    assert_eq!(got.metadata.name.as_deref(), Some("x"));
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", format!("{coll}/x").as_str())
    );
    assert_eq!(query(&s), []);
    tt.get("x", &GetParams::any()).await.unwrap();
    assert_eq!(query(&last(&seen)), [("resourceVersion", "0")]);

    let list = tt
        .list(
            &ListParams::default()
                .labels("app=demo")
                .fields("metadata.name=a")
                .limit(5)
                .continue_token("tok"),
        )
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.metadata.continue_.as_deref(), Some("next"));
    let s = last(&seen);
    assert_eq!((s.method.as_str(), s.path.as_str()), ("GET", coll.as_str()));
    assert_eq!(
        s.query.get("labelSelector").map(String::as_str),
        Some("app=demo")
    );
    assert_eq!(
        s.query.get("fieldSelector").map(String::as_str),
        Some("metadata.name=a")
    );
    assert_eq!(s.query.get("limit").map(String::as_str), Some("5"));
    assert_eq!(s.query.get("continue").map(String::as_str), Some("tok"));
    assert_eq!(s.query.len(), 4, "{:?}", s.query);

    tt.patch(
        "x",
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
        &PatchParams::default(),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", format!("{coll}/x").as_str())
    );
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(query(&s), []);
    assert_eq!(s.body.unwrap(), json!({"spec": {"replicas": 4}}));

    tt.patch(
        "x",
        &Patch::Json::<()>(
            serde_json::from_value(json!([{"op": "add", "path": "/spec/replicas", "value": 6}]))
                .unwrap(),
        ),
        &PatchParams {
            dry_run: true,
            field_manager: Some("p".into()),
            ..PatchParams::default()
        },
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/json-patch+json")
    );
    assert_eq!(query(&s), [("dryRun", "All"), ("fieldManager", "p")]);

    use tests::fixtures::crd::client::applyconfiguration::example::v1::{
        TestTypeApplyConfiguration, TestTypeSpecApplyConfiguration,
        TestTypeStatusApplyConfiguration,
    };
    tt.apply(
        &TestTypeApplyConfiguration::new("x", "ns1")
            .with_spec(TestTypeSpecApplyConfiguration::default().with_replicas(5)),
        &ApplyOptions::new("mgr").force(),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", format!("{coll}/x").as_str())
    );
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(query(&s), [("fieldManager", "mgr"), ("force", "true")]);
    assert_eq!(
        s.body.unwrap(),
        json!({"apiVersion": EX_AV, "kind": "TestType",
               "metadata": {"name": "x", "namespace": "ns1"}, "spec": {"replicas": 5}}),
        "only what was set"
    );

    tt.apply_status(
        &TestTypeApplyConfiguration::new("x", "ns1")
            .with_status(TestTypeStatusApplyConfiguration::default().with_ready(true)),
        &ApplyOptions::new("mgr"),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", format!("{coll}/x/status").as_str())
    );
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(query(&s), [("fieldManager", "mgr")]);
    assert_eq!(s.body.unwrap()["status"]["ready"], true);

    let deleted = tt
        .delete("x", &DeleteParams::background().grace_period(0))
        .await
        .unwrap();
    assert!(deleted.is_left(), "an object answer is Left");
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("DELETE", format!("{coll}/x").as_str())
    );
    assert_eq!(query(&s), [], "delete options travel in the body");
    let body = s.body.unwrap();
    assert_eq!(body["propagationPolicy"], "Background");
    assert_eq!(body["gracePeriodSeconds"], 0);

    tt.delete("x", &DeleteParams::default().dry_run())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        query(&s),
        [],
        "dryRun too travels in the DeleteOptions body"
    );
    assert_eq!(s.body.unwrap()["dryRun"], json!(["All"]));

    tt.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=demo"),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("DELETE", coll.as_str())
    );
    assert_eq!(query(&s), [("labelSelector", "app=demo")]);

    // The extension `GetClusterTestType,verb=get` reads the object itself.
    tt.get_cluster_test_type("x", &GetParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", format!("{coll}/x").as_str())
    );
}

#[tokio::test]
async fn watch_streams_events_from_a_resource_version() {
    let (client, seen) = mock(|_| {
        let obj: Value = serde_json::from_str(&object(EX_AV, "TestType", "w")).unwrap();
        format!(
            "{}\n{}\n",
            json!({"type": "ADDED", "object": obj}),
            json!({"type": "DELETED", "object": obj})
        )
    });
    let cs = crd::client::clientset::versioned::Clientset::new(client);
    let events: Vec<_> = cs
        .example_v1()
        .test_types("")
        .watch(&WatchParams::default().labels("app=demo").timeout(30), "42")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(
        matches!(events[0], WatchEvent::Added(ref o) if o.metadata.name.as_deref() == Some("w"))
    );
    assert!(matches!(events[1], WatchEvent::Deleted(_)));
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", format!("{EX}/testtypes").as_str()),
        "\"\" = all namespaces"
    );
    assert_eq!(s.query.get("watch").map(String::as_str), Some("true"));
    assert_eq!(
        s.query.get("resourceVersion").map(String::as_str),
        Some("42")
    );
    assert_eq!(
        s.query.get("timeoutSeconds").map(String::as_str),
        Some("30")
    );
    assert_eq!(
        s.query.get("allowWatchBookmarks").map(String::as_str),
        Some("true")
    );
    assert_eq!(
        s.query.get("labelSelector").map(String::as_str),
        Some("app=demo")
    );
}

#[tokio::test]
async fn cluster_scoped_kinds_and_scale_subresource_extensions() {
    let (client, seen) = mock(|s| {
        if s.path.ends_with("/scale") {
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "c"}, "spec": {"replicas": 2}}).to_string()
        } else {
            object(EX_AV, "ClusterTestType", "c")
        }
    });
    let cs = crd::client::clientset::versioned::Clientset::new(client);
    let ctt = cs.example_v1().cluster_test_types();
    ctt.get("c", &GetParams::default()).await.unwrap();
    assert_eq!(
        last(&seen).path,
        format!("{EX}/clustertesttypes/c"),
        "no namespace segment"
    );

    let scale = ctt.get_scale("c", &GetParams::default()).await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("GET", format!("{EX}/clustertesttypes/c/scale").as_str())
    );

    let want = Scale {
        metadata: ObjectMeta {
            name: Some("c".into()),
            ..Default::default()
        },
        spec: Some(ScaleSpec { replicas: Some(5) }),
        status: None,
    };
    ctt.update_scale("c", &want, &PostParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", format!("{EX}/clustertesttypes/c/scale").as_str())
    );
    let body = s.body.unwrap();
    assert_eq!(body["kind"], "Scale", "the input type writes its own kind");
    assert_eq!(body["apiVersion"], "autoscaling/v1");
    assert_eq!(body["spec"]["replicas"], 5);
}

#[tokio::test]
async fn every_extension_form() {
    use crd::apis::extensions::v1::{TestSubresource, TestType};
    const EXT: &str =
        "/apis/extensions.example.crd.code-generator.k8s.io/v1/namespaces/ns1/testtypes";
    let (client, seen) = mock(|s| {
        if s.method == "GET" && s.path.ends_with("/testtypes") {
            json!({"metadata": {}, "items": []}).to_string()
        } else {
            json!({"metadata": {"name": "x"}, "spec": {}, "name": "sub"}).to_string()
        }
    });
    let cs = crd::client::clientset::versioned::Clientset::new(client);
    let c = cs.extensions_example_v1().test_types("ns1");
    let sub = TestSubresource {
        name: "sub".into(),
        ..Default::default()
    };
    let obj = TestType {
        metadata: ObjectMeta {
            name: Some("x".into()),
            ..Default::default()
        },
        ..Default::default()
    };

    let got = c.get_subresource("x", &GetParams::default()).await.unwrap();
    assert_eq!(got.name, "sub");
    assert_eq!(last(&seen).path, format!("{EXT}/x/testsubresource"));

    c.create_subresource("x", &sub, &PostParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("POST", format!("{EXT}/x/subresource").as_str())
    );

    c.update_subresource("x", &sub, &PostParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", format!("{EXT}/x/subresource").as_str())
    );

    use tests::fixtures::crd::client::applyconfiguration::extensions::v1::{
        TestSubresourceApplyConfiguration, TestTypeApplyConfiguration,
    };
    c.apply_subresource(
        "x",
        &TestSubresourceApplyConfiguration::default().with_name("n"),
        &ApplyOptions::new("m"),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", format!("{EXT}/x/subresource").as_str())
    );
    assert_eq!(
        s.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(s.body, Some(json!({"name": "n"})), "only what was set");

    c.get_extended("x", &GetParams::default()).await.unwrap();
    assert_eq!(last(&seen).path, format!("{EXT}/x"));

    let list = c.list_extended(&ListParams::default()).await.unwrap();
    assert!(list.items.is_empty());
    let s = last(&seen);
    assert_eq!((s.method.as_str(), s.path.as_str()), ("GET", EXT));

    c.create_extended(&obj, &PostParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", EXT));
    assert_eq!(
        s.body.unwrap()["kind"],
        "TestType",
        "same-kind input gets its kind"
    );

    c.update_extended(&obj, &PostParams::default())
        .await
        .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PUT", format!("{EXT}/x").as_str())
    );

    c.patch_extended(
        "x",
        &Patch::Merge(json!({"spec": {}})),
        &PatchParams::default(),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", format!("{EXT}/x").as_str())
    );

    c.apply_extended(
        &TestTypeApplyConfiguration::new("x", "ns1"),
        &ApplyOptions::new("m").force(),
    )
    .await
    .unwrap();
    let s = last(&seen);
    assert_eq!(
        (s.method.as_str(), s.path.as_str()),
        ("PATCH", format!("{EXT}/x").as_str())
    );
    assert_eq!(query(&s), [("fieldManager", "m"), ("force", "true")]);
}

#[tokio::test]
async fn core_group_uses_the_legacy_api_path_and_versions_are_separate() {
    let (client, seen) = mock(|_| json!({"metadata": {"name": "x"}, "spec": {}}).to_string());
    let cs = apiserver::client::clientset::versioned::Clientset::new(client.clone());
    cs.core_v1()
        .test_types("ns1")
        .get("x", &GetParams::default())
        .await
        .unwrap();
    assert_eq!(last(&seen).path, "/api/v1/namespaces/ns1/testtypes/x");
    cs.third_example_v1()
        .test_types("ns1")
        .get("x", &GetParams::default())
        .await
        .unwrap();
    assert_eq!(
        last(&seen).path,
        "/apis/example.dots.apiserver.code-generator.k8s.io/v1/namespaces/ns1/testtypes/x"
    );

    let mv = multiversion::client::clientset::versioned::Clientset::new(client.clone());
    mv.multi_v1beta1()
        .widgets("a")
        .get("w", &GetParams::default())
        .await
        .unwrap();
    assert_eq!(
        last(&seen).path,
        "/apis/multi.example.com/v1beta1/namespaces/a/widgets/w"
    );
    mv.multi_v1()
        .gadgets("a")
        .get("g", &GetParams::default())
        .await
        .unwrap();
    assert_eq!(
        last(&seen).path,
        "/apis/multi.example.com/v1/namespaces/a/gadgets/g"
    );

    let v = verbs::client::clientset::versioned::Clientset::new(client);
    v.verbs_v1()
        .readonly_types("a")
        .get("r", &GetParams::default())
        .await
        .unwrap();
    assert_eq!(
        last(&seen).path,
        "/apis/verbs.example.com/v1/namespaces/a/readonlytypes/r"
    );
    // A noVerbs kind keeps only the escape hatch to kube::Api.
    assert_eq!(
        v.verbs_v1().no_verbs_types("a").api().resource_url(),
        "/apis/verbs.example.com/v1/namespaces/a/noverbstypes"
    );
}

#[test]
fn registry_and_resource_impls_follow_the_tags() {
    use kube::Resource;
    use tests::fixtures::naming::apis::naming::v1 as naming;
    assert_eq!(
        naming::NetworkAttachmentDefinition::plural(&()),
        "network-attachment-definitions"
    );
    assert_eq!(
        naming::Endpoints::plural(&()),
        "endpoints",
        "--plural-exceptions"
    );
    assert_eq!(naming::Policy::plural(&()), "policies");
    assert_eq!(naming::Leaf::plural(&()), "leaves");
    assert_eq!(naming::Box::plural(&()), "boxes");
    assert_eq!(naming::Bus::plural(&()), "buses");
    assert_eq!(naming::Gateway::plural(&()), "gateways");
    let kinds: Vec<_> = naming::RESOURCES
        .iter()
        .map(|r| (r.kind, r.plural))
        .collect();
    assert!(kinds.contains(&("DNSEndpoint", "dnsendpoints")));

    use crd::apis::example::v1 as ex;
    assert_eq!(ex::GROUP_NAME, "example.crd.code-generator.k8s.io");
    assert_eq!(ex::SCHEME_GROUP_VERSION.api_version(), EX_AV);
    assert_eq!(
        ex::resource("testtypes").to_string(),
        "testtypes.example.crd.code-generator.k8s.io"
    );
    let ctt = ex::RESOURCES
        .iter()
        .find(|r| r.kind == "ClusterTestType")
        .unwrap();
    assert!(!ctt.namespaced);
    assert_eq!(ctt.subresources, ["status", "scale"]);
    assert_eq!(ex::ClusterTestType::api_version(&()), EX_AV);
    assert_eq!(apiserver::apis::core::v1::API_VERSION, "v1");

    let verbs_res = verbs::apis::verbs::v1::RESOURCES;
    let no_status = verbs_res.iter().find(|r| r.kind == "NoStatusType").unwrap();
    assert!(
        no_status.subresources.is_empty(),
        "+genclient:noStatus drops the status subresource"
    );

    // Generated Clone is a deep copy.
    let p = ex::Phase::Failed("boom".into(), 3);
    assert_eq!(p.clone(), p);
    let w = ex::Wrapper { value: vec![1, 2] };
    assert_eq!(w.clone(), w);
}
