//! `patch`: JSON, merge and strategic-merge patches applied to the stored object and written
//! as an update, and server-side apply with its field ownership.

use std::sync::Arc;

use serde_json::{Value, json};

use super::WriteOptions;
use super::checks::require_object;
use super::create::{CreateFlags, create};
use super::update::{UpdateInput, update};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::semantics::fields::{self, DecodeError};
use crate::semantics::managed::{self, Scope};
use crate::semantics::patch::{self, PatchType};
use crate::semantics::resources::Resource;
use crate::semantics::schema;
use crate::semantics::state::State;
use crate::storage::object::{self};

pub(super) fn patch_options_invalid(field: FieldError) -> ApiError {
    ApiError::invalid("meta.k8s.io", "PatchOptions", "", vec![field])
}

/// PATCH: returns the object and whether it was created (apply only).
#[allow(clippy::too_many_arguments)] // the REST verb's own parameters
pub(crate) fn patch(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    ptype: PatchType,
    body: &Value,
    scope: Scope,
    opts: &WriteOptions,
) -> ApiResult<(Value, bool)> {
    check_patch_options(res, ptype, opts)?;
    let ns = if res.namespaced { url_namespace } else { "" };
    if ptype == PatchType::Apply {
        let current = st.get(res, ns, name);
        return apply(st, res, url_namespace, name, body, scope, opts, current);
    }
    let patched = patched_object(st, res, url_namespace, name, ptype, body, opts)?;
    update(
        st,
        res,
        url_namespace,
        name,
        UpdateInput {
            body: patched,
            scope,
            managed_done: false,
            is_put: false,
        },
        opts,
    )
}

/// The patch options each patch type refuses: `force` but for apply, apply without a
/// `fieldManager`, a strategic-merge patch of a resource without patch strategies.
pub(crate) fn check_patch_options(
    res: &Resource,
    ptype: PatchType,
    opts: &WriteOptions,
) -> ApiResult<()> {
    if ptype != PatchType::Apply && opts.force.is_some() {
        return Err(patch_options_invalid(FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        )));
    }
    if ptype == PatchType::Apply && !opts.explicit_manager {
        return Err(patch_options_invalid(FieldError::required(
            "fieldManager",
            "is required for apply patch",
        )));
    }
    if ptype == PatchType::Strategic && !res.supports_strategic_merge() {
        return Err(patch::unsupported_patch(res));
    }
    Ok(())
}

/// The stored object with a JSON, merge or strategic-merge patch applied, checked as
/// kube-apiserver decodes it (types, name), before defaults, validation and admission.
pub(crate) fn patched_object(
    st: &State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    ptype: PatchType,
    body: &Value,
    opts: &WriteOptions,
) -> ApiResult<Value> {
    check_patch_options(res, ptype, opts)?;
    let ns = if res.namespaced { url_namespace } else { "" };
    let Some(current) = st.get(res, ns, name) else {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    };
    let patched = match ptype {
        PatchType::Merge => patch::merge_patch(&current, body)?,
        PatchType::Json => patch::json_patch(&current, body)?,
        PatchType::Strategic => patch::strategic_merge(res, &current, body)?,
        PatchType::Apply => return Err(ApiError::internal("unreachable patch type")),
    };
    check_patched_types(res, ptype, body, &patched)?;
    super::update::check_name(object::name(&patched), name)?;
    Ok(patched)
}

