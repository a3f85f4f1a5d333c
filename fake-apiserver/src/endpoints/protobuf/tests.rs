use serde_json::json;

use super::*;

/// A protobuf field for the test bodies.
enum F<'a> {
    Bytes(u32, &'a [u8]),
    Varint(u32, u64),
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn msg(fields: &[F<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        match f {
            F::Bytes(n, b) => {
                varint(&mut out, u64::from(*n) << 3 | 2);
                varint(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
            F::Varint(n, v) => {
                varint(&mut out, u64::from(*n) << 3);
                varint(&mut out, *v);
            }
        }
    }
    out
}

fn envelope(api_version: &str, kind: &str, object: &[u8]) -> Vec<u8> {
    let type_meta = msg(&[
        F::Bytes(1, api_version.as_bytes()),
        F::Bytes(2, kind.as_bytes()),
    ]);
    let mut out = MAGIC.to_vec();
    out.extend(msg(&[F::Bytes(1, &type_meta), F::Bytes(2, object)]));
    out
}

fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    msg(&[F::Bytes(1, key.as_bytes()), F::Bytes(2, value)])
}

#[test]
fn a_pod_comes_out_as_go_writes_it() {
    // ObjectMeta as gogo writes it: every non-pointer field, empty or not; an empty Time.
    let meta = msg(&[
        F::Bytes(1, b"web"),
        F::Bytes(2, b""),
        F::Varint(7, 0),
        F::Bytes(8, b""),
    ]);
    let port = msg(&[F::Bytes(1, b"http"), F::Varint(2, 0), F::Varint(3, 8080)]);
    // A probe handler (inline in Probe) with an httpGet whose port is the string "http".
    let int_or_string = msg(&[F::Varint(1, 1), F::Varint(2, 0), F::Bytes(3, b"http")]);
    let http_get = msg(&[F::Bytes(1, b"/ready"), F::Bytes(2, &int_or_string)]);
    let handler = msg(&[F::Bytes(2, &http_get)]);
    let probe = msg(&[F::Bytes(1, &handler), F::Varint(2, 0)]);
    let cpu = msg(&[F::Bytes(1, b"100m")]);
    let resources = msg(&[F::Bytes(2, &entry("cpu", &cpu))]);
    let container = msg(&[
        F::Bytes(1, b"app"),
        F::Bytes(2, b"nginx"),
        F::Bytes(6, &port),
        F::Bytes(8, &resources),
        F::Bytes(11, &probe),
    ]);
    let size = msg(&[F::Bytes(1, b"1Gi")]);
    let empty_dir = msg(&[F::Bytes(1, b""), F::Bytes(2, &size)]);
    let volume = msg(&[
        F::Bytes(1, b"scratch"),
        F::Bytes(2, &msg(&[F::Bytes(2, &empty_dir)])),
    ]);
    // runAsNonRoot (a pointer) sent as false; supplementalGroups packed.
    let mut packed = Vec::new();
    for g in [1u64, 2, 300] {
        varint(&mut packed, g);
    }
    let security = msg(&[F::Varint(3, 0), F::Bytes(4, &packed)]);
    let spec = msg(&[
        F::Bytes(1, &volume),
        F::Bytes(2, &container),
        F::Bytes(14, &security),
        // A field this server does not know: skipped, as Go skips it.
        F::Varint(999, 7),
    ]);
    let pod = msg(&[F::Bytes(1, &meta), F::Bytes(2, &spec)]);
    let got = decode(&envelope("v1", "Pod", &pod)).unwrap_or_default();
    assert_eq!(
        got["metadata"],
        json!({"name": "web", "creationTimestamp": null}),
        "omitempty drops the empty strings and the zero generation; a zero Time is null"
    );
    assert_eq!(
        (&got["kind"], &got["apiVersion"]),
        (&json!("Pod"), &json!("v1"))
    );
    assert_eq!(
        got["status"],
        json!({}),
        "a struct held by value is written"
    );
    let spec = &got["spec"];
    assert_eq!(
        spec["volumes"],
        json!([{"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}]),
        "the inline volume source is the volume's own fields"
    );
    assert_eq!(
        spec["securityContext"],
        json!({"runAsNonRoot": false, "supplementalGroups": [1, 2, 300]})
    );
    let c = &spec["containers"][0];
    assert_eq!(c["ports"], json!([{"name": "http", "containerPort": 8080}]));
    assert_eq!(c["resources"], json!({"requests": {"cpu": "100m"}}));
    assert_eq!(
        c["readinessProbe"],
        json!({"httpGet": {"path": "/ready", "port": "http"}}),
        "the zero initialDelaySeconds is left out; the port is the string"
    );
    assert_eq!(spec.get("unknown"), None);
}

#[test]
fn bytes_times_and_numbers_keep_their_json_forms() {
    let secret = msg(&[
        F::Bytes(1, &msg(&[F::Bytes(1, b"s")])),
        F::Bytes(2, &entry("bin", &[0, 1, 255])),
        F::Bytes(3, b"Opaque"),
    ]);
    let got = decode(&envelope("v1", "Secret", &secret)).unwrap_or_default();
    assert_eq!(got["data"], json!({"bin": "AAH/"}));
    assert_eq!(got["type"], json!("Opaque"));

    let renew = msg(&[F::Varint(1, 1_700_000_000), F::Varint(2, 123_456_789)]);
    let spec = msg(&[
        F::Bytes(1, b"me"),
        // -1 as int32: ten bytes of two's complement on the wire.
        F::Varint(2, u64::MAX),
        F::Bytes(4, &renew),
    ]);
    let lease = msg(&[F::Bytes(1, &msg(&[F::Bytes(1, b"l")])), F::Bytes(2, &spec)]);
    let got = decode(&envelope("coordination.k8s.io/v1", "Lease", &lease)).unwrap_or_default();
    assert_eq!(
        got["spec"],
        json!({"holderIdentity": "me", "leaseDurationSeconds": -1,
               "renewTime": "2023-11-14T22:13:20.123456Z"})
    );
    assert_eq!(got["apiVersion"], json!("coordination.k8s.io/v1"));

    // A Time keeps whole seconds, as metav1.Time's protobuf decoding does.
    let stamp = msg(&[F::Varint(1, 1_700_000_000), F::Varint(2, 5)]);
    let meta = msg(&[F::Bytes(1, b"d"), F::Bytes(9, &stamp)]);
    let got = decode(&envelope("v1", "ConfigMap", &msg(&[F::Bytes(1, &meta)]))).unwrap_or_default();
    assert_eq!(
        got["metadata"]["deletionTimestamp"],
        json!("2023-11-14T22:13:20Z")
    );
}

#[test]
fn a_list_with_a_message_of_its_own_is_a_list() {
    // UserInfo.extra is map[string]ExtraValue; ExtraValue is a []string with its own message.
    let extra = msg(&[F::Bytes(1, b"a"), F::Bytes(1, b"b")]);
    // SubjectAccessReviewSpec: user 3, extra 5.
    let sar_spec = msg(&[F::Bytes(3, b"alice"), F::Bytes(5, &entry("scopes", &extra))]);
    let sar = msg(&[F::Bytes(2, &sar_spec)]);
    let got = decode(&envelope(
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        &sar,
    ))
    .unwrap_or_default();
    assert_eq!(got["spec"]["user"], json!("alice"));
    assert_eq!(got["spec"]["extra"], json!({"scopes": ["a", "b"]}));
}

#[test]
fn bodies_that_do_not_decode_say_why() {
    assert_eq!(decode(b"{}"), Err(ProtobufError::NoEnvelope));
    assert_eq!(decode(MAGIC), Err(ProtobufError::EmptyBody));
    assert_eq!(
        decode(&envelope("example.com/v1", "Widget", b"")),
        Err(ProtobufError::UnknownKind {
            api_version: "example.com/v1".into(),
            kind: "Widget".into()
        })
    );
    let cut = decode(&envelope("v1", "ConfigMap", &[0x0a, 0x05, b'a']));
    assert!(
        matches!(&cut, Err(ProtobufError::Malformed { cause, kind, .. })
            if cause == "unexpected EOF" && kind == "ConfigMap"),
        "{cut:?}"
    );
    // A string field sent as a number names the field.
    let wrong = decode(&envelope(
        "v1",
        "ConfigMap",
        &msg(&[F::Bytes(1, &msg(&[F::Varint(1, 5)]))]),
    ));
    assert!(
        matches!(&wrong, Err(ProtobufError::Malformed { path, .. }) if path == "ConfigMap.metadata.name"),
        "{wrong:?}"
    );
}

#[test]
fn every_kind_names_a_known_type() {
    let missing: Vec<&String> = SCHEMA
        .kinds
        .values()
        .filter(|t| !SCHEMA.types.contains_key(*t))
        .collect();
    assert!(SCHEMA.kinds.len() > 500, "the schema loaded");
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn nesting_ends_in_an_error_not_a_stack_overflow() {
    // JSONSchemaProps.not (field 28) inside itself, far deeper than any real schema.
    let mut nested = msg(&[F::Bytes(5, b"object")]);
    for _ in 0..5_000 {
        nested = msg(&[F::Bytes(28, &nested)]);
    }
    let got = message(
        &nested,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        "JSONSchemaProps",
        0,
    );
    assert!(
        matches!(&got, Err(Malformed { cause, .. }) if cause.contains("nest deeper than 256")),
        "{:?}",
        got.as_ref().err().map(|e| &e.cause)
    );
    // A schema as deep as real ones decodes.
    let mut shallow = msg(&[F::Bytes(5, b"string")]);
    for _ in 0..50 {
        shallow = msg(&[F::Bytes(28, &shallow)]);
    }
    let got = message(
        &shallow,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        "JSONSchemaProps",
        0,
    );
    assert!(got.is_ok());
}
