//! OpenAPI documents: `/openapi/v3` (the index of group-versions with content hashes),
//! `/openapi/v3/api/v1` and `/openapi/v3/apis/<group>/<version>`, and `/openapi/v2` (JSON), for
//! the resources the server serves at the moment of the request.
//!
//! Built-in kinds get the schemas k8s-openapi generates from the Kubernetes API (its `schemars`
//! feature: the same definitions, names and descriptions as kube-apiserver's documents), with
//! the `x-kubernetes-group-version-kind` extension added; custom resources get their CRD's
//! `openAPIV3Schema` with `apiVersion`, `kind` and `metadata` filled in as the apiextensions
//! server does. Every write operation lists the `fieldValidation` query parameter, which is how
//! kubectl learns that the server validates fields itself (`kubectl apply` without
//! `--validate=false`); every operation carries the action and group-version-kind extensions
//! `kubectl explain` looks for.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::semantics::builtin_schema::{META, SCALE, builtin_schemas, gvk_ext};
use crate::semantics::resources::{Registry, Resource};

const SCHEMAS: &str = "#/components/schemas/";

/// `crddemo.k8s.io` → `io.k8s.crddemo`, as the apiextensions server names CRD definitions.
fn reversed_group(group: &str) -> String {
    group.split('.').rev().collect::<Vec<_>>().join(".")
}

/// The definition name of a resource's kind (and of its list).
fn definition_name(res: &Resource) -> (String, String) {
    if let Some(b) = res.builtin
        && let Some(name) = builtin_schemas().names.get(&b)
    {
        let list = format!("{name}List");
        return (name.clone(), list);
    }
    let prefix = format!("{}.{}", reversed_group(&res.group), res.version);
    (
        format!("{prefix}.{}", res.kind),
        format!("{prefix}.{}", res.list_kind),
    )
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("{SCHEMAS}{name}")})
}

/// A custom resource's definition: its schema with the type-meta fields and the GVK.
fn custom_definition(res: &Resource) -> Value {
    let type_meta = &builtin_schemas().type_meta;
    let mut schema = res
        .custom
        .as_ref()
        .and_then(|c| c.schema.clone())
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    if let Value::Object(m) = &mut schema {
        let props = m
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(props) = props {
            for (k, v) in type_meta {
                props.insert(k.clone(), v.clone());
            }
        }
        m.insert(
            "x-kubernetes-group-version-kind".into(),
            gvk_ext(&res.group, &res.version, &res.kind),
        );
    }
    schema
}

/// The list definition of a resource.
fn list_definition(res: &Resource, item: &str) -> Value {
    let type_meta = &builtin_schemas().type_meta;
    json!({
        "description": format!("{} is a list of {}", res.list_kind, res.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": type_meta.get("apiVersion").cloned().unwrap_or(json!({"type": "string"})),
            "kind": type_meta.get("kind").cloned().unwrap_or(json!({"type": "string"})),
            "items": {"description": format!("List of {}.", res.plural), "type": "array", "items": reference(item)},
            "metadata": {"description": "Standard list metadata.", "allOf": [reference(&format!("{META}ListMeta"))]}
        },
        "x-kubernetes-group-version-kind": gvk_ext(&res.group, &res.version, &res.list_kind),
    })
}

fn param(name: &str, location: &str, ty: &str, description: &str) -> Value {
    let mut p = json!({"name": name, "in": location, "description": description,
                       "schema": {"type": ty, "uniqueItems": true}});
    if location == "path"
        && let Value::Object(m) = &mut p
    {
        m.insert("required".into(), json!(true));
    }
    p
}

fn write_params(patch: bool) -> Vec<Value> {
    let mut v = vec![
        param(
            "dryRun",
            "query",
            "string",
            "`All` runs every stage of the request without persisting anything.",
        ),
        param(
            "fieldManager",
            "query",
            "string",
            "The name of the actor making the change, at most 128 printable characters; required for apply patches.",
        ),
        param(
            "fieldValidation",
            "query",
            "string",
            "What to do with unknown or duplicate fields in the body: `Ignore` drops them, `Warn` (the default) drops them with a Warning header each, `Strict` fails the request.",
        ),
    ];
    if patch {
        v.push(param(
            "force",
            "query",
            "boolean",
            "For apply patches only: take over fields other managers own instead of failing with a conflict.",
        ));
    }
    v
}

