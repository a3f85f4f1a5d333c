//! Scopes, routing errors, CRDs, discovery and built-in resources.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Endpoints, Event as CoreEvent, Namespace, Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

use super::{Env, Failure, Outcome, dynamic, ensure, ensure_eq, expect_error, install_crd};

fn raw(method: &str, path: &str, body: Option<Value>) -> Result<http::Request<Vec<u8>>, Failure> {
    let mut b = http::Request::builder().method(method).uri(path);
    if body.is_some() {
        b = b.header("content-type", "application/json");
    }
    let bytes = match body {
        Some(v) => serde_json::to_vec(&v)?,
        None => Vec::new(),
    };
    b.body(bytes).map_err(|e| Failure::new(e.to_string()))
}

pub(super) async fn cluster_scoped_resources(env: &Env) -> Outcome {
    let api = env.gizmos();
    let name = format!("cf-{}-gizmo", env.ctx.run_id);
    let g = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Gizmo",
        "metadata": {"name": name}, "spec": {"anything": {"goes": true}}, "status": {"kept": 1}
    }));
    let got = api.create(&PostParams::default(), &g).await?;
    ensure!(
        got.metadata.namespace.is_none(),
        "no namespace on a cluster-scoped object"
    );
    ensure_eq!(
        got.data["spec"]["anything"]["goes"],
        json!(true),
        "preserve-unknown-fields"
    );
    ensure_eq!(
        got.data["status"]["kept"],
        json!(1),
        "without a status subresource, status is written by the main endpoint"
    );
    let fetched = api.get(&name).await?;
    ensure_eq!(fetched.metadata.uid, got.metadata.uid, "get");
    let list = api.list(&ListParams::default()).await?;
    ensure!(
        list.items
            .iter()
            .any(|o| o.metadata.name.as_deref() == Some(name.as_str())),
        "list"
    );
    let mut changed = fetched.clone();
    changed.data["status"] = json!({"kept": 2});
    let updated = api.replace(&name, &PostParams::default(), &changed).await?;
    ensure_eq!(
        updated.metadata.generation,
        Some(2),
        "without a status subresource, a status change bumps generation"
    );
    let path = format!(
        "/apis/{}/{}/namespaces/default/gizmos/{name}",
        super::GROUP,
        super::VERSION
    );
    expect_error(
        env.client.request::<Value>(raw("GET", &path, None)?).await,
        404,
        "",
        "a cluster-scoped resource under a namespace",
    )?;
    api.delete(&name, &DeleteParams::default()).await?;
    let nss: Api<Namespace> = Api::all(env.client.clone());
    let default = serde_json::to_value(nss.get("default").await?)?;
    ensure_eq!(
        default["status"]["phase"],
        json!("Active"),
        "namespace phase"
    );
    let ns_name = env.namespace("scoped").await?;
    let ns = serde_json::to_value(nss.get(&ns_name).await?)?;
    ensure_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        json!(ns_name),
        "namespace name label"
    );
    ensure_eq!(
        ns["spec"]["finalizers"],
        json!(["kubernetes"]),
        "namespace finalizers"
    );
    Ok(())
}

