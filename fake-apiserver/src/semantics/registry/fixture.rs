//! A state to run registry operations on in unit tests: the built-in resources, the
//! namespaces `default` and `ns`, and a ConfigMap helper.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::config::Config;
use crate::error::ApiError;
use crate::semantics::registry::{CreateFlags, WriteOptions, create};
use crate::semantics::resources::{Resource, builtins};
use crate::semantics::state::State;

pub(super) fn state() -> State {
    let mut st = State::new(Config::default());
    for r in builtins() {
        st.register(r);
    }
    let namespaces = res(&st, "", "namespaces");
    for ns in ["default", "ns"] {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        ok(create(
            &mut st,
            &namespaces,
            "",
            obj,
            &opts(),
            CreateFlags::default(),
        ));
    }
    st
}

pub(super) fn res(st: &State, group: &str, plural: &str) -> Arc<Resource> {
    st.registry
        .get(group, "v1", plural)
        .unwrap_or_else(|| panic!("no {plural}.{group}"))
}

pub(super) fn opts() -> WriteOptions {
    WriteOptions {
        manager: "unit-test".into(),
        ..WriteOptions::default()
    }
}

pub(super) fn cm(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

pub(super) fn ok<T>(r: Result<T, ApiError>) -> T {
    r.unwrap_or_else(|e| panic!("{} {}: {}", e.code, e.reason, e.message))
}

pub(super) fn err<T: std::fmt::Debug>(r: Result<T, ApiError>) -> ApiError {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e,
    }
}

/// A ConfigMap `name` in `ns`, created.
pub(super) fn stored_cm(st: &mut State, name: &str, data: Value) -> Value {
    let cms = res(st, "", "configmaps");
    ok(create(
        st,
        &cms,
        "ns",
        cm(name, data),
        &opts(),
        CreateFlags::default(),
    ))
}