fn list_params() -> Vec<Value> {
    vec![
        param(
            "allowWatchBookmarks",
            "query",
            "boolean",
            "Ask for BOOKMARK events in a watch.",
        ),
        param(
            "continue",
            "query",
            "string",
            "The continue token of the previous page of a paginated list.",
        ),
        param(
            "fieldSelector",
            "query",
            "string",
            "Select objects by fields. Defaults to everything.",
        ),
        param(
            "labelSelector",
            "query",
            "string",
            "Select objects by labels. Defaults to everything.",
        ),
        param(
            "limit",
            "query",
            "integer",
            "The largest number of objects to return; the rest follows with `continue`.",
        ),
        param(
            "resourceVersion",
            "query",
            "string",
            "The resourceVersion the result must be at least as new as (or exactly, with resourceVersionMatch=Exact).",
        ),
        param(
            "resourceVersionMatch",
            "query",
            "string",
            "How resourceVersion applies to a list: `Exact` or `NotOlderThan`.",
        ),
        param(
            "sendInitialEvents",
            "query",
            "boolean",
            "Start a watch with the current objects as ADDED events, ended by a bookmark.",
        ),
        param(
            "timeoutSeconds",
            "query",
            "integer",
            "End a list or watch after this many seconds.",
        ),
        param(
            "watch",
            "query",
            "boolean",
            "Stream changes instead of returning a list.",
        ),
    ]
}

fn delete_params() -> Vec<Value> {
    vec![
        param(
            "dryRun",
            "query",
            "string",
            "`All` runs every stage of the request without persisting anything.",
        ),
        param(
            "gracePeriodSeconds",
            "query",
            "integer",
            "Seconds before the object is deleted; 0 deletes at once.",
        ),
        param(
            "propagationPolicy",
            "query",
            "string",
            "How dependents are garbage collected: `Orphan`, `Background` or `Foreground`.",
        ),
    ]
}

fn body_of(schema: &str) -> Value {
    let r = reference(schema);
    json!({"content": {"*/*": {"schema": r}}, "required": true})
}

