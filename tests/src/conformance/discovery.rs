//! How the server picks an encoding: `Accept` for objects, lists, watches and the discovery
//! documents (406s and their wording, aggregated discovery versions), and `?pretty`.

use serde_json::json;

use super::{Env, Outcome, ensure, ensure_eq, ensure_status, raw};

const REPRESENTATIONS: &str = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf";
const ONLY_ACCEPTED: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";
const V2BETA1: &str = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

pub(super) async fn accept_negotiation(env: &Env) -> Outcome {
    let ns = env.namespace("accept").await?;
    let c = &env.client;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let body = serde_json::to_vec(&json!({"metadata": {"name": "a"}, "data": {"k": "v"}}))?;
    let r = raw(c, "POST", &cms, Some("application/json"), None, Some(body)).await?;
    ensure_eq!(r.status, 201, "created: {:?}", r.json());
    let streaming = format!(
        "{REPRESENTATIONS}, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    );
    // A wildcard of one type matches nothing; a list or watch names the watch encodings too.
    for (path, accept, message) in [
        (
            format!("{cms}/a"),
            "application/*",
            REPRESENTATIONS.to_string(),
        ),
        (format!("{cms}/a"), "text/html", REPRESENTATIONS.to_string()),
        (cms.clone(), "application/*", streaming.clone()),
        (cms.clone(), "text/html", streaming.clone()),
        (
            format!("{cms}?watch=1&timeoutSeconds=1"),
            "application/*",
            streaming.clone(),
        ),
    ] {
        let r = raw(c, "GET", &path, None, Some(accept), None).await?;
        ensure_status!(r, 406, "NotAcceptable", message, "GET {path} as {accept}");
    }
    let r = raw(c, "GET", &format!("{cms}/a"), None, Some("*/*"), None).await?;
    ensure_eq!(r.status, 200, "*/*");
    // `/version` is JSON only (kube-apiserver words this 406 in YAML).
    let r = raw(c, "GET", "/version", None, Some("application/yaml"), None).await?;
    ensure_eq!(r.status, 406, "/version as YAML");
    // A group-version's OpenAPI document in a type neither server writes: 406, no body (the
    // fake writes them in JSON only, so kubectl's protobuf-only request of `/openapi/v2` gets
    // this answer from it rather than a document it cannot parse); wildcards get JSON.
    for path in ["/openapi/v2", "/openapi/v3/apis/apps/v1"] {
        let r = raw(c, "GET", path, None, Some("text/plain"), None).await?;
        ensure_eq!((r.status, r.body.len()), (406, 0), "{path} as text/plain");
        for accept in ["application/*", "*/*", "application/json;q=0"] {
            let r = raw(c, "GET", path, None, Some(accept), None).await?;
            let json = r.headers.get("content-type").and_then(|v| v.to_str().ok());
            ensure_eq!(
                (r.status, json),
                (200, Some("application/json")),
                "{path} as {accept}"
            );
        }
    }

    // Metadata of one object asked of a list and the reverse; a Table's includeObject.
    let meta = |as_: &str| format!("application/json;as={as_};g=meta.k8s.io;v=v1");
    let table = meta("Table");
    for (path, accept, want) in [
        (
            cms.clone(),
            meta("PartialObjectMetadata"),
            Err((406, "NotAcceptable", "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)".to_string())),
        ),
        (
            format!("{cms}/a"),
            meta("PartialObjectMetadataList"),
            Err((406, "NotAcceptable", "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)".to_string())),
        ),
        (
            format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            meta("PartialObjectMetadata"),
            Err((406, "NotAcceptable", "you requested PartialObjectMetadata, but the requested object is a list (*apps.DeploymentList)".to_string())),
        ),
        (cms.clone(), meta("PartialObjectMetadataList"), Ok(())),
        (format!("{cms}/a"), meta("PartialObjectMetadata"), Ok(())),
        (
            format!("{cms}?includeObject=Bogus"),
            table.clone(),
            Err((400, "BadRequest", "Unable to convert to Table as requested: includeObject: Invalid value: \"Bogus\": must be 'Metadata', 'Object', 'None', or empty".to_string())),
        ),
        (
            format!("{cms}/a?includeObject=Bogus"),
            table.clone(),
            Err((400, "BadRequest", "Unable to convert to Table as requested: includeObject: Invalid value: \"Bogus\": must be 'Metadata', 'Object', 'None', or empty".to_string())),
        ),
        (format!("{cms}?includeObject=Object"), table.clone(), Ok(())),
        (format!("{cms}?includeObject=Bogus"), "application/json".to_string(), Ok(())),
    ] {
        let r = raw(c, "GET", &path, None, Some(&accept), None).await?;
        match want {
            Ok(()) => ensure_eq!(r.status, 200, "GET {path} as {accept}: {:?}", r.json()),
            Err((code, reason, message)) => {
                ensure_status!(r, code, reason, message, "GET {path} as {accept}")
            }
        }
    }

    // The discovery documents.
    for (path, accept, want) in [
        ("/api", "text/html", Err(REPRESENTATIONS)),
        ("/api", "application/*", Err(REPRESENTATIONS)),
        ("/apis/apps/v1", "application/*", Err(REPRESENTATIONS)),
        ("/apis", "text/html", Err(ONLY_ACCEPTED)),
        ("/apis", "application/*", Ok("application/json")),
        ("/api", V2BETA1, Err(ONLY_ACCEPTED)),
        ("/apis", V2BETA1, Err(ONLY_ACCEPTED)),
        ("/apis/apps", V2BETA1, Err(ONLY_ACCEPTED)),
        (
            "/apis",
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            Ok("application/json"),
        ),
        ("/apis/apps", "application/yaml", Ok("application/yaml")),
        ("/api", "*/*", Ok("application/json")),
        ("/version", V2BETA1, Ok("application/json")),
        (
            "/version",
            "text/html",
            Err("406: Not Acceptable\n\nAvailable representations: application/json"),
        ),
    ] {
        let r = raw(c, "GET", path, None, Some(accept), None).await?;
        match want {
            Ok(ct) => {
                ensure_eq!(r.status, 200, "GET {path} as {accept}: {:?}", r.json());
                ensure_eq!(r.content_type(), ct, "GET {path} as {accept}");
            }
            Err(message) => {
                ensure_status!(r, 406, "NotAcceptable", message, "GET {path} as {accept}")
            }
        }
    }
    Ok(())
}

pub(super) async fn pretty_output(env: &Env) -> Outcome {
    let ns = env.namespace("pretty").await?;
    let c = &env.client;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let body = serde_json::to_vec(&json!({"metadata": {"name": "a"}, "data": {"k": "v"}}))?;
    let r = raw(c, "POST", &cms, Some("application/json"), None, Some(body)).await?;
    ensure_eq!(r.status, 201, "created: {:?}", r.json());
    let compact = raw(c, "GET", &format!("{cms}/a"), None, None, None).await?;
    for query in ["pretty=true", "pretty=1"] {
        let r = raw(c, "GET", &format!("{cms}/a?{query}"), None, None, None).await?;
        let text = String::from_utf8_lossy(&r.body).to_string();
        ensure!(
            text.starts_with("{\n  \"")
                && text.contains("\n  \"metadata\": {\n    \"")
                && text.ends_with("\n}"),
            "?{query} indents: {text}"
        );
        ensure_eq!(r.json(), compact.json(), "?{query} is the same object");
    }
    for path in [
        format!("{cms}/a?pretty=false"),
        format!("{cms}/a"),
        format!("{cms}?pretty=0"),
    ] {
        let r = raw(c, "GET", &path, None, None, None).await?;
        let text = String::from_utf8_lossy(&r.body).to_string();
        ensure!(
            !text.trim_end().contains('\n'),
            "{path} is on one line: {text}"
        );
    }
    let r = raw(c, "GET", &format!("{cms}?pretty=true"), None, None, None).await?;
    let text = String::from_utf8_lossy(&r.body).to_string();
    ensure!(
        text.contains("\n  \"items\": [\n    {\n"),
        "a pretty list: {text}"
    );
    let r = raw(
        c,
        "GET",
        &format!("{cms}/missing?pretty=true"),
        None,
        None,
        None,
    )
    .await?;
    let text = String::from_utf8_lossy(&r.body).to_string();
    ensure!(
        r.status == 404
            && text.starts_with("{\n  \"")
            && text.contains("\n  \"reason\": \"NotFound\""),
        "a pretty Status: {text}"
    );
    Ok(())
}

pub(super) async fn namespace_discovery_and_verbs(env: &Env) -> Outcome {
    let c = &env.client;
    // Namespaces are deleted one at a time: no deletecollection, listed or served; their
    // finalize subresource takes updates only.
    let r = raw(c, "GET", "/api/v1", None, None, None).await?;
    let v = r.json();
    let entry = |name: &str| {
        v["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["name"] == json!(name)))
            .cloned()
    };
    ensure_eq!(
        entry("namespaces").map(|e| e["verbs"].clone()),
        Some(json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])),
        "namespaces verbs"
    );
    ensure_eq!(
        entry("namespaces/finalize").map(|e| (e["verbs"].clone(), e["kind"].clone())),
        Some((json!(["update"]), json!("Namespace"))),
        "namespaces/finalize"
    );
    let r = raw(
        c,
        "GET",
        "/api",
        None,
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        None,
    )
    .await?;
    let v = r.json();
    let ns = v["items"][0]["versions"][0]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["resource"] == json!("namespaces")))
        .cloned()
        .unwrap_or_default();
    ensure_eq!(
        ns["verbs"],
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ]),
        "aggregated namespaces verbs"
    );
    let kind = json!({"group": "", "version": "", "kind": "Namespace"});
    ensure_eq!(
        ns["subresources"],
        json!([
            {"subresource": "finalize", "responseKind": kind, "verbs": ["update"]},
            {"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]}
        ]),
        "aggregated namespaces subresources"
    );
    let r = raw(
        c,
        "DELETE",
        "/api/v1/namespaces?labelSelector=nothing%3Dhere",
        None,
        None,
        None,
    )
    .await?;
    ensure_status!(
        r,
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        "deletecollection of namespaces"
    );

    // Health checks: one by its path, all of them with ?verbose, 404 for an unknown one.
    for endpoint in ["healthz", "livez", "readyz"] {
        let r = raw(c, "GET", &format!("/{endpoint}?verbose"), None, None, None).await?;
        let text = String::from_utf8_lossy(&r.body).to_string();
        ensure!(
            r.status == 200
                && text.starts_with("[+]ping ok\n")
                && text.contains("\n[+]etcd ok\n")
                && text.ends_with(&format!("\n{endpoint} check passed\n")),
            "/{endpoint}?verbose: {text}"
        );
        let r = raw(c, "GET", &format!("/{endpoint}/etcd"), None, None, None).await?;
        ensure!(
            r.status == 200 && r.body == b"ok",
            "/{endpoint}/etcd: {} {:?}",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
        let r = raw(c, "GET", &format!("/{endpoint}/bogus"), None, None, None).await?;
        ensure!(
            r.status == 404 && r.body == b"404 page not found\n",
            "/{endpoint}/bogus: {} {:?}",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
    }
    Ok(())
}
