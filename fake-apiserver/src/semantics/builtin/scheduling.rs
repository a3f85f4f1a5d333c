//! PriorityClasses (`scheduling.k8s.io/v1`) and the `Priority` admission plugin, which gives a
//! new Pod the priority and preemption policy of its class (or of the global default class).
//!
//! kube-apiserver creates the two system classes at start; they cannot be deleted, and no
//! other class may take a `system-` name. A user's class is worth at most
//! [`HIGHEST_USER_PRIORITY`], its `value` and `preemptionPolicy` never change, and only one
//! class may be the global default.

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, FieldError};
use crate::semantics::resources::{Builtin, Resource};
use crate::semantics::state::State;
use crate::semantics::validation::render;
use crate::storage::object;

/// `scheduling.HighestUserDefinablePriority`.
pub(super) const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;

/// The classes kube-apiserver creates at start: name, value, description.
const SYSTEM_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

const GROUP: &str = "scheduling.k8s.io";
const PREEMPT_LOWER: &str = "PreemptLowerPriority";
const POLICIES: &[&str] = &[PREEMPT_LOWER, "Never"];

/// The system classes as kube-apiserver's start-up creates them, for a new server to seed.
pub(crate) fn system_priority_classes() -> Vec<Value> {
    SYSTEM_CLASSES
        .iter()
        .map(|(name, value, description)| {
            json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": description,
            })
        })
        .collect()
}

/// `SetDefaults_PriorityClass` and `PrepareForCreate`.
pub(super) fn prepare_create(obj: &mut Value) {
    default(obj);
    object::set_meta(obj, "generation", Some(json!(1)));
}

/// `SetDefaults_PriorityClass`: the preemption policy.
pub(super) fn default(obj: &mut Value) {
    if let Some(m) = obj.as_object_mut() {
        super::set_default(m, "preemptionPolicy", json!(PREEMPT_LOWER));
    }
}

fn value(obj: &Value) -> i64 {
    obj.get("value").and_then(Value::as_i64).unwrap_or(0)
}

fn global_default(obj: &Value) -> bool {
    obj.get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// `ValidatePriorityClass` after its `ValidateObjectMeta` (whose errors `meta` holds, so that
/// one 422 lists them first, as Go's does).
pub(super) fn errors(obj: &Value, meta: Vec<FieldError>) -> Vec<FieldError> {
    let mut errs = meta;
    let name = object::name(obj);
    let value = value(obj);
    if name.starts_with("system-") {
        if let Err(why) = known_system_class(name, value, global_default(obj)) {
            errs.push(FieldError::forbidden(
                "metadata.name",
                format!(
                    "priority class names with 'system-' prefix are reserved for system use only. error: {why}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        ));
    }
    match obj.get("preemptionPolicy").and_then(Value::as_str) {
        None => {}
        Some("") => errs.push(FieldError::required("preemptionPolicy", "")),
        Some(p) if POLICIES.contains(&p) => {}
        Some(p) => errs.push(FieldError::not_supported("preemptionPolicy", p, POLICIES)),
    }
    errs
}

/// `IsKnownSystemPriorityClass`.
fn known_system_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, want, _)) = SYSTEM_CLASSES.iter().find(|(n, ..)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if value != *want {
        return Err(format!("value of {name} PriorityClass must be {want}"));
    }
    if global_default {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
}

/// `ValidatePriorityClassUpdate`'s own checks: the value and the preemption policy are
/// immutable.
pub(super) fn update_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if value(old) != value(new) {
        errs.push(FieldError::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let policy = |o: &Value| o.get("preemptionPolicy").cloned().unwrap_or(Value::Null);
    if policy(old) != policy(new) {
        errs.push(FieldError::invalid(
            "preemptionPolicy",
            render(&policy(new)),
            "field is immutable",
        ));
    }
    errs
}

/// The `Priority` plugin's validation of a class being created (`old` is `None`) or updated:
/// only one class may be the global default.
pub(crate) fn admit_class(
    st: &State,
    res: &Resource,
    obj: &Value,
    old: Option<&Value>,
) -> ApiResult<()> {
    if !global_default(obj) {
        return Ok(());
    }
    let name = object::name(obj);
    match default_class(st, res) {
        Some(current) if old.is_none() || object::name(&current) != name => {
            Err(ApiError::forbidden(
                &res.group,
                &res.plural,
                name,
                &format!(
                    "PriorityClass {} is already marked as default. Only one default can exist",
                    object::name(&current)
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// The global default class; of several (a race can make them), the one of lowest value.
fn default_class(st: &State, res: &Resource) -> Option<Value> {
    st.all_objects(res, None)
        .into_iter()
        .filter(|c| global_default(c))
        .min_by_key(|c| value(c))
        .map(|c| (*c).clone())
}

/// The system classes cannot be deleted (their REST storage's `Delete`; a delete of the
/// collection does not ask it).
pub(crate) fn check_delete(res: &Resource, name: &str) -> ApiResult<()> {
    if res.builtin == Some(Builtin::PriorityClass)
        && SYSTEM_CLASSES.iter().any(|(n, ..)| *n == name)
    {
        return Err(ApiError::forbidden(
            &res.group,
            &res.plural,
            name,
            "this is a system priority class and cannot be deleted",
        ));
    }
    Ok(())
}

/// The priority class a new Pod resolves to, as the `Priority` plugin finds it: `class` by its
/// name, or the global default class when it names none. `Ok((name, value, policy))`, the name
/// empty and the value 0 when there is no default class; `Err` with the reason to forbid.
pub(super) fn resolve(st: &State, class: &str) -> Result<(String, i64, String), String> {
    let Some(res) = st.registry.get(GROUP, "v1", "priorityclasses") else {
        return Ok((String::new(), 0, PREEMPT_LOWER.to_string()));
    };
    let found = if class.is_empty() {
        default_class(st, &res)
    } else {
        Some(
            st.get(&res, "", class)
                .map(|c| (*c).clone())
                .ok_or_else(|| format!("no PriorityClass with name {class} was found"))?,
        )
    };
    Ok(match found {
        Some(c) => (
            object::name(&c).to_string(),
            value(&c),
            c.get("preemptionPolicy")
                .and_then(Value::as_str)
                .unwrap_or(PREEMPT_LOWER)
                .to_string(),
        ),
        None => (String::new(), 0, PREEMPT_LOWER.to_string()),
    })
}