fn responses(codes: &[(u16, &str)]) -> Value {
    let mut m = Map::new();
    for (code, schema) in codes {
        let r = reference(schema);
        let description = match code {
            200 => "OK",
            201 => "Created",
            202 => "Accepted",
            _ => "",
        };
        m.insert(
            code.to_string(),
            json!({"description": description, "content": {
                "application/json": {"schema": r.clone()}, "application/yaml": {"schema": r}}}),
        );
    }
    m.insert("401".into(), json!({"description": "Unauthorized"}));
    Value::Object(m)
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `CrddemoV1`, `CoreV1`, `AppsV1`, `ApiextensionsV1`: the operation-id infix of a group-version.
fn gv_camel(group: &str, version: &str) -> String {
    let g = if group.is_empty() {
        "core".to_string()
    } else {
        group
            .trim_end_matches(".k8s.io")
            .split(['.', '-'])
            .map(upper_first)
            .collect::<String>()
    };
    format!("{}{}", upper_first(&g), upper_first(version))
}

#[allow(clippy::too_many_arguments)] // the parts of one operation object
fn operation(
    res: &Resource,
    action: &str,
    op_verb: &str,
    op_suffix: &str,
    description: String,
    params: Vec<Value>,
    body: Option<Value>,
    resp: Value,
    gvk: (&str, &str, &str),
) -> Value {
    let gv = gv_camel(&res.group, &res.version);
    let tag = if res.group.is_empty() {
        format!("core_{}", res.version)
    } else {
        format!(
            "{}_{}",
            res.group
                .trim_end_matches(".k8s.io")
                .replace(['.', '-'], "_"),
            res.version
        )
    };
    let mut op = json!({
        "tags": [tag],
        "description": description,
        "operationId": format!("{op_verb}{gv}{op_suffix}"),
        "responses": resp,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": gvk.0, "version": gvk.1, "kind": gvk.2},
    });
    if let Value::Object(m) = &mut op {
        if !params.is_empty() {
            m.insert("parameters".into(), Value::Array(params));
        }
        if let Some(b) = body {
            m.insert("requestBody".into(), b);
        }
    }
    op
}

/// The paths of one resource.
fn resource_paths(res: &Resource, paths: &mut BTreeMap<String, Value>) {
    let (kind_def, list_def) = definition_name(res);
    let status = format!("{META}Status");
    let prefix = if res.group.is_empty() {
        format!("/api/{}", res.version)
    } else {
        format!("/apis/{}/{}", res.group, res.version)
    };
    let ns = if res.namespaced { "Namespaced" } else { "" };
    let kind = &res.kind;
    let gvk = (res.group.as_str(), res.version.as_str(), kind.as_str());
    let pretty = param(
        "pretty",
        "query",
        "string",
        "If 'true', the output is indented.",
    );
    let ns_param = param(
        "namespace",
        "path",
        "string",
        "The namespace of the objects.",
    );
    let name_param = |what: &str| {
        param(
            "name",
            "path",
            "string",
            &format!("The name of the {what}."),
        )
    };
    let collection = if res.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", res.plural)
    } else {
        format!("{prefix}/{}", res.plural)
    };
    let scope_params = |extra: Vec<Value>| -> Value {
        let mut v = Vec::new();
        if res.namespaced {
            v.push(ns_param.clone());
        }
        v.extend(extra);
        v.push(pretty.clone());
        Value::Array(v)
    };
    let mut ops = Map::new();
    ops.insert(
        "get".into(),
        operation(
            res,
            "list",
            "list",
            &format!("{ns}{kind}"),
            format!("list or watch objects of kind {kind}"),
            list_params(),
            None,
            responses(&[(200, &list_def)]),
            gvk,
        ),
    );
    ops.insert(
        "post".into(),
        operation(
            res,
            "post",
            "create",
            &format!("{ns}{kind}"),
            format!("create a {kind}"),
            write_params(false),
            Some(body_of(&kind_def)),
            responses(&[(200, &kind_def), (201, &kind_def), (202, &kind_def)]),
            gvk,
        ),
    );
    if res.is_create_only() {
        // The review kinds are create-only: one `post` on the collection.
        ops.remove("get");
        ops.insert("parameters".into(), scope_params(Vec::new()));
        paths.insert(collection, Value::Object(ops));
        return;
    }
    let mut dc_params = delete_params();
    dc_params.extend(list_params());
    ops.insert(
        "delete".into(),
        operation(
            res,
            "deletecollection",
            "deletecollection",
            &format!("{ns}{kind}"),
            format!("delete collection of {kind}"),
            dc_params,
            Some(body_of(&format!("{META}DeleteOptions"))),
            responses(&[(200, &status)]),
            gvk,
        ),
    );
    ops.insert("parameters".into(), scope_params(Vec::new()));
    paths.insert(collection.clone(), Value::Object(ops));
    if res.namespaced {
        let mut ops = Map::new();
        ops.insert(
            "get".into(),
            operation(
                res,
                "list",
                "list",
                &format!("{kind}ForAllNamespaces"),
                format!("list or watch objects of kind {kind}"),
                list_params(),
                None,
                responses(&[(200, &list_def)]),
                gvk,
            ),
        );
        ops.insert("parameters".into(), json!([pretty.clone()]));
        paths.insert(format!("{prefix}/{}", res.plural), Value::Object(ops));
    }
    let item = format!("{collection}/{{name}}");
    let mut item_ops = |path: String,
                        suffix: &str,
                        what: &str,
                        schema: &str,
                        gvk: (&str, &str, &str),
                        delete: bool| {
        let mut ops = Map::new();
        let op_suffix = format!("{ns}{kind}{suffix}");
        ops.insert(
            "get".into(),
            operation(
                res,
                "get",
                "read",
                &op_suffix,
                format!("read {what} of the specified {kind}"),
                Vec::new(),
                None,
                responses(&[(200, schema)]),
                gvk,
            ),
        );
        ops.insert(
            "put".into(),
            operation(
                res,
                "put",
                "replace",
                &op_suffix,
                format!("replace {what} of the specified {kind}"),
                write_params(false),
                Some(body_of(schema)),
                responses(&[(200, schema), (201, schema)]),
                gvk,
            ),
        );
        let mut patch_body = Map::new();
        for ct in [
            "application/apply-patch+yaml",
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
        ] {
            if ct.contains("strategic") && !res.supports_strategic_merge() {
                continue;
            }
            patch_body.insert(
                ct.into(),
                json!({"schema": reference(&format!("{META}Patch"))}),
            );
        }
        ops.insert(
            "patch".into(),
            operation(
                res,
                "patch",
                "patch",
                &op_suffix,
                format!("partially update {what} of the specified {kind}"),
                write_params(true),
                Some(json!({"content": patch_body, "required": true})),
                responses(&[(200, schema), (201, schema)]),
                gvk,
            ),
        );
        if delete {
            ops.insert(
                "delete".into(),
                operation(
                    res,
                    "delete",
                    "delete",
                    &op_suffix,
                    format!("delete a {kind}"),
                    delete_params(),
                    Some(body_of(&format!("{META}DeleteOptions"))),
                    responses(&[(200, &status), (202, &status)]),
                    gvk,
                ),
            );
        }
        let mut params = Vec::new();
        params.push(name_param(&format!("the {}", kind)));
        if res.namespaced {
            params.push(ns_param.clone());
        }
        params.push(pretty.clone());
        ops.insert("parameters".into(), Value::Array(params));
        paths.insert(path, Value::Object(ops));
    };
    item_ops(item.clone(), "", "the object", &kind_def, gvk, true);
    if res.has_status() {
        item_ops(
            format!("{item}/status"),
            "Status",
            "status",
            &kind_def,
            gvk,
            false,
        );
    }
    if res.subresources.iter().any(|s| s == "scale") {
        item_ops(
            format!("{item}/scale"),
            "Scale",
            "scale",
            SCALE,
            ("autoscaling", "v1", "Scale"),
            false,
        );
    }
}

