//! Metadata the server owns and the options of deletion: deletion fields an update may not
//! set, finalizer-name warnings, owner-reference and generateName validation, grace periods,
//! `orphanDependents` and propagation policies on first and repeated deletes.

use serde_json::{Value, json};

use super::{
    Env, Failure, GROUP, Outcome, Raw, VERSION, causes, ensure, ensure_eq, ensure_status, raw,
};

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn widgets(ns: &str) -> String {
    format!("/apis/{GROUP}/{VERSION}/namespaces/{ns}/widgets")
}

async fn send(env: &Env, method: &str, path: &str, ct: &str, body: Value) -> Result<Raw, Failure> {
    let bytes = serde_json::to_vec(&body)?;
    raw(&env.client, method, path, Some(ct), None, Some(bytes)).await
}

fn body(r: &Raw) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

const RFC1123: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

pub(super) async fn deletion_fields_and_finalizer_warnings(env: &Env) -> Outcome {
    let ns = env.namespace("delfields").await?;
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"name": "c", "finalizers": ["example.com/keep"]}, "data": {"a": "1"}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "create: {}", body(&r));
    let mut c = r.json();
    c["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
    c["metadata"]["deletionGracePeriodSeconds"] = json!(5);
    let both = "ConfigMap \"c\" is invalid: [metadata.deletionTimestamp: Invalid value: \"2030-01-01T00:00:00Z\": field is immutable, metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable]";
    let r = send(
        env,
        "PUT",
        &format!("{}/c", cms(&ns)),
        "application/json",
        c.clone(),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        both,
        "update setting the deletion fields"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{}/c", cms(&ns)),
        "application/merge-patch+json",
        json!({"metadata": {"deletionTimestamp": "2030-01-01T00:00:00Z", "deletionGracePeriodSeconds": 5}}),
    )
    .await?;
    ensure_status!(r, 422, "Invalid", both, "patch setting the deletion fields");
    // A negative grace period deletes at once (0); the finalizer keeps the object.
    let r = send(
        env,
        "DELETE",
        &format!("{}/c", cms(&ns)),
        "application/json",
        json!({"gracePeriodSeconds": -5}),
    )
    .await?;
    ensure_eq!(
        r.status,
        200,
        "delete with a negative grace period: {}",
        body(&r)
    );
    let deleted = r.json();
    ensure_eq!(
        deleted["metadata"]["deletionGracePeriodSeconds"],
        json!(0),
        "grace period"
    );
    let stamp = deleted["metadata"]["deletionTimestamp"].clone();
    ensure!(stamp.is_string(), "deletionTimestamp: {deleted}");
    // Once set, an update's deletionTimestamp is ignored; its grace period is not.
    let mut c = deleted.clone();
    c["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
    c["data"]["a"] = json!("2");
    let r = send(
        env,
        "PUT",
        &format!("{}/c", cms(&ns)),
        "application/json",
        c.clone(),
    )
    .await?;
    ensure_eq!(r.status, 200, "update of a deleting object: {}", body(&r));
    ensure_eq!(r.json()["metadata"]["deletionTimestamp"], stamp, "kept");
    let mut c = r.json();
    c["metadata"]["deletionGracePeriodSeconds"] = json!(5);
    let r = send(
        env,
        "PUT",
        &format!("{}/c", cms(&ns)),
        "application/json",
        c,
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "ConfigMap \"c\" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable",
        "grace period of a deleting object"
    );
    let r = send(
        env,
        "PATCH",
        &format!("{}/c", cms(&ns)),
        "application/merge-patch+json",
        json!({"metadata": {"finalizers": null}}),
    )
    .await?;
    ensure_eq!(r.status, 200, "finalizer removed");

    // Finalizer names without a domain: warned on a custom resource, for new names only.
    let r = send(
        env,
        "POST",
        &widgets(&ns),
        "application/json",
        json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget",
               "metadata": {"name": "w", "finalizers": ["nodomain", "example.com/ok", "kubernetes", "orphan"]},
               "spec": {"size": 1}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "create widget: {}", body(&r));
    let warning = |name: &str| {
        format!(
            "metadata.finalizers: \"{name}\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
        )
    };
    ensure_eq!(r.warnings(), vec![warning("nodomain")], "create warnings");
    let r = send(
        env,
        "PATCH",
        &format!("{}/w", widgets(&ns)),
        "application/json-patch+json",
        json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "other"}]),
    )
    .await?;
    ensure_eq!(r.warnings(), vec![warning("other")], "update warnings");
    let r = send(
        env,
        "PATCH",
        &format!("{}/w", widgets(&ns)),
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"x": "1"}, "finalizers": null}}),
    )
    .await?;
    ensure_eq!(
        (r.status, r.warnings()),
        (200, Vec::<String>::new()),
        "no new names"
    );
    Ok(())
}