pub(super) async fn unknown_resource_and_method(env: &Env) -> Outcome {
    // Core and built-in groups answer with a JSON Status ...
    for path in [
        "/api/v1/nothings",
        "/apis/apps/v1/nothings",
        "/apis/apps/v9/deployments",
        "/api/v1/configmaps/x",
    ] {
        let s = expect_error(
            env.client.request::<Value>(raw("GET", path, None)?).await,
            404,
            "NotFound",
            path,
        )?;
        ensure_eq!(
            s.message,
            "the server could not find the requested resource",
            "message for {path}"
        );
    }
    // ... other groups with a plain-text "404 page not found".
    for path in [
        format!(
            "/apis/{}/{}/namespaces/default/nothings",
            super::GROUP,
            super::VERSION
        ),
        "/apis/nothing.example.com/v1/things".to_string(),
        format!("/apis/{}/v9/widgets", super::GROUP),
        format!("/apis/{}/{}/widgets/x", super::GROUP, super::VERSION),
    ] {
        let s = expect_error(
            env.client.request::<Value>(raw("GET", &path, None)?).await,
            404,
            "",
            &path,
        )?;
        ensure!(
            s.message.contains("404 page not found"),
            "body for {path}: {}",
            s.message
        );
    }
    let ns = env.namespace("verbs").await?;
    let cm_item = format!("/api/v1/namespaces/{ns}/configmaps/x");
    let cm_collection = format!("/api/v1/namespaces/{ns}/configmaps");
    for (method, path) in [
        ("POST", cm_item.as_str()),
        ("PUT", cm_collection.as_str()),
        ("PATCH", cm_collection.as_str()),
        ("DELETE", "/api/v1/configmaps"),
    ] {
        let body = Some(json!({"metadata": {"name": "x"}}));
        let s = expect_error(
            env.client.request::<Value>(raw(method, path, body)?).await,
            405,
            "MethodNotAllowed",
            &format!("{method} {path}"),
        )?;
        ensure_eq!(
            s.message,
            "the server does not allow this method on the requested resource",
            "message"
        );
    }
    // Custom resources: PUT on a collection needs a name; DELETE on /status is refused.
    let widgets = format!(
        "/apis/{}/{}/namespaces/{ns}/widgets",
        super::GROUP,
        super::VERSION
    );
    let s = expect_error(
        env.client
            .request::<Value>(raw("PUT", &widgets, Some(json!({})))?)
            .await,
        400,
        "BadRequest",
        "PUT on a custom resource collection",
    )?;
    ensure_eq!(s.message, "name must be provided", "message");
    env.widgets(&ns)
        .create(&PostParams::default(), &super::widget("w", 1))
        .await?;
    let s = expect_error(
        env.client
            .request::<Value>(raw("DELETE", &format!("{widgets}/w/status"), None)?)
            .await,
        405,
        "MethodNotAllowed",
        "DELETE of /status",
    )?;
    ensure_eq!(
        s.message,
        format!(
            "delete is not supported on resources of kind \"widgets.{}\"",
            super::GROUP
        ),
        "message"
    );
    Ok(())
}