/// Every `$ref` target in a value.
fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref"
                    && let Some(r) = x.as_str().and_then(|r| r.strip_prefix(SCHEMAS))
                {
                    out.insert(r.to_string());
                } else {
                    refs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// Adds to `schemas` the definitions `roots` refer to, transitively.
fn close_over(schemas: &mut Map<String, Value>, roots: &Value) {
    let defs = &builtin_schemas().definitions;
    let mut todo = BTreeSet::new();
    refs(roots, &mut todo);
    for s in schemas.values() {
        refs(s, &mut todo);
    }
    while let Some(name) = todo.pop_first() {
        if schemas.contains_key(&name) {
            continue;
        }
        if let Some(d) = defs.get(&name) {
            refs(d, &mut todo);
            schemas.insert(name, d.clone());
        }
    }
}

/// The OpenAPI v3 document of one group-version, or `None` when nothing is served there.
fn group_version_doc(resources: &[Arc<Resource>]) -> Value {
    let mut paths = BTreeMap::new();
    let mut schemas = Map::new();
    for res in resources {
        if res.plural.contains('/') {
            continue;
        }
        resource_paths(res, &mut paths);
        let (kind_def, list_def) = definition_name(res);
        if res.builtin.is_none() {
            schemas.insert(kind_def.clone(), custom_definition(res));
        } else if let Some(d) = builtin_schemas().definitions.get(&kind_def) {
            schemas.insert(kind_def.clone(), d.clone());
        }
        schemas.insert(list_def, list_definition(res, &kind_def));
    }
    let paths = Value::Object(paths.into_iter().collect());
    close_over(&mut schemas, &paths);
    let schemas: BTreeMap<String, Value> = schemas.into_iter().collect();
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v1.{}.0", crate::endpoints::discovery::minor())},
        "paths": paths,
        "components": {"schemas": schemas}
    })
}