pub(super) async fn delete_options_orphan_and_policy(env: &Env) -> Outcome {
    let ns = env.namespace("deloptions").await?;
    for name in ["o1", "o2", "o3", "o4"] {
        let r = send(
            env,
            "POST",
            &cms(&ns),
            "application/json",
            json!({"metadata": {"name": name, "finalizers": ["example.com/keep"]}}),
        )
        .await?;
        ensure_eq!(r.status, 201, "create {name}: {}", body(&r));
    }
    let finalizers = |r: &Raw| r.json()["metadata"]["finalizers"].clone();
    let r = send(
        env,
        "DELETE",
        &format!("{}/o1", cms(&ns)),
        "application/json",
        json!({"orphanDependents": true}),
    )
    .await?;
    ensure_eq!(
        finalizers(&r),
        json!(["example.com/keep", "orphan"]),
        "orphanDependents: true"
    );
    let r = raw(
        &env.client,
        "DELETE",
        &format!("{}/o2?orphanDependents=true", cms(&ns)),
        None,
        None,
        None,
    )
    .await?;
    ensure_eq!(
        finalizers(&r),
        json!(["example.com/keep", "orphan"]),
        "?orphanDependents=true"
    );
    let r = send(
        env,
        "DELETE",
        &format!("{}/o3", cms(&ns)),
        "application/json",
        json!({"orphanDependents": true, "propagationPolicy": "Background"}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Background\": orphanDependents and deletionPropagation cannot be both set",
        "both set"
    );
    ensure_eq!(
        r.causes(),
        causes(&[(
            "FieldValueInvalid",
            "propagationPolicy",
            "Invalid value: \"Background\": orphanDependents and deletionPropagation cannot be both set"
        )]),
        "causes"
    );
    let r = send(
        env,
        "DELETE",
        &format!("{}/o4", cms(&ns)),
        "application/json",
        json!({"orphanDependents": false}),
    )
    .await?;
    ensure_eq!(
        finalizers(&r),
        json!(["example.com/keep"]),
        "orphanDependents: false"
    );
    // Deleting again with another policy moves the object to that policy's finalizer.
    for (name, policy, want) in [
        ("o4", "Orphan", json!(["example.com/keep", "orphan"])),
        (
            "o4",
            "Foreground",
            json!(["example.com/keep", "foregroundDeletion"]),
        ),
        ("o1", "Background", json!(["example.com/keep"])),
        (
            "o2",
            "Foreground",
            json!(["example.com/keep", "foregroundDeletion"]),
        ),
    ] {
        let r = send(
            env,
            "DELETE",
            &format!("{}/{name}", cms(&ns)),
            "application/json",
            json!({"propagationPolicy": policy}),
        )
        .await?;
        ensure_eq!(
            (r.status, finalizers(&r)),
            (200, want),
            "{name} deleted again with {policy}"
        );
    }
    Ok(())
}

pub(super) async fn owner_references_and_generate_name(env: &Env) -> Outcome {
    let ns = env.namespace("ownergen").await?;
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"name": "or", "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]}}),
    )
    .await?;
    let required = "Required value: must not be empty";
    ensure_status!(
        r,
        422,
        "Invalid",
        format!(
            "ConfigMap \"or\" is invalid: [metadata.ownerReferences[0].apiVersion: {required}, metadata.ownerReferences[0].kind: {required}, metadata.ownerReferences[0].name: {required}, metadata.ownerReferences[0].uid: {required}]"
        ),
        "empty owner reference"
    );
    ensure_eq!(
        r.causes(),
        causes(&[
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].apiVersion",
                required
            ),
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].kind",
                required
            ),
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].name",
                required
            ),
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].uid",
                required
            ),
        ]),
        "causes"
    );
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"name": "or", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}]}}),
    )
    .await?;
    ensure_status!(
        r,
        422,
        "Invalid",
        format!("ConfigMap \"or\" is invalid: metadata.ownerReferences[0].uid: {required}"),
        "owner reference without uid"
    );

    // A long prefix is cut to 58 characters before the 5-character suffix.
    let long = "a".repeat(70);
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"generateName": long}}),
    )
    .await?;
    ensure_eq!(r.status, 201, "long generateName: {}", body(&r));
    let name = r.json()["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    ensure_eq!(name.len(), 63, "generated name {name}");
    ensure!(name.starts_with(&"a".repeat(58)), "prefix of {name}");
    // A bad prefix is reported on metadata.generateName (and on the name made from it).
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"generateName": "Bad_"}}),
    )
    .await?;
    ensure_eq!(r.status, 422, "bad generateName: {}", body(&r));
    let generated = r.json()["details"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    ensure!(
        generated.len() == 9 && generated.starts_with("Bad_"),
        "the 422 names the generated name: {generated}"
    );
    ensure_eq!(
        r.status().2,
        format!(
            "ConfigMap \"{generated}\" is invalid: [metadata.generateName: Invalid value: \"Bad_\": {RFC1123}, metadata.name: Invalid value: \"{generated}\": {RFC1123}]"
        ),
        "message"
    );
    let mut want = causes(&[
        (
            "FieldValueInvalid",
            "metadata.generateName",
            &format!("Invalid value: \"Bad_\": {RFC1123}"),
        ),
        (
            "FieldValueInvalid",
            "metadata.name",
            &format!("Invalid value: \"{generated}\": {RFC1123}"),
        ),
    ]);
    want.sort();
    ensure_eq!(r.causes(), want, "causes");
    // A prefix whose first 58 characters make a valid name is still checked whole.
    let prefix = format!("{}-.x", "b".repeat(57));
    let r = send(
        env,
        "POST",
        &cms(&ns),
        "application/json",
        json!({"metadata": {"generateName": prefix}}),
    )
    .await?;
    ensure_eq!(r.status, 422, "bad long generateName: {}", body(&r));
    ensure_eq!(
        r.causes(),
        causes(&[(
            "FieldValueInvalid",
            "metadata.generateName",
            &format!("Invalid value: \"{prefix}\": {RFC1123}")
        )]),
        "only the prefix is wrong"
    );
    Ok(())
}