pub(super) async fn crd_lifecycle(env: &Env) -> Outcome {
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let run = &env.ctx.run_id;
    // A protected group needs the approval annotation.
    let protected = |annotations: Value| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("things{run}.conformance.k8s.io"), "annotations": annotations},
            "spec": {"group": "conformance.k8s.io", "scope": "Namespaced",
                "names": {"kind": format!("Thing{run}"), "plural": format!("things{run}")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
    };
    let refused: CustomResourceDefinition = serde_json::from_value(protected(json!({})))?;
    let s = expect_error(
        crds.create(&PostParams::default(), &refused).await,
        422,
        "Invalid",
        "protected group without approval",
    )?;
    ensure!(
        s.message.contains(
            "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"
        ),
        "message: {}",
        s.message
    );
    let name_mismatch: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "wrong.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Right", "plural": "rights"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))?;
    let s = expect_error(
        crds.create(&PostParams::default(), &name_mismatch).await,
        422,
        "Invalid",
        "CRD name mismatch",
    )?;
    ensure!(
        s.message
            .contains("must be spec.names.plural+\".\"+spec.group"),
        "message: {}",
        s.message
    );
    // Approved (bypassed): established, with the approval condition, served, then removed.
    let approved = protected(json!({"api-approved.kubernetes.io": "unapproved, conformance test"}));
    let name = format!("things{run}.conformance.k8s.io");
    install_crd(&env.client, approved, env.ctx.timeout).await?;
    // kube-apiserver's approval controller writes its condition after the CRD is established:
    // wait for it as a client would.
    let deadline = Instant::now() + env.ctx.timeout;
    let (crd, conditions) = loop {
        let crd = crds.get(&name).await?;
        let conditions = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c.type_ == "KubernetesAPIApprovalPolicyConformant")
            || Instant::now() >= deadline
        {
            break (crd, conditions);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let has = |t: &str, st: &str| conditions.iter().any(|c| c.type_ == t && c.status == st);
    ensure!(
        has("Established", "True") && has("NamesAccepted", "True"),
        "conditions {conditions:?}"
    );
    ensure!(
        has("KubernetesAPIApprovalPolicyConformant", "False"),
        "approval condition {conditions:?}"
    );
    ensure_eq!(
        crd.status
            .as_ref()
            .and_then(|s| s.accepted_names.as_ref())
            .map(|n| n.plural.clone()),
        Some(format!("things{run}")),
        "acceptedNames"
    );
    // The server's controllers write that status as the field manager `kube-apiserver`.
    let server_entries: Vec<Value> = crd
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| e.manager.as_deref() == Some("kube-apiserver"))
        .map(|e| {
            let fields = e.fields_v1.as_ref().map(|f| f.0.clone()).unwrap_or_default();
            let mut conditions: Vec<String> = fields["f:status"]["f:conditions"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            conditions.sort();
            json!({"operation": e.operation, "subresource": e.subresource,
                   "acceptedNames": fields["f:status"]["f:acceptedNames"]["f:plural"], "conditions": conditions})
        })
        .collect();
    ensure_eq!(
        server_entries,
        vec![
            json!({"operation": "Update", "subresource": "status", "acceptedNames": {},
            "conditions": [r#"k:{"type":"Established"}"#, r#"k:{"type":"KubernetesAPIApprovalPolicyConformant"}"#, r#"k:{"type":"NamesAccepted"}"#]})
        ],
        "the server's managed fields"
    );
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("conformance.k8s.io", "v1", &format!("Thing{run}")),
        &format!("things{run}"),
    );
    let ns = env.namespace("crdlife").await?;
    let things: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &ns, &ar);
    let thing = dynamic(
        json!({"apiVersion": "conformance.k8s.io/v1", "kind": format!("Thing{run}"),
                               "metadata": {"name": "t"}, "anything": 1}),
    );
    things.create(&PostParams::default(), &thing).await?;
    crds.delete(&name, &DeleteParams::default()).await?;
    let deadline = Instant::now() + env.ctx.timeout;
    loop {
        let gone = matches!(crds.get(&name).await, Err(ref e) if super::status_of(e).is_some_and(|s| s.code == 404));
        let unserved = matches!(things.list(&ListParams::default()).await, Err(ref e) if super::status_of(e).is_some_and(|s| s.code == 404));
        if gone && unserved {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "CRD deletion did not finish (gone={gone}, unserved={unserved})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

pub(super) async fn builtin_resources(env: &Env) -> Outcome {
    let ns = env.namespace("builtins").await?;
    let c = env.client.clone();
    let pp = PostParams::default();
    let core_event: CoreEvent = serde_json::from_value(json!({
        "metadata": {"name": "e1"}, "involvedObject": {"kind": "Widget", "name": "w", "namespace": ns},
        "reason": "Tested", "message": "hello", "type": "Normal"}))?;
    Api::<CoreEvent>::namespaced(c.clone(), &ns)
        .create(&pp, &core_event)
        .await?;
    let events = Api::<CoreEvent>::namespaced(c.clone(), &ns)
        .list(&ListParams::default().fields("involvedObject.name=w,reason=Tested"))
        .await?;
    ensure_eq!(events.items.len(), 1, "core events by field selector");
    let event: Event = serde_json::from_value(json!({
        "metadata": {"name": "e2"}, "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "conformance", "reportingInstance": "i", "action": "Test",
        "reason": "Tested", "type": "Normal", "regarding": {"kind": "Widget", "name": "w", "namespace": ns}}))?;
    Api::<Event>::namespaced(c.clone(), &ns)
        .create(&pp, &event)
        .await?;
    let lease: Lease = serde_json::from_value(
        json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}),
    )?;
    let leases = Api::<Lease>::namespaced(c.clone(), &ns);
    let l = serde_json::to_value(leases.create(&pp, &lease).await?)?;
    ensure_eq!(l["spec"]["holderIdentity"], json!("me"), "lease");
    let ep: Endpoints = serde_json::from_value(json!({"metadata": {"name": "svc"},
        "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]}))?;
    Api::<Endpoints>::namespaced(c.clone(), &ns)
        .create(&pp, &ep)
        .await?;
    let slice: EndpointSlice = serde_json::from_value(json!({"metadata": {"name": "svc-1",
        "labels": {"kubernetes.io/service-name": "svc", "endpointslice.kubernetes.io/managed-by": "conformance"}},
        "addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}], "ports": [{"port": 80, "protocol": "TCP"}]}))?;
    Api::<EndpointSlice>::namespaced(c.clone(), &ns)
        .create(&pp, &slice)
        .await?;
    let slices = Api::<EndpointSlice>::namespaced(c.clone(), &ns)
        .list(&ListParams::default().labels("kubernetes.io/service-name=svc"))
        .await?;
    ensure_eq!(slices.items.len(), 1, "endpoint slices by label");
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "s"}, "stringData": {"k": "hello"}}))?;
    let s = serde_json::to_value(
        Api::<Secret>::namespaced(c.clone(), &ns)
            .create(&pp, &secret)
            .await?,
    )?;
    ensure_eq!(s["type"], json!("Opaque"), "secret type default");
    ensure_eq!(
        s["data"]["k"],
        json!("aGVsbG8="),
        "stringData moved to data"
    );
    ensure!(s.get("stringData").is_none(), "stringData is write-only");
    let svc: Service = serde_json::from_value(
        json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}),
    )?;
    let svc = serde_json::to_value(
        Api::<Service>::namespaced(c.clone(), &ns)
            .create(&pp, &svc)
            .await?,
    )?;
    ensure_eq!(
        svc["spec"]["type"],
        json!("ClusterIP"),
        "service type default"
    );
    ensure!(
        svc["spec"]["clusterIP"]
            .as_str()
            .is_some_and(|ip| ip.parse::<std::net::Ipv4Addr>().is_ok()),
        "cluster IP allocated: {}",
        svc["spec"]["clusterIP"]
    );
    let deployment: Deployment = serde_json::from_value(
        json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}}}),
    )?;
    let d = serde_json::to_value(
        Api::<Deployment>::namespaced(c.clone(), &ns)
            .create(&pp, &deployment)
            .await?,
    )?;
    ensure_eq!(
        d["metadata"]["generation"],
        json!(1),
        "deployment generation"
    );
    ensure_eq!(d["spec"]["replicas"], json!(1), "replicas default");
    let bad: Deployment = serde_json::from_value(json!({"metadata": {"name": "bad"}, "spec": {
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))?;
    expect_error(
        Api::<Deployment>::namespaced(c.clone(), &ns)
            .create(&pp, &bad)
            .await,
        422,
        "Invalid",
        "selector not matching the template",
    )?;
    Ok(())
}

pub(super) async fn discovery_documents(env: &Env) -> Outcome {
    let api: Value = env.client.request(raw("GET", "/api", None)?).await?;
    ensure!(
        api["versions"]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x == "v1")),
        "/api: {api}"
    );
    let apis: Value = env.client.request(raw("GET", "/apis", None)?).await?;
    let group = apis["groups"]
        .as_array()
        .and_then(|gs| gs.iter().find(|g| g["name"] == super::GROUP))
        .cloned()
        .ok_or_else(|| Failure::new("the suite's group is not in /apis"))?;
    ensure_eq!(
        group["preferredVersion"]["version"],
        json!(super::VERSION),
        "preferred version"
    );
    let g: Value = env
        .client
        .request(raw("GET", &format!("/apis/{}", super::GROUP), None)?)
        .await?;
    ensure_eq!(g["kind"], json!("APIGroup"), "group document");
    let list: Value = env
        .client
        .request(raw(
            "GET",
            &format!("/apis/{}/{}", super::GROUP, super::VERSION),
            None,
        )?)
        .await?;
    let resources = list["resources"].as_array().cloned().unwrap_or_default();
    let widgets = resources
        .iter()
        .find(|r| r["name"] == "widgets")
        .ok_or_else(|| Failure::new("widgets not discovered"))?;
    ensure_eq!(widgets["kind"], json!("Widget"), "kind");
    ensure_eq!(widgets["namespaced"], json!(true), "namespaced");
    ensure_eq!(widgets["singularName"], json!("widget"), "singularName");
    ensure_eq!(widgets["shortNames"], json!(["wdg"]), "shortNames");
    let mut verbs: Vec<String> = widgets["verbs"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    verbs.sort();
    ensure_eq!(
        verbs,
        vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ],
        "verbs"
    );
    ensure!(
        resources.iter().any(|r| r["name"] == "widgets/status"),
        "status subresource discovered"
    );
    let gizmos = resources
        .iter()
        .find(|r| r["name"] == "gizmos")
        .ok_or_else(|| Failure::new("gizmos not discovered"))?;
    ensure_eq!(
        gizmos["namespaced"],
        json!(false),
        "gizmos are cluster-scoped"
    );
    let core: Value = env.client.request(raw("GET", "/api/v1", None)?).await?;
    let pods = core["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "pods").cloned())
        .ok_or_else(|| Failure::new("pods not discovered"))?;
    ensure_eq!(pods["shortNames"], json!(["po"]), "pods short names");
    let version: Value = env.client.request(raw("GET", "/version", None)?).await?;
    ensure_eq!(version["major"], json!("1"), "/version");
    Ok(())
}