/// kube-apiserver decodes a patched built-in object into its Go type before anything else
/// looks at it, so a patch that gives a field a value of the wrong type is a 422 on the
/// `patch` field: JSON and merge patches quote the patched object and Go's JSON decoding error,
/// strategic-merge patches the patch (as Go prints a map) and the unstructured converter's.
fn check_patched_types(
    res: &Resource,
    ptype: PatchType,
    patch_body: &Value,
    patched: &Value,
) -> ApiResult<()> {
    let Some(def) = res
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of)
    else {
        return Ok(());
    };
    let bytes = serde_json::to_vec(patched).unwrap_or_default();
    let Some(error) = fields::scan(&bytes, Some(&fields::builtin_root(def))).decode_error else {
        return Ok(());
    };
    let (value, detail) = match (ptype, error) {
        (PatchType::Strategic, DecodeError::WrongType(go_error)) => {
            (go_map_format(patch_body), converter_error(&go_error))
        }
        (PatchType::Strategic, DecodeError::Base64(go_error)) => (
            go_map_format(patch_body),
            format!("error decoding from json: {go_error}"),
        ),
        (_, error) => (
            String::from_utf8_lossy(&bytes).into_owned(),
            error.message().to_string(),
        ),
    };
    Err(ApiError::invalid(
        "",
        "",
        "",
        vec![FieldError::invalid_str("patch", &value, detail)],
    ))
}

