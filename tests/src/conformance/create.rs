//! Create semantics.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::json;

use super::{Env, Outcome, dynamic, ensure, ensure_eq, expect_error, rv_of, widget};

pub(super) async fn create_assigns_server_fields(env: &Env) -> Outcome {
    let ns = env.namespace("create").await?;
    let api = env.widgets(&ns);
    let a = api.create(&PostParams::default(), &widget("a", 1)).await?;
    let m = &a.metadata;
    ensure!(
        m.uid.as_deref().is_some_and(|u| u.len() == 36),
        "uid: {:?}",
        m.uid
    );
    ensure!(m.creation_timestamp.is_some(), "creationTimestamp missing");
    ensure_eq!(m.generation, Some(1), "generation");
    ensure_eq!(m.namespace.as_deref(), Some(ns.as_str()), "namespace");
    ensure!(rv_of(&a) > 0, "resourceVersion {:?}", m.resource_version);
    // One counter for all resources: a ConfigMap created next gets a larger version.
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &ns);
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "c"}}))?;
    let cm = cms.create(&PostParams::default(), &cm).await?;
    ensure!(rv_of(&cm) > rv_of(&a), "global resourceVersion order");
    ensure!(
        cm.metadata.generation.is_none(),
        "ConfigMaps have no generation"
    );
    let b = api.create(&PostParams::default(), &widget("b", 1)).await?;
    ensure!(rv_of(&b) > rv_of(&cm), "resourceVersion increases");
    ensure_eq!(b.data["spec"]["color"], json!("blue"), "schema default");
    Ok(())
}

pub(super) async fn create_generate_name(env: &Env) -> Outcome {
    let ns = env.namespace("genname").await?;
    let api = env.widgets(&ns);
    let obj = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {"generateName": "gen-"}, "spec": {"size": 1}
    }));
    let a = api.create(&PostParams::default(), &obj).await?;
    let b = api.create(&PostParams::default(), &obj).await?;
    let (na, nb) = (
        a.metadata.name.unwrap_or_default(),
        b.metadata.name.unwrap_or_default(),
    );
    ensure!(
        na.starts_with("gen-") && na.len() == 9,
        "generated name {na:?}"
    );
    ensure!(na != nb, "two generated names are equal: {na}");
    ensure_eq!(
        a.metadata.generate_name.as_deref(),
        Some("gen-"),
        "generateName kept"
    );
    Ok(())
}

pub(super) async fn create_already_exists(env: &Env) -> Outcome {
    let ns = env.namespace("exists").await?;
    let api = env.widgets(&ns);
    api.create(&PostParams::default(), &widget("dup", 1))
        .await?;
    let s = expect_error(
        api.create(&PostParams::default(), &widget("dup", 2)).await,
        409,
        "AlreadyExists",
        "second create",
    )?;
    ensure_eq!(
        s.message,
        format!("widgets.{} \"dup\" already exists", super::GROUP),
        "message"
    );
    let (name, group, kind, _) = super::details_of(&s);
    ensure_eq!(
        (name.as_str(), group.as_str(), kind.as_str()),
        ("dup", super::GROUP, "widgets"),
        "details"
    );
    Ok(())
}

pub(super) async fn create_requires_name(env: &Env) -> Outcome {
    let ns = env.namespace("noname").await?;
    let api = env.widgets(&ns);
    let obj = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {}, "spec": {"size": 1}
    }));
    let s = expect_error(
        api.create(&PostParams::default(), &obj).await,
        422,
        "Invalid",
        "create without a name",
    )?;
    ensure!(
        s.message
            .contains("metadata.name: Required value: name or generateName is required"),
        "message: {}",
        s.message
    );
    let s = expect_error(
        api.create(&PostParams::default(), &widget("Bad_Name", 1))
            .await,
        422,
        "Invalid",
        "create with an invalid name",
    )?;
    ensure!(
        s.message.contains("RFC 1123 subdomain"),
        "message: {}",
        s.message
    );
    Ok(())
}

pub(super) async fn create_namespace_mismatch(env: &Env) -> Outcome {
    let ns = env.namespace("nsmismatch").await?;
    let api = env.widgets(&ns);
    let obj = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {"name": "x", "namespace": "elsewhere"}, "spec": {"size": 1}
    }));
    let s = expect_error(
        api.create(&PostParams::default(), &obj).await,
        400,
        "BadRequest",
        "namespace mismatch",
    )?;
    ensure_eq!(
        s.message,
        "the namespace of the provided object does not match the namespace sent on the request",
        "message"
    );
    Ok(())
}