/// Swagger 2.0 form of a schema: `$ref`s to `#/definitions/`, a lone `allOf` reference back
/// to a plain `$ref`, no `nullable`.
fn to_v2_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                match k.as_str() {
                    "$ref" => {
                        let r = x.as_str().unwrap_or("").replace(SCHEMAS, "#/definitions/");
                        out.insert(k.clone(), json!(r));
                    }
                    "nullable" => {}
                    "allOf"
                        if x.as_array()
                            .is_some_and(|a| a.len() == 1 && a[0].get("$ref").is_some()) =>
                    {
                        if let Some(r) = x.pointer("/0/$ref").and_then(Value::as_str) {
                            out.insert("$ref".into(), json!(r.replace(SCHEMAS, "#/definitions/")));
                        }
                    }
                    _ => {
                        out.insert(k.clone(), to_v2_schema(x));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(to_v2_schema).collect()),
        other => other.clone(),
    }
}

fn to_v2_param(p: &Value) -> Value {
    let mut out = Map::new();
    if let Value::Object(m) = p {
        for (k, x) in m {
            if k == "schema" {
                if let Value::Object(s) = x {
                    for (sk, sv) in s {
                        out.insert(sk.clone(), sv.clone());
                    }
                }
            } else {
                out.insert(k.clone(), x.clone());
            }
        }
    }
    Value::Object(out)
}

fn to_v2_operation(op: &Value) -> Value {
    let Value::Object(m) = op else {
        return op.clone();
    };
    let mut out = Map::new();
    let mut params: Vec<Value> = m
        .get("parameters")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(to_v2_param).collect())
        .unwrap_or_default();
    if let Some(schema) = m
        .get("requestBody")
        .and_then(|b| b.get("content"))
        .and_then(Value::as_object)
        .and_then(|c| c.values().next())
        .and_then(|c| c.get("schema"))
    {
        params.insert(
            0,
            json!({"name": "body", "in": "body", "required": true, "schema": to_v2_schema(schema)}),
        );
    }
    for (k, x) in m {
        match k.as_str() {
            "parameters" | "requestBody" => {}
            "responses" => {
                let mut rs = Map::new();
                for (code, r) in x.as_object().into_iter().flatten() {
                    let mut entry = Map::new();
                    entry.insert(
                        "description".into(),
                        r.get("description").cloned().unwrap_or(json!("")),
                    );
                    if let Some(s) = r.pointer("/content/application~1json/schema") {
                        entry.insert("schema".into(), to_v2_schema(s));
                    }
                    rs.insert(code.clone(), Value::Object(entry));
                }
                out.insert(k.clone(), Value::Object(rs));
            }
            _ => {
                out.insert(k.clone(), x.clone());
            }
        }
    }
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    out.insert("consumes".into(), json!(["*/*"]));
    out.insert(
        "produces".into(),
        json!(["application/json", "application/yaml"]),
    );
    out.insert("schemes".into(), json!(["https"]));
    Value::Object(out)
}

/// The documents for one state of the registry.
#[derive(Debug)]
pub(crate) struct Documents {
    /// `/openapi/v3`
    pub(crate) v3_index: Vec<u8>,
    /// `/openapi/v3/<path>` by path (`api/v1`, `apis/apps/v1`).
    pub(crate) v3: BTreeMap<String, Vec<u8>>,
    /// `/openapi/v2`
    pub(crate) v2: Vec<u8>,
}

fn hash(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA512, bytes);
    d.as_ref().iter().map(|b| format!("{b:02X}")).collect()
}