/// A JSON value as Go's `fmt` prints the `map[string]interface{}` it decodes to: maps with
/// sorted keys as `map[k:v]`, slices as `[a b]`, `<nil>` for null.
fn go_map_format(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(go_map_format)
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_map_format(&m[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// The unstructured converter's wording of a type mismatch, from Go's JSON decoding error
/// (`json: cannot unmarshal <what> into Go struct field <field> of type <type>`).
fn converter_error(go_error: &str) -> String {
    let what = go_error
        .strip_prefix("json: cannot unmarshal ")
        .and_then(|rest| rest.split(" into ").next())
        .unwrap_or("");
    let want = go_error.rsplit(" of type ").next().unwrap_or("");
    let got = match what {
        "string" => "string",
        "bool" => "bool",
        "number" => "int64",
        "array" => "slice",
        "object" => "map",
        w if w.starts_with("number ") => "float64",
        _ => what,
    };
    let primitive = matches!(
        want,
        "string" | "bool" | "int" | "int32" | "int64" | "float32" | "float64" | "uint8"
    );
    if want.starts_with("map[") {
        format!("cannot restore map from {got}")
    } else if want.starts_with("[]") {
        format!("cannot restore slice from {got}")
    } else if primitive {
        format!("cannot convert {got} to {want}")
    } else {
        format!("cannot restore struct from: {got}")
    }
}

/// Server-side apply of `config` to the stored object (`current`), written: a create when
/// there is none. Returns the object and whether it was created.
#[allow(clippy::too_many_arguments)] // the REST verb's own parameters
pub(super) fn apply(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    name: &str,
    config: &Value,
    scope: Scope,
    opts: &WriteOptions,
    current: Option<Arc<Value>>,
) -> ApiResult<(Value, bool)> {
    let Applied { object, creates } = applied(res, name, config, scope, opts, current.as_deref())?;
    if creates {
        let created = create(
            st,
            res,
            url_namespace,
            object,
            opts,
            CreateFlags {
                preset_managed_fields: true,
                seed: false,
            },
        )?;
        return Ok((created, true));
    }
    update(
        st,
        res,
        url_namespace,
        name,
        UpdateInput {
            body: object,
            scope,
            managed_done: true,
            is_put: false,
        },
        opts,
    )
}

/// The outcome of an apply before it is written.
pub(crate) struct Applied {
    /// The object with the configuration merged in and its managed fields recorded.
    pub(crate) object: Value,
    /// Whether there was no object, so the write is a create.
    pub(crate) creates: bool,
}

/// Server-side apply of `config` to `current` (the object as the served version has it),
/// not written: the configuration checked as kube-apiserver's typed patch checks it, merged
/// with field ownership, conflicts refused unless forced.
pub(crate) fn applied(
    res: &Arc<Resource>,
    name: &str,
    config: &Value,
    scope: Scope,
    opts: &WriteOptions,
    current: Option<&Value>,
) -> ApiResult<Applied> {
    require_object(config)?;
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    // The applied configuration must be of the endpoint's kind and version.
    if kind != res.kind || api_version != res.api_version() {
        let (g, v) = crate::semantics::resources::split_api_version(api_version);
        return Err(ApiError::bad_request(format!(
            "invalid object type: {g}/{v}, Kind={kind}"
        )));
    }
    if object::meta(config).is_some_and(|m| m.get("managedFields").is_some_and(|v| !v.is_null())) {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    // The typed patch is built from the schema: a field it does not declare fails the apply,
    // whatever fieldValidation says.
    // So does a value of the wrong type for a built-in kind (a ConfigMap's `data: true`): it
    // would be stored as no client could decode it.
    let definition = res
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of);
    let (unknown, decode_error) = if res.is_custom() {
        let mut probe = config.clone();
        match res.custom.as_ref().and_then(|c| c.schema.as_ref()) {
            Some(schema_v) => (schema::prune_and_default(&mut probe, schema_v), None),
            None => (Vec::new(), None),
        }
    } else {
        match definition {
            Some(def) => {
                let bytes = serde_json::to_vec(config).unwrap_or_default();
                let problems = fields::scan(&bytes, Some(&fields::builtin_root(def)));
                (problems.unknown_paths(), problems.decode_error)
            }
            None => (Vec::new(), None),
        }
    };
    let gvk = format!("{}/{}, Kind={}", res.group, res.version, res.kind);
    let at = format!("{}/{}", object::namespace(config), object::name(config));
    let typed_patch_failure = |problem: String| {
        ApiError::new(
            500,
            "",
            format!("failed to create typed patch object ({at}; {gvk}): {problem}"),
        )
    };
    if let Some(first) = unknown.first() {
        return Err(typed_patch_failure(format!(
            ".{first}: field not declared in schema"
        )));
    }
    // A value of the wrong type fails the typed patch, worded as the typed patch object words
    // it where the walk finds the value; a `[]byte` that is not base64 passes it and fails the
    // conversion to the Go type afterwards.
    if let Some(problem) = definition.and_then(|def| fields::typed_patch_error(config, def)) {
        return Err(typed_patch_failure(problem));
    }
    match decode_error {
        Some(DecodeError::Base64(go_error)) => {
            return Err(ApiError::new(
                500,
                "",
                format!(
                    "failed to convert new object ({at}; {gvk}) to proper version: unable to \
                     convert unstructured object to {gvk}: error decoding from json: {go_error}"
                ),
            ));
        }
        Some(DecodeError::WrongType(go_error)) => return Err(typed_patch_failure(go_error)),
        None => {}
    }
    let mut config = config.clone();
    if let Some(def) = definition {
        fields::canonical_apply_config(&mut config, def);
    }
    // Without a name, an apply updates the URL's object but cannot create one.
    match object::name(&config) {
        "" if current.is_some() => object::set_meta(&mut config, "name", Some(json!(name))),
        n => super::update::check_name(n, name)?,
    }
    let now = object::now_rfc3339();
    let force = opts.force.unwrap_or(false);
    if current.is_none() && scope != Scope::Main {
        return Err(ApiError::not_found(&res.group, &res.plural, name));
    }
    let mut result = managed::apply(res, current, &config, &opts.manager, force, scope, &now);
    // kube-apiserver's lastAppliedManager: `kubectl apply --server-side` (manager "kubectl")
    // takes over, without a conflict, the fields a client-side apply's last-applied
    // annotation shows with their live values.
    if opts.manager == managed::KUBECTL_MANAGER
        && let (Err(conflicts), Some(live)) = (&result, current)
        && let Some(allowed) = managed::last_applied_fields(res, live, scope)
    {
        let rest: Vec<managed::Conflict> = conflicts
            .iter()
            .filter(|c| !allowed.contains(&c.path))
            .cloned()
            .collect();
        result = if rest.is_empty() {
            managed::apply(res, current, &config, &opts.manager, true, scope, &now)
        } else {
            Err(rest)
        };
    }
    let mut merged =
        result.map_err(|c| managed::conflict_error(&res.group, &res.plural, name, &c))?;
    // lastAppliedUpdater: the same apply keeps an existing annotation in step with it.
    if opts.manager == managed::KUBECTL_MANAGER && current.is_some_and(managed::has_last_applied) {
        managed::set_last_applied(&mut merged, &config);
    }
    let Some(live) = current else {
        return Ok(Applied {
            object: merged,
            creates: true,
        });
    };
    // The applied configuration is no precondition unless it carries one.
    let rv = match object::resource_version(&config) {
        "" => object::resource_version(live).to_string(),
        rv => rv.to_string(),
    };
    object::set_meta(&mut merged, "resourceVersion", Some(json!(rv)));
    Ok(Applied {
        object: merged,
        creates: false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::semantics::registry::fixture::{err, ok, opts, res, state, stored_cm};

    fn patch_cm(st: &mut State, ptype: PatchType, body: Value) -> ApiResult<(Value, bool)> {
        let cms = res(st, "", "configmaps");
        let o = WriteOptions {
            patch: ptype != PatchType::Apply,
            ..opts()
        };
        patch(st, &cms, "ns", "a", ptype, &body, Scope::Main, &o)
    }

    #[test]
    fn each_patch_type_changes_the_stored_object() {
        let mut st = state();
        stored_cm(&mut st, "a", json!({"k": "1", "drop": "x"}));
        let (obj, created) = ok(patch_cm(
            &mut st,
            PatchType::Merge,
            json!({"data": {"k": "2", "drop": null}}),
        ));
        assert!(!created);
        assert_eq!(obj["data"], json!({"k": "2"}));
        let (obj, _) = ok(patch_cm(
            &mut st,
            PatchType::Json,
            json!([{"op": "add", "path": "/data/j", "value": "3"}]),
        ));
        assert_eq!(obj["data"]["j"], "3");
        let (obj, _) = ok(patch_cm(
            &mut st,
            PatchType::Strategic,
            json!({"data": {"s": "4"}}),
        ));
        assert_eq!(obj["data"], json!({"k": "2", "j": "3", "s": "4"}));
    }

    #[test]
    fn a_field_of_the_wrong_type_is_refused_by_every_patch_type() {
        let mut st = state();
        let original = stored_cm(&mut st, "a", json!({"k": "v"}));
        for (ptype, body, detail) in [
            (
                PatchType::Json,
                json!([{"op": "replace", "path": "/data", "value": "str"}]),
                "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string",
            ),
            (
                PatchType::Merge,
                json!({"data": "str"}),
                "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string",
            ),
            (
                PatchType::Strategic,
                json!({"data": "str"}),
                "cannot restore map from string",
            ),
            (
                PatchType::Strategic,
                json!({"data": {"k": 5}}),
                "cannot convert int64 to string",
            ),
        ] {
            let e = err(patch_cm(&mut st, ptype, body.clone()));
            assert_eq!(
                (e.code, e.reason.as_str()),
                (422, "Invalid"),
                "{ptype:?} {body}"
            );
            assert!(
                e.message
                    .starts_with(" \"\" is invalid: patch: Invalid value: "),
                "{}",
                e.message
            );
            assert!(
                e.message.ends_with(detail),
                "{ptype:?} {body}: {}",
                e.message
            );
        }
        assert_eq!(
            go_map_format(&json!({"data": {"k": 5, "a": [true, null]}})),
            "map[data:map[a:[true <nil>] k:5]]"
        );
        // Nothing was written.
        let cms = res(&st, "", "configmaps");
        assert_eq!(
            st.get(&cms, "ns", "a").map(|o| o["data"].clone()),
            Some(original["data"].clone())
        );
    }

    #[test]
    fn a_failing_test_operation_and_a_missing_object_are_refused() {
        let mut st = state();
        stored_cm(&mut st, "a", json!({"k": "1"}));
        let rv = st.rv();
        let e = err(patch_cm(
            &mut st,
            PatchType::Json,
            json!([{"op": "test", "path": "/data/k", "value": "2"}]),
        ));
        assert_eq!(e.code, 422);
        assert_eq!(st.rv(), rv, "a refused patch writes nothing");
        let cms = res(&st, "", "configmaps");
        let e = err(patch(
            &mut st,
            &cms,
            "ns",
            "missing",
            PatchType::Merge,
            &json!({"data": {}}),
            Scope::Main,
            &opts(),
        ));
        assert_eq!(e.code, 404);
    }

    /// Found by `tests/fuzz.rs` (patch_application): an apply giving a built-in field a value
    /// of the wrong type was stored, and a client could no longer decode the object.
    #[test]
    fn apply_of_a_field_of_the_wrong_type_is_refused() {
        let mut st = state();
        let original = stored_cm(&mut st, "a", json!({"k": "v"}));
        let cms = res(&st, "", "configmaps");
        let o = WriteOptions {
            manager: "me".into(),
            explicit_manager: true,
            ..opts()
        };
        // Worded as kube-apiserver v1.37.1 words each (its typed patch object's errors).
        for (name, config, detail) in [
            (
                "fresh",
                json!({"data": true}),
                ".data: expected map, got &{true}",
            ),
            (
                "a",
                json!({"data": {"k": 5}}),
                ".data.k: expected string, got &value.valueUnstructured{Value:5}",
            ),
            (
                "a",
                json!({"metadata": {"labels": ["x"]}}),
                ".metadata.labels: expected map, got &{[x]}",
            ),
            (
                "a",
                json!({"data": {"k": ["x"]}}),
                ".data.k: expected string, got &value.valueUnstructured{Value:[]interface {}{\"x\"}}",
            ),
            (
                "a",
                json!({"data": {"k": true}}),
                ".data.k: expected string, got &value.valueUnstructured{Value:true}",
            ),
        ] {
            let mut config = config;
            config["apiVersion"] = json!("v1");
            config["kind"] = json!("ConfigMap");
            config["metadata"]["name"] = json!(name);
            let e = err(patch(
                &mut st,
                &cms,
                "ns",
                name,
                PatchType::Apply,
                &config,
                Scope::Main,
                &o,
            ));
            assert_eq!(e.code, 500, "{config}");
            assert_eq!(
                e.message,
                format!(
                    "failed to create typed patch object (/{name}; /v1, Kind=ConfigMap): {detail}"
                )
            );
        }
        // Nothing was written.
        assert!(st.get(&cms, "ns", "fresh").is_none());
        assert_eq!(
            st.get(&cms, "ns", "a").map(|o| o["data"].clone()),
            Some(original["data"].clone())
        );
    }

    #[test]
    fn apply_creates_then_owns_fields() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "applied"}, "data": {"k": "1"}});
        let o = WriteOptions {
            manager: "me".into(),
            explicit_manager: true,
            ..opts()
        };
        let (obj, created) = ok(patch(
            &mut st,
            &cms,
            "ns",
            "applied",
            PatchType::Apply,
            &config,
            Scope::Main,
            &o,
        ));
        assert!(created);
        assert_eq!(obj["data"]["k"], "1");
        let managers: Vec<&str> = obj["metadata"]["managedFields"]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m["manager"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(managers, ["me"]);
        // Another manager's conflicting apply is a 409 unless forced.
        let other = WriteOptions {
            manager: "other".into(),
            explicit_manager: true,
            ..opts()
        };
        let mut theirs = config.clone();
        theirs["data"]["k"] = json!("2");
        let e = err(patch(
            &mut st,
            &cms,
            "ns",
            "applied",
            PatchType::Apply,
            &theirs,
            Scope::Main,
            &other,
        ));
        assert_eq!(e.code, 409);
        // Force is for apply only.
        let forced_merge = WriteOptions {
            force: Some(true),
            ..opts()
        };
        let e = err(patch(
            &mut st,
            &cms,
            "ns",
            "applied",
            PatchType::Merge,
            &json!({}),
            Scope::Main,
            &forced_merge,
        ));
        assert_eq!(e.code, 422);
    }
}
