//! `create`: `rest.BeforeCreate` — defaults, generated names, validation, admission of the
//! namespace — then a new object in storage.

use std::sync::Arc;

use serde_json::{Value, json};

use super::WriteOptions;
use super::checks::{
    check_namespace, check_storage_size, check_type_meta, crd_of, field_problems, prune_builtin,
    prune_custom, require_object, validate_custom,
};
use super::effects::after_put;
use crate::error::{ApiError, ApiResult};
use crate::semantics::builtin;
use crate::semantics::managed::{self, Scope};
use crate::semantics::resources::Resource;
use crate::semantics::state::State;
use crate::semantics::validation;
use crate::storage::object::{self, ensure_object};

/// How a create is made.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CreateFlags {
    /// `managedFields` were computed by an apply.
    pub(crate) preset_managed_fields: bool,
    /// Seeding from a test: no namespace admission, the given `status` is kept.
    pub(crate) seed: bool,
}

/// POST: creates an object.
/// The longest generateName prefix kept (`maxGeneratedNameLength`: 63 - 5).
const MAX_GENERATED_PREFIX: usize = 58;

pub(crate) fn create(
    st: &mut State,
    res: &Arc<Resource>,
    url_namespace: &str,
    mut obj: Value,
    opts: &WriteOptions,
    flags: CreateFlags,
) -> ApiResult<Value> {
    let preset_managed_fields = flags.preset_managed_fields;
    require_object(&obj)?;
    object::whole_floats_to_integers(&mut obj);
    if let Some(def) = res
        .builtin
        .and_then(crate::semantics::builtin_schema::definition_of)
    {
        crate::semantics::fields::canonical_bytes(&mut obj, def);
    }
    let given_status = if flags.seed {
        obj.get("status").cloned()
    } else {
        None
    };
    check_type_meta(res, &obj)?;
    let body_ns = object::namespace(&obj).to_string();
    if res.namespaced {
        if body_ns.is_empty() {
            object::set_meta(&mut obj, "namespace", Some(json!(url_namespace)));
        } else if body_ns != url_namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    } else {
        object::set_meta(&mut obj, "namespace", None);
    }
    object::set_type_meta(&mut obj, &res.api_version(), &res.kind);
    let meta = object::meta_mut(&mut obj);
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "selfLink",
    ] {
        meta.remove(field);
    }
    // Managed fields the request sets are where its own entry starts from.
    let mut entries = Vec::new();
    if !preset_managed_fields {
        if let managed::Requested::Entries(e) =
            managed::requested_entries(res, meta.get("managedFields"))
        {
            entries = e;
        }
        meta.remove("managedFields");
    }
    // Generate the name first: validation sees the generated one.
    // names.SimpleNameGenerator: the prefix is cut to 58 bytes, leaving room for the
    // 5-character suffix in a 63-character name.
    let generate_name = {
        let full = object::meta_str(&obj, "generateName");
        let mut end = full.len().min(MAX_GENERATED_PREFIX);
        while !full.is_char_boundary(end) {
            end -= 1;
        }
        full[..end].to_string()
    };
    let mut generated = false;
    if object::name(&obj).is_empty() && !generate_name.is_empty() {
        let candidate = format!("{generate_name}{}", object::random_suffix(5));
        object::set_meta(&mut obj, "name", Some(json!(candidate)));
        generated = true;
    }
    if res.is_custom() && res.has_status() {
        ensure_object(&mut obj).remove("status");
    }
    // Decoding first (pruning, strict-decoding errors), validation after.
    let unknown = if res.is_custom() {
        prune_custom(res, &mut obj)
    } else {
        prune_builtin(res, &mut obj, opts.patch)
    };
    if !preset_managed_fields {
        field_problems(res, opts, &obj, unknown)?;
    }
    // The system fields exist before the strategy runs (a Job's selector names its uid).
    object::set_meta(&mut obj, "uid", Some(json!(object::new_uid())));
    builtin::prepare_create(res, &mut obj)?;
    // Managed fields are recorded from the decoded, defaulted object, before admission and
    // before the storage allocates what it allocates.
    let mut tracked = obj.clone();
    builtin::admit_create(st, res, &mut obj)?;
    builtin::allocate(st, res, &mut obj);
    if let Some(s) = given_status {
        ensure_object(&mut tracked).insert("status".into(), s.clone());
        ensure_object(&mut obj).insert("status".into(), s);
    }
    if res.is_custom() {
        validate_custom(res, &obj, None, opts)?;
    }
    res.invalid_if_any(
        &obj,
        validation::object_meta_errors(
            &obj,
            res.name_rule(),
            res.namespaced,
            res.builtin.is_some(),
        ),
    )?;
    builtin::validating_admission(st, res, &obj, None)?;
    let namespace = object::namespace(&obj).to_string();
    if !flags.seed {
        check_namespace(st, res, &namespace, object::name(&obj))?;
    }
    if res.is_custom()
        && let Some((_, crd_obj)) = crd_of(st, res)
        && object::is_deleting(&crd_obj)
    {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "create not allowed while custom resource definition is terminating",
        ));
    }
    if st.get(res, &namespace, object::name(&obj)).is_some() {
        if generated {
            // Retry with another suffix, as the API server does for generated names.
            for _ in 0..16 {
                let candidate = format!("{generate_name}{}", object::random_suffix(5));
                if st.get(res, &namespace, &candidate).is_none() {
                    object::set_meta(&mut obj, "name", Some(json!(candidate)));
                    break;
                }
            }
        }
        if st.get(res, &namespace, object::name(&obj)).is_some() {
            return Err(ApiError::already_exists(
                &res.group,
                &res.plural,
                object::name(&obj),
            ));
        }
    }
    let now = object::now_rfc3339();
    object::set_meta(&mut obj, "creationTimestamp", Some(json!(now)));
    if res.tracks_generation() {
        object::set_meta(&mut obj, "generation", Some(json!(1)));
    }
    if !preset_managed_fields {
        managed::record_update(
            res,
            &mut entries,
            None,
            &tracked,
            &opts.manager,
            Scope::Main,
            &now,
        );
        managed::write_entries(&mut obj, &entries);
    }
    if opts.dry_run {
        return Ok(obj);
    }
    check_storage_size(&obj)?;
    let stored = st.put(res, obj);
    after_put(st, res, None, &stored);
    Ok((*stored).clone())
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use serde_json::json;

    use super::*;
    use crate::semantics::registry::fixture::{cm, err, ok, opts, res, state, stored_cm};

    #[test]
    fn fills_server_fields_and_drops_client_ones() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let mut body = cm("a", json!({"k": "v"}));
        object::set_meta(&mut body, "uid", Some(json!("forged")));
        object::set_meta(&mut body, "generation", Some(json!(7)));
        let obj = ok(create(
            &mut st,
            &cms,
            "ns",
            body,
            &opts(),
            CreateFlags::default(),
        ));
        assert_eq!(object::namespace(&obj), "ns");
        assert_ne!(object::uid(&obj), "forged");
        assert!(!object::uid(&obj).is_empty());
        assert_eq!(obj.pointer("/metadata/generation"), None);
        assert!(obj.pointer("/metadata/creationTimestamp").is_some());
        assert_eq!(object::resource_version(&obj), st.rv().to_string());
        assert_eq!(
            st.get(&cms, "ns", "a").map(|o| o["data"]["k"].clone()),
            Some(json!("v"))
        );
    }

    #[test]
    fn refuses_what_kube_apiserver_refuses() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        stored_cm(&mut st, "a", json!({}));
        let create_cm = |st: &mut State, ns: &str, body: Value| {
            create(st, &cms, ns, body, &opts(), CreateFlags::default())
        };
        assert_eq!(err(create_cm(&mut st, "ns", cm("a", json!({})))).code, 409);
        let mut other_ns = cm("b", json!({}));
        object::set_meta(&mut other_ns, "namespace", Some(json!("default")));
        assert_eq!(err(create_cm(&mut st, "ns", other_ns)).code, 400);
        // NamespaceLifecycle: no namespace, no create.
        let e = err(create_cm(&mut st, "missing", cm("c", json!({}))));
        assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
        // Metadata validation names the field.
        let e = err(create_cm(&mut st, "ns", cm("Not_A_Name", json!({}))));
        assert_eq!(e.code, 422);
        assert!(e.message.contains("metadata.name"), "{}", e.message);
        assert_eq!(err(create_cm(&mut st, "ns", json!([1]))).code, 400);
    }

    #[test]
    fn data_and_object_size_limits_are_kube_apiservers() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let mut make =
            |body: Value| create(&mut st, &cms, "ns", body, &opts(), CreateFlags::default());
        let mib = 1024 * 1024;
        let e = err(make(cm("big", json!({"k": "x".repeat(mib + 1)}))));
        assert_eq!(
            e.message,
            "ConfigMap \"big\" is invalid: []: Too long: may not be more than 1048576 bytes"
        );
        ok(make(cm("fits", json!({"k": "x".repeat(mib - 100)}))));
        // binaryData counts decoded, together with data.
        let mut both = cm("both", json!({"k": "x".repeat(mib / 2)}));
        both["binaryData"] =
            json!({"b": base64::engine::general_purpose::STANDARD.encode(vec![0u8; mib / 2 + 1])});
        assert_eq!(err(make(both)).code, 422);
        // Under the data limit, over what storage takes: etcd's 500.
        let mut huge = cm("huge", json!({"k": "x".repeat(mib - 100)}));
        object::set_meta(
            &mut huge,
            "annotations",
            Some(json!({"a": "x".repeat(250 * 1024)})),
        );
        let fins: Vec<String> = (0..9000)
            .map(|i| format!("example.com/f{i:05}{}", "x".repeat(50)))
            .collect();
        object::set_meta(&mut huge, "finalizers", Some(json!(fins)));
        let e = err(make(huge));
        assert_eq!(
            (e.code, e.message.as_str()),
            (500, "etcdserver: request is too large")
        );
        let secrets = res(&st, "", "secrets");
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "stringData": {"k": "x".repeat(mib + 1)}});
        let e = err(create(
            &mut st,
            &secrets,
            "ns",
            secret,
            &opts(),
            CreateFlags::default(),
        ));
        assert_eq!(
            e.message,
            "Secret \"s\" is invalid: data: Too long: may not be more than 1048576 bytes"
        );
    }

    #[test]
    fn dry_run_stores_nothing() {
        let mut st = state();
        let cms = res(&st, "", "configmaps");
        let rv = st.rv();
        let dry = WriteOptions {
            dry_run: true,
            ..opts()
        };
        let obj = ok(create(
            &mut st,
            &cms,
            "ns",
            cm("a", json!({})),
            &dry,
            CreateFlags::default(),
        ));
        assert_eq!(object::name(&obj), "a");
        assert_eq!(st.rv(), rv);
        assert!(st.get(&cms, "ns", "a").is_none());
    }
}