pub(super) async fn pod_deletion(env: &Env) -> Outcome {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{WatchEvent, WatchParams};
    let ns = env.namespace("pods").await?;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &ns);
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}))?;
    let created = pods.create(&PostParams::default(), &pod).await?;
    let v = serde_json::to_value(&created)?;
    ensure_eq!(v["status"]["phase"], json!("Pending"), "initial phase");
    ensure_eq!(v["metadata"]["generation"], json!(1), "pod generation");
    ensure_eq!(
        v["spec"]["containers"][0]["imagePullPolicy"],
        json!("IfNotPresent"),
        "imagePullPolicy default"
    );
    let from = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    // An unscheduled pod is deleted at once, after a write that marks it.
    let deleted = match pods.delete("p", &DeleteParams::default()).await? {
        either::Either::Left(p) => p,
        either::Either::Right(s) => {
            return Err(Failure::new(format!("pod delete returned {s:?}")));
        }
    };
    ensure!(
        deleted.metadata.deletion_timestamp.is_some(),
        "the returned pod is marked"
    );
    ensure_eq!(deleted.metadata.generation, Some(2), "generation");
    expect_error(pods.get("p").await, 404, "NotFound", "pod gone")?;
    let wp = WatchParams::default().timeout(3);
    let mut stream = Box::pin(pods.watch(&wp, &from).await?);
    let mut kinds = Vec::new();
    while let Ok(Some(Ok(e))) = tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
        match e {
            WatchEvent::Modified(_) => kinds.push("MODIFIED"),
            WatchEvent::Deleted(_) => {
                kinds.push("DELETED");
                break;
            }
            WatchEvent::Added(_) => kinds.push("ADDED"),
            _ => {}
        }
    }
    ensure_eq!(kinds, vec!["MODIFIED", "DELETED"], "events of the deletion");
    Ok(())
}