/// Builds every document for the registry's current resources.
pub(crate) fn build(reg: &Registry) -> Documents {
    let mut by_gv: BTreeMap<(String, String), Vec<Arc<Resource>>> = BTreeMap::new();
    for r in reg.all() {
        by_gv
            .entry((r.group.clone(), r.version.clone()))
            .or_default()
            .push(r.clone());
    }
    let mut v3 = BTreeMap::new();
    let mut index = Map::new();
    let mut v2_paths = Map::new();
    let mut v2_defs = Map::new();
    for ((group, version), resources) in &by_gv {
        let doc = group_version_doc(resources);
        for (p, ops) in doc["paths"].as_object().into_iter().flatten() {
            let mut v2_ops = Map::new();
            for (verb, op) in ops.as_object().into_iter().flatten() {
                if verb == "parameters" {
                    v2_ops.insert(
                        verb.clone(),
                        Value::Array(
                            op.as_array()
                                .into_iter()
                                .flatten()
                                .map(to_v2_param)
                                .collect(),
                        ),
                    );
                } else {
                    v2_ops.insert(verb.clone(), to_v2_operation(op));
                }
            }
            v2_paths.insert(p.clone(), Value::Object(v2_ops));
        }
        for (name, s) in doc["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
        {
            v2_defs.insert(name.clone(), to_v2_schema(s));
        }
        let path = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        let bytes = serde_json::to_vec(&doc).unwrap_or_default();
        index.insert(
            path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", hash(&bytes))}),
        );
        v3.insert(path, bytes);
    }
    let v2_defs: BTreeMap<String, Value> = v2_defs.into_iter().collect();
    let v2_paths: BTreeMap<String, Value> = v2_paths.into_iter().collect();
    let v2 = json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": format!("v1.{}.0", crate::endpoints::discovery::minor())},
        "paths": v2_paths,
        "definitions": v2_defs,
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}]
    });
    Documents {
        v3_index: serde_json::to_vec(&json!({"paths": index})).unwrap_or_default(),
        v3,
        v2: serde_json::to_vec(&v2).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::resources::builtins;

    fn registry() -> Registry {
        let mut reg = Registry::default();
        for r in builtins() {
            reg.insert(r);
        }
        reg
    }

    /// The OpenAPI v3 document of `group_version` (`apis/apps/v1`), parsed.
    fn v3_document(docs: &Documents, group_version: &str) -> Value {
        serde_json::from_slice(docs.v3.get(group_version).map_or(&[][..], |v| v))
            .unwrap_or_default()
    }

    #[test]
    fn apps_v1_has_deployments_with_field_validation_on_patch() {
        let docs = build(&registry());
        let apps = v3_document(&docs, "apis/apps/v1");
        let patch =
            &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": "apps", "version": "v1", "kind": "Deployment"})
        );
        assert!(
            patch["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["name"] == "fieldValidation"))
        );
        let schemas = &apps["components"]["schemas"];
        assert_eq!(
            schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        // Referenced definitions are there, unreferenced ones are not.
        assert!(schemas.get("io.k8s.api.core.v1.PodTemplateSpec").is_some());
        assert!(schemas.get("io.k8s.api.core.v1.ConfigMap").is_none());
        assert!(
            apps["paths"]
                .get("/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale")
                .is_some()
        );
        let index: Value = serde_json::from_slice(&docs.v3_index).unwrap_or_default();
        let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap_or("");
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
        let v2: Value = serde_json::from_slice(&docs.v2).unwrap_or_default();
        assert_eq!(v2["swagger"], "2.0");
        assert_eq!(
            v2["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
    }

    #[test]
    fn built_in_lists_carry_kube_apiservers_merge_keys() {
        let docs = build(&registry());
        let apps = v3_document(&docs, "apis/apps/v1");
        let schemas = &apps["components"]["schemas"];
        let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
        let ports = &schemas["io.k8s.api.core.v1.Container"]["properties"]["ports"];
        assert_eq!(
            ports["x-kubernetes-list-map-keys"],
            json!(["containerPort", "protocol"])
        );
        assert_eq!(
            schemas["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]["x-kubernetes-map-type"],
            "atomic"
        );
        let v2: Value = serde_json::from_slice(&docs.v2).unwrap_or_default();
        assert_eq!(
            v2["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["volumes"]["x-kubernetes-patch-merge-key"],
            "name"
        );
    }
}