pub(super) async fn create_custom_resource_requires_kind(env: &Env) -> Outcome {
    let ns = env.namespace("nokind").await?;
    let av = format!("{}/{}", super::GROUP, super::VERSION);
    for (body, want) in [
        (
            json!({"apiVersion": av, "metadata": {"name": "x"}, "spec": {"size": 1}}),
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '".to_string(),
        ),
        (
            json!({"kind": "Widget", "metadata": {"name": "x"}, "spec": {"size": 1}}),
            format!("the API version in the data () does not match the expected API version ({av})"),
        ),
        (
            json!({"apiVersion": "other.example.com/v1", "kind": "Widget", "metadata": {"name": "x"}, "spec": {"size": 1}}),
            format!("the API version in the data (other.example.com/v1) does not match the expected API version ({av})"),
        ),
    ] {
        let path = format!(
            "/apis/{}/{}/namespaces/{ns}/widgets",
            super::GROUP,
            super::VERSION
        );
        let req = http::Request::post(path)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body)?)
            .map_err(|e| super::Failure::new(e.to_string()))?;
        let s = expect_error(
            env.client.request::<serde_json::Value>(req).await,
            400,
            "BadRequest",
            &format!("create of {body}"),
        )?;
        ensure!(s.message.starts_with(&want), "message: {}", s.message);
    }
    let wrong_kind = dynamic(
        json!({"apiVersion": av, "kind": "Other", "metadata": {"name": "x"}, "spec": {"size": 1}}),
    );
    let s = expect_error(
        env.widgets(&ns)
            .create(&PostParams::default(), &wrong_kind)
            .await,
        422,
        "Invalid",
        "another kind",
    )?;
    ensure_eq!(
        s.message,
        format!(
            "Other.{} \"x\" is invalid: kind: Invalid value: \"Other\": must be Widget",
            super::GROUP
        ),
        "message"
    );
    Ok(())
}

pub(super) async fn create_in_missing_namespace(env: &Env) -> Outcome {
    let missing = format!("cf-{}-never-created", env.ctx.run_id);
    let s = expect_error(
        env.widgets(&missing)
            .create(&PostParams::default(), &widget("x", 1))
            .await,
        404,
        "NotFound",
        "create in a missing namespace",
    )?;
    ensure_eq!(
        s.message,
        format!("namespaces \"{missing}\" not found"),
        "message"
    );
    Ok(())
}

pub(super) async fn create_schema_pruning_defaulting_validation(env: &Env) -> Outcome {
    let ns = env.namespace("schema").await?;
    let api = env.widgets(&ns);
    let obj = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {"name": "pruned"}, "spec": {"size": 3, "unknown": "dropped", "parts": [{"name": "p", "extra": 1}]},
        "topLevelUnknown": true
    }));
    let got = api.create(&PostParams::default(), &obj).await?;
    ensure!(
        got.data["spec"].get("unknown").is_none(),
        "unknown field kept: {}",
        got.data
    );
    ensure!(
        got.data.get("topLevelUnknown").is_none(),
        "unknown top-level field kept"
    );
    ensure!(
        got.data["spec"]["parts"][0].get("extra").is_none(),
        "unknown nested field kept"
    );
    ensure_eq!(got.data["spec"]["color"], json!("blue"), "default");
    let s = expect_error(
        api.create(&PostParams::default(), &widget("too-big", 1000))
            .await,
        422,
        "Invalid",
        "maximum",
    )?;
    ensure!(
        s.message.contains(
            "spec.size: Invalid value: 1000: spec.size in body should be less than or equal to 100"
        ),
        "message: {}",
        s.message
    );
    let wrong_type = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {"name": "wrong"}, "spec": {"size": "big"}
    }));
    let s = expect_error(
        api.create(&PostParams::default(), &wrong_type).await,
        422,
        "Invalid",
        "type",
    )?;
    ensure!(
        s.message
            .contains("spec.size in body must be of type integer"),
        "message: {}",
        s.message
    );
    let missing = dynamic(json!({
        "apiVersion": format!("{}/{}", super::GROUP, super::VERSION), "kind": "Widget",
        "metadata": {"name": "missing"}, "spec": {}
    }));
    let s = expect_error(
        api.create(&PostParams::default(), &missing).await,
        422,
        "Invalid",
        "required",
    )?;
    ensure!(
        s.message.contains("spec.size: Required value"),
        "message: {}",
        s.message
    );
    Ok(())
}