pub(super) async fn managed_fields_on_writes(env: &Env) -> Outcome {
    use k8s_openapi::api::core::v1::ConfigMap;
    let ns = env.namespace("managed").await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}}),
    )?;
    let pp = PostParams {
        field_manager: Some("creator".into()),
        ..PostParams::default()
    };
    let c = serde_json::to_value(cms.create(&pp, &cm).await?)?;
    let mf = &c["metadata"]["managedFields"];
    ensure_eq!(mf.as_array().map(Vec::len), Some(1), "one entry: {mf}");
    ensure_eq!(mf[0]["manager"], json!("creator"), "manager");
    ensure_eq!(mf[0]["operation"], json!("Update"), "operation");
    ensure_eq!(mf[0]["apiVersion"], json!("v1"), "apiVersion");
    ensure_eq!(mf[0]["fieldsType"], json!("FieldsV1"), "fieldsType");
    ensure!(
        mf[0]["fieldsV1"]["f:data"].get("f:k").is_some()
            && mf[0]["fieldsV1"]["f:metadata"]["f:labels"]
                .get("f:a")
                .is_some(),
        "fieldsV1: {}",
        mf[0]["fieldsV1"]
    );
    Ok(())
}

pub(super) async fn builtin_validation(env: &Env) -> Outcome {
    use k8s_openapi::api::core::v1::Pod;
    let ns = env.namespace("builtinval").await?;
    let c = env.client.clone();
    let pp = PostParams::default();
    let svcs: Api<Service> = Api::namespaced(c.clone(), &ns);
    let svc: Service = serde_json::from_value(
        json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}),
    )?;
    svcs.create(&pp, &svc).await?;
    let s = expect_error(
        svcs.patch(
            "s",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"clusterIP": "10.0.0.99"}})),
        )
        .await,
        422,
        "Invalid",
        "changing a cluster IP",
    )?;
    ensure_eq!(
        s.message,
        "Service \"s\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.0.0.99\"]: may not change once set",
        "message"
    );
    let no_ports: Service =
        serde_json::from_value(json!({"metadata": {"name": "s2"}, "spec": {}}))?;
    let s = expect_error(
        svcs.create(&pp, &no_ports).await,
        422,
        "Invalid",
        "no ports",
    )?;
    ensure_eq!(
        s.message,
        "Service \"s2\" is invalid: spec.ports: Required value",
        "message"
    );
    let pods: Api<Pod> = Api::namespaced(c.clone(), &ns);
    let empty: Pod = serde_json::from_value(json!({"metadata": {"name": "p0"}, "spec": {}}))?;
    let s = expect_error(
        pods.create(&pp, &empty).await,
        422,
        "Invalid",
        "no containers",
    )?;
    ensure_eq!(
        s.message,
        "Pod \"p0\" is invalid: spec.containers: Required value",
        "message"
    );
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}))?;
    pods.create(&pp, &pod).await?;
    let s = expect_error(
        pods.patch(
            "p",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"restartPolicy": "Never"}})),
        )
        .await,
        422,
        "Invalid",
        "changing a pod's restart policy",
    )?;
    ensure!(
        s.message.starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"),
        "message: {}",
        s.message
    );
    let p = pods
        .patch(
            "p",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Strategic(
                json!({"spec": {"containers": [{"name": "c", "image": "registry.example/c:2"}]}}),
            ),
        )
        .await?;
    ensure_eq!(
        p.metadata.generation,
        Some(2),
        "an image change bumps a pod's generation"
    );
    // A replace with the spec as written: the defaults and what admission set at creation
    // (priority, preemption policy, the default tolerations) are set again, so nothing
    // changes that may not; the tolerations it leaves out come back.
    let mut written = serde_json::to_value(&pod)?;
    written["spec"]["containers"][0]["image"] = json!("registry.example/c:2");
    written["spec"]["tolerations"] = json!([{"key": "a", "operator": "Exists"}]);
    written["metadata"]["resourceVersion"] = json!(p.metadata.resource_version);
    let replaced = pods
        .replace("p", &pp, &serde_json::from_value(written)?)
        .await?;
    let spec = serde_json::to_value(replaced.spec)?;
    ensure_eq!(
        (
            &spec["priority"],
            &spec["preemptionPolicy"],
            &spec["enableServiceLinks"]
        ),
        (&json!(0), &json!("PreemptLowerPriority"), &json!(true)),
        "a replaced pod's admission fields"
    );
    ensure_eq!(
        spec["tolerations"].as_array().map(Vec::len),
        Some(3),
        "tolerations: {}",
        spec["tolerations"]
    );
    // Dropping a toleration is refused, before the spec's other changes.
    let mut dropped = serde_json::to_value(&pod)?;
    dropped["spec"]["restartPolicy"] = json!("Never");
    let s = expect_error(
        pods.replace("p", &pp, &serde_json::from_value(dropped)?)
            .await,
        422,
        "Invalid",
        "dropping a toleration",
    )?;
    ensure!(
        s.message.starts_with("Pod \"p\" is invalid: [spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds, spec: Forbidden: pod updates may not change fields other than"),
        "message: {}",
        s.message
    );
    let secrets: Api<Secret> = Api::namespaced(c, &ns);
    let bad: Secret = serde_json::from_value(json!({"metadata": {"name": "bad"}}))?;
    let mut bad = serde_json::to_value(bad)?;
    bad["data"] = json!({"a": "!!"});
    let req = http::Request::post(format!("/api/v1/namespaces/{ns}/secrets"))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&bad)?)
        .map_err(|e| Failure::new(e.to_string()))?;
    let s = expect_error(
        secrets.clone().into_client().request::<Value>(req).await,
        400,
        "BadRequest",
        "invalid base64",
    )?;
    ensure_eq!(
        s.message,
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0",
        "message"
    );
    Ok(())
}
