//! Fuzz targets for the in-memory server's request decoding, patch application and selector
//! parsing (issue 29), driven only through its public interface: the server as a
//! `tower::Service`, in process.
//!
//! Each target turns the fuzzer's bytes into a structured request (methods, paths, query keys,
//! content types, JSON values, patch operations and selector terms drawn from the API's own
//! vocabulary, with raw garbage mixed in) and asserts that the server does not panic, answers
//! every request within [`ANSWER_WITHIN`], never answers 500 but where kube-apiserver does (a
//! request too large for etcd, an apply of a field of the wrong type or undeclared), that an
//! object a successful patch stored still decodes as its kind (k8s-openapi's type), that a
//! selector is either valid or a 400, and that the process' resident memory grows by less than
//! [`MAX_RSS_GROWTH_MIB`]. Inputs are at most 4096 bytes.
//!
//! Under `cargo test` (stable, what CI runs) each target runs random inputs for at most
//! [`ITERATIONS`] iterations or [`TEST_TIME`], whichever ends first, after replaying the files
//! in `tests/__fuzz__/<target>/{corpus,crashes}` (inputs found by a fuzzing engine; every crash
//! is kept there, and also written down as a named regression test at the end of this file).
//!
//! **Longer runs.** bolero's variables override both bounds, e.g. for ten minutes per target:
//!
//! ```text
//! BOLERO_RANDOM_TEST_TIME_MS=600000 BOLERO_RANDOM_ITERATIONS=100000000 \
//!     cargo test -p kube-fake-apiserver --release --test fuzz
//! ```
//!
//! **Seeded runs.** With `KUBE_CODEGEN_FUZZ_SEED=<n>` (CI sets 1) the inputs are drawn from that
//! seed instead of bolero's, within the same bounds, so the run is reproducible; a failure
//! names its seed and iteration. bolero's own inputs are always drawn from the OS.
//!
//! `BOLERO_RANDOM_SEED=<n>` replays the seed a failure printed, `BOLERO_RANDOM_MAX_LEN` changes
//! the input size (4096 bytes by default). **With a real fuzzing engine** (nightly, coverage
//! guided; not tried in CI, which has stable only): `cargo install cargo-bolero` (it needs
//! `binutils-dev` and `libunwind-dev`), then e.g.
//! `cargo +nightly bolero test -p kube-fake-apiserver patch_application --engine libfuzzer
//! -T 600` (or `--engine afl`; `cargo bolero test --help` for the rest). Its findings land in
//! `tests/__fuzz__/patch_application/crashes`, which plain `cargo test` then replays.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube_fake_apiserver::FakeApiServer;
use serde_json::{Map, Value, json};
use tower::ServiceExt;

/// Random inputs per target under `cargo test`.
const ITERATIONS: usize = 3000;
/// Time per target under `cargo test`.
const TEST_TIME: Duration = Duration::from_secs(15);
/// Every request must be answered (status and whole body) within this.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);
/// Bound on the growth of the process' resident memory during a target.
const MAX_RSS_GROWTH_MIB: u64 = 400;

// ---------------------------------------------------------------------------------------------
// Turning bytes into choices

/// Reads choices from the fuzzer's bytes; past their end every choice is the first one.
struct Choices<'a> {
    data: &'a [u8],
}

impl<'a> Choices<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let v = if n <= 256 {
            usize::from(self.byte())
        } else {
            usize::from(self.byte()) << 8 | usize::from(self.byte())
        };
        v % n
    }

    fn ratio(&mut self, num: u8, den: u8) -> bool {
        self.byte() % den < num
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    /// Up to `max` raw bytes.
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head.to_vec()
    }

    /// Up to `max` characters, mostly printable, some of them awkward.
    fn text(&mut self, max: usize) -> String {
        const AWKWARD: &[&str] = &[
            "", " ", "\\", "\"", "/", "~", "~0", "~1", ",", "=", "!", "(", ")", "%", "%2F",
            "\u{0}", "é", "\u{202e}", "\n", "-", ".", "_", "*", "$", "{", "}", "[", "]", "&", "?",
            "#",
        ];
        let n = self.below(max + 1);
        let mut s = String::new();
        for _ in 0..n {
            match self.below(4) {
                0 => s.push_str(self.pick(AWKWARD)),
                _ => s.push(char::from(b'a' + (self.byte() % 26))),
            }
        }
        s
    }

    fn word(&mut self, vocabulary: &[&str]) -> String {
        if self.ratio(1, 8) {
            self.text(12)
        } else {
            self.pick(vocabulary).to_string()
        }
    }
}

const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "generateName",
    "labels",
    "annotations",
    "finalizers",
    "resourceVersion",
    "uid",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
    "managedFields",
    "data",
    "binaryData",
    "immutable",
    "spec",
    "status",
    "replicas",
    "selector",
    "matchLabels",
    "matchExpressions",
    "template",
    "containers",
    "image",
    "ports",
    "containerPort",
    "env",
    "value",
    "strategy",
    "type",
    "a",
    "app",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "x-unknown",
];

const STRINGS: &[&str] = &[
    "v1",
    "apps/v1",
    "ConfigMap",
    "Deployment",
    "Pod",
    "Namespace",
    "default",
    "cm",
    "dep",
    "web",
    "nginx",
    "",
    "delete",
    "replace",
    "merge",
    "RollingUpdate",
    "Recreate",
    "1",
    "-1",
    "2024-01-01T00:00:00Z",
    "not-a-time",
    "UPPER_case",
    "a/b/c",
];

/// A JSON value, `depth` levels deep at most, drawn from the API's vocabulary.
fn value(c: &mut Choices<'_>, depth: usize) -> Value {
    let kinds = if depth == 0 { 6 } else { 8 };
    match c.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(c.ratio(1, 2)),
        2 => json!(c.pick(&[0i64, 1, -1, 3, 100, i64::MAX, i64::MIN, 1 << 53])),
        3 => json!(c.pick(&[0.5f64, -2.5, 1e308, 3.0])),
        4 | 5 => Value::String(c.word(STRINGS)),
        6 => Value::Array((0..c.below(4)).map(|_| value(c, depth - 1)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..c.below(5) {
                let k = c.word(KEYS);
                m.insert(k, value(c, depth - 1));
            }
            Value::Object(m)
        }
    }
}

/// Puts a fuzzed value somewhere in `v`, following existing keys or making new ones.
fn mutate(c: &mut Choices<'_>, v: &mut Value, depth: usize) {
    match v {
        Value::Object(m) if depth > 0 && !m.is_empty() && c.ratio(3, 4) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = c.pick(&keys);
            if let Some(inner) = m.get_mut(&k) {
                mutate(c, inner, depth - 1);
            }
        }
        Value::Object(m) if c.ratio(1, 2) => {
            let k = c.word(KEYS);
            let new = value(c, 3);
            m.insert(k, new);
        }
        Value::Array(a) if depth > 0 && !a.is_empty() && c.ratio(1, 2) => {
            let i = c.below(a.len());
            mutate(c, &mut a[i], depth - 1);
        }
        _ if c.ratio(1, 6) => {
            if let Value::Object(m) = v {
                let k = c.word(KEYS);
                m.remove(&k);
            }
        }
        _ => *v = value(c, 3),
    }
}

fn config_map(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default",
                     "labels": {"app": "web", "tier": "front"}, "finalizers": ["x/y"]},
        "data": {"a": "1", "b": "2"},
    })
}

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                     "env": [{"name": "A", "value": "1"}]},
                    {"name": "side", "image": "busybox"},
                ]},
            },
        },
    })
}

fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "node-1"},
    })
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

/// A body: nothing, garbage, or an object of a served kind with a fuzzed part, as JSON or YAML.
fn body(c: &mut Choices<'_>) -> Vec<u8> {
    match c.below(8) {
        0 => Vec::new(),
        1 => c.bytes(512),
        2 => serde_json::to_vec(&value(c, 4)).unwrap_or_default(),
        _ => {
            let mut obj = match c.below(4) {
                0 => config_map("cm"),
                1 => deployment("dep"),
                2 => pod("p"),
                _ => namespace("ns"),
            };
            for _ in 0..c.below(4) {
                mutate(c, &mut obj, 5);
            }
            encode(c, &obj)
        }
    }
}

/// JSON, YAML, YAML with an alias, or a truncated form of one of them.
fn encode(c: &mut Choices<'_>, v: &Value) -> Vec<u8> {
    let mut out = match c.below(5) {
        0 | 1 => serde_json::to_vec(v).unwrap_or_default(),
        2 => serde_json::to_vec_pretty(v).unwrap_or_default(),
        // JSON is YAML; these are YAML of YAML's own kinds
        3 => yaml(v).into_bytes(),
        _ => format!("x: &a [1, 2]\ny: [*a, *a]\n{}", yaml(v)).into_bytes(),
    };
    if c.ratio(1, 10) {
        let cut = c.below(out.len() + 1);
        out.truncate(cut);
    }
    out
}

/// A block-style YAML rendering (keys and strings quoted as JSON, which YAML accepts).
fn yaml(v: &Value) -> String {
    fn go(v: &Value, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, inner) in m {
                    out.push_str(&format!("{pad}{}:", Value::String(k.clone())));
                    if matches!(inner, Value::Object(x) if !x.is_empty())
                        || matches!(inner, Value::Array(x) if !x.is_empty())
                    {
                        out.push('\n');
                        go(inner, indent + 2, out);
                    } else {
                        out.push_str(&format!(" {inner}\n"));
                    }
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for inner in a {
                    out.push_str(&format!("{pad}- {inner}\n"));
                }
            }
            other => out.push_str(&format!("{pad}{other}\n")),
        }
    }
    let mut out = String::new();
    go(v, 0, &mut out);
    out
}

fn query(pairs: &[(String, String)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    q.finish()
}

// ---------------------------------------------------------------------------------------------
// Sending and checking

/// A fresh server: the built-ins, a ConfigMap `cm`, a Deployment `dep` and a Pod `p` in
/// `default`, with labels for selectors to select.
fn server() -> FakeApiServer {
    FakeApiServer::builder()
        .max_recorded_actions(16)
        .objects([
            config_map("cm"),
            deployment("dep"),
            pod("p"),
            namespace("other"),
        ])
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"))
}

/// What a request got.
struct Answer {
    status: u16,
    body: Bytes,
}

/// Sends one request, checks the answer's time, status and body, and returns it.
async fn send(
    server: &FakeApiServer,
    method: &str,
    uri: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> Answer {
    let described = format!(
        "{method} {uri} {headers:?} {:?}",
        String::from_utf8_lossy(&body[..body.len().min(2000)])
    );
    let mut req = http::Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, v.as_str());
    }
    // an input the http crate itself refuses never reaches a server
    let Ok(req) = req.body(Full::new(Bytes::from(body))) else {
        return Answer {
            status: 0,
            body: Bytes::new(),
        };
    };
    let answered = tokio::time::timeout(ANSWER_WITHIN, async {
        let resp = server.clone().oneshot(req).await?;
        let status = resp.status().as_u16();
        let body = match resp.into_body().collect().await {
            Ok(collected) => collected.to_bytes(),
            // Only an injected fault or a replay drops a connection; this server has neither.
            Err(dropped) => panic!("{dropped}: {described}"),
        };
        Ok::<_, std::convert::Infallible>(Answer { status, body })
    })
    .await;
    let answer = match answered {
        Ok(Ok(a)) => a,
        Err(_) => panic!("not answered within {ANSWER_WITHIN:?}: {described}"),
    };
    assert!(
        (100..600).contains(&answer.status),
        "status {} for {described}",
        answer.status
    );
    if answer.status == 500 {
        // kube-apiserver's own 500s (the conformance suite checks them against it): a write
        // over etcd's request limit, an apply of a field its kind does not declare, and a GET
        // at a resourceVersion that is not a number
        let text = String::from_utf8_lossy(&answer.body);
        assert!(
            text.contains("etcdserver: request is too large")
                || text.contains("failed to create typed patch object")
                || (text.contains("resourceVersion: Invalid value")
                    && text.contains("strconv.ParseUint")),
            "500 for {described}: {text}"
        );
    }
    answer
}

/// Resident memory, in KiB (0 where /proc is absent).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

/// Runs `target` on every input bolero gives, on one Tokio runtime, holding memory growth.
/// Names the input a seeded run was on if a target panics on it.
struct SeededInput {
    seed: u64,
    iteration: usize,
}

impl Drop for SeededInput {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "fuzz input: KUBE_CODEGEN_FUZZ_SEED={} iteration {}",
                self.seed, self.iteration
            );
        }
    }
}

/// The largest input a seeded run draws (bolero's default).
const MAX_LEN: usize = 4096;

fn run(target: fn(&mut Choices<'_>) -> Target) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let start = rss_kib();
    // A seeded run (what CI does: `KUBE_CODEGEN_FUZZ_SEED=1`): the inputs come from that seed,
    // so a run passes or fails on the code, not on the draw (bolero's own random inputs always
    // come from the OS, whatever BOLERO_RANDOM_SEED says). Same bounds as below.
    if let Some(seed) = std::env::var("KUBE_CODEGEN_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        let mut rng = fastrand::Rng::with_seed(seed);
        let deadline = std::time::Instant::now() + TEST_TIME;
        for iteration in 0..ITERATIONS {
            if std::time::Instant::now() > deadline {
                break;
            }
            let len = rng.usize(0..=MAX_LEN);
            let data: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            let guard = SeededInput { seed, iteration };
            rt.block_on(target(&mut Choices::new(&data)));
            drop(guard);
            let grown = rss_kib().saturating_sub(start) / 1024;
            assert!(
                grown < MAX_RSS_GROWTH_MIB,
                "resident memory grew by {grown} MiB"
            );
        }
        return;
    }
    let rt = AssertUnwindSafe(rt);
    bolero::check!()
        .with_iterations(ITERATIONS)
        .with_test_time(TEST_TIME)
        .for_each(move |data: &[u8]| {
            let mut c = Choices::new(data);
            rt.block_on(target(&mut c));
            let grown = rss_kib().saturating_sub(start) / 1024;
            assert!(
                grown < MAX_RSS_GROWTH_MIB,
                "resident memory grew by {grown} MiB"
            );
        });
}

/// A request (or a few) made from the fuzzer's choices, ready to send.
type Target = std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

// ---------------------------------------------------------------------------------------------
// (1) Request decoding

const METHODS: &[&str] = &[
    "GET", "GET", "POST", "POST", "PUT", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE",
    "BREW",
];

const PREFIXES: &[&str] = &[
    "/api/v1",
    "/api/v1/namespaces/default",
    "/apis/apps/v1",
    "/apis/apps/v1/namespaces/default",
    "/api",
    "/apis",
    "/apis/apps",
    "/apis/apps/v2",
    "/apis/nope.example.com/v1",
    "/version",
    "/healthz",
    "/readyz/ping",
    "",
];

const SEGMENTS: &[&str] = &[
    "namespaces",
    "default",
    "other",
    "configmaps",
    "configmaps",
    "deployments",
    "deployments",
    "pods",
    "services",
    "secrets",
    "replicasets",
    "cm",
    "dep",
    "p",
    "status",
    "scale",
    "finalize",
    "binding",
    "eviction",
    "log",
    "ephemeralcontainers",
    "",
    ".",
    "..",
    "%2F",
    "%00",
    "a%20b",
];

const QUERY_KEYS: &[&str] = &[
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "resourceVersion",
    "resourceVersionMatch",
    "fieldManager",
    "fieldValidation",
    "dryRun",
    "force",
    "propagationPolicy",
    "gracePeriodSeconds",
    "orphanDependents",
    "pretty",
    "sendInitialEvents",
    "allowWatchBookmarks",
    "includeObject",
];

const QUERY_VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "500",
    "99999999999999999999",
    "true",
    "false",
    "All",
    "Strict",
    "Warn",
    "Ignore",
    "Exact",
    "NotOlderThan",
    "Foreground",
    "Background",
    "Orphan",
    "app=web",
    "metadata.name=cm",
    "fuzz",
    "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/json",
    "application/json; charset=utf-8",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "",
    ";;;",
];

const ACCEPTS: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/json;as=Table;v=v2;g=meta.k8s.io",
    "application/vnd.kubernetes.protobuf",
    "*/*",
    "text/html",
    ";q=x",
];

fn decoding(c: &mut Choices<'_>) -> Target {
    let method = c.word(METHODS);
    let mut path = c.pick(PREFIXES).to_string();
    for _ in 0..c.below(6) {
        path.push('/');
        let s = c.word(SEGMENTS);
        path.push_str(&s);
    }
    let mut pairs = Vec::new();
    for _ in 0..c.below(4) {
        pairs.push((c.pick(QUERY_KEYS).to_string(), c.word(QUERY_VALUES)));
    }
    let mut uri = path;
    if !pairs.is_empty() {
        uri = format!("{uri}?{}", query(&pairs));
    }
    let mut headers = Vec::new();
    if c.ratio(7, 8) {
        headers.push(("content-type", c.word(CONTENT_TYPES)));
    }
    if c.ratio(1, 2) {
        headers.push(("accept", c.word(ACCEPTS)));
    }
    let body = body(c);
    Box::pin(async move {
        let server = server();
        send(&server, &method, &uri, &headers, body).await;
    })
}

#[test]
fn request_decoding() {
    run(decoding);
}

// ---------------------------------------------------------------------------------------------
// (2) Patch application

const POINTERS: &[&str] = &[
    "",
    "/",
    "/data",
    "/data/a",
    "/data/new",
    "/data/~1x",
    "/data/~0y",
    "/data/~2",
    "/metadata",
    "/metadata/name",
    "/metadata/namespace",
    "/metadata/labels",
    "/metadata/labels/app",
    "/metadata/labels/new",
    "/metadata/finalizers/0",
    "/metadata/finalizers/-",
    "/metadata/resourceVersion",
    "/metadata/uid",
    "/metadata/generation",
    "/metadata/managedFields",
    "/metadata/ownerReferences",
    "/kind",
    "/apiVersion",
    "/spec",
    "/spec/replicas",
    "/spec/selector/matchLabels",
    "/spec/template/metadata/labels/app",
    "/spec/template/spec/containers",
    "/spec/template/spec/containers/0",
    "/spec/template/spec/containers/1",
    "/spec/template/spec/containers/-",
    "/spec/template/spec/containers/0/image",
    "/spec/template/spec/containers/0/ports/0/containerPort",
    "/spec/template/spec/containers/9",
    "/status",
    "/status/replicas",
    "/x/y/z",
];

const OPS: &[&str] = &[
    "add", "remove", "replace", "move", "copy", "test", "Add", "",
];

fn json_patch(c: &mut Choices<'_>) -> Value {
    let ops = (0..c.below(9))
        .map(|_| {
            let mut op = Map::new();
            op.insert("op".into(), json!(c.pick(OPS)));
            if c.ratio(15, 16) {
                op.insert("path".into(), json!(c.word(POINTERS)));
            }
            if c.ratio(1, 2) {
                op.insert("from".into(), json!(c.word(POINTERS)));
            }
            if c.ratio(2, 3) {
                op.insert("value".into(), value(c, 3));
            }
            Value::Object(op)
        })
        .collect();
    Value::Array(ops)
}

/// A merge or strategic-merge patch: a fuzzed copy of part of an object.
fn merge_patch(c: &mut Choices<'_>, base: &Value) -> Value {
    let mut p = if c.ratio(1, 2) {
        base.clone()
    } else {
        json!({})
    };
    if let Value::Object(m) = &mut p
        && c.ratio(1, 2)
    {
        m.remove("apiVersion");
        m.remove("kind");
    }
    for _ in 0..c.below(5) {
        mutate(c, &mut p, 6);
    }
    if c.ratio(1, 16) {
        p = value(c, 3);
    }
    p
}

fn patching(c: &mut Choices<'_>) -> Target {
    let deployment_target = c.ratio(1, 2);
    let (mut path, base) = if deployment_target {
        (
            "/apis/apps/v1/namespaces/default/deployments/dep".to_string(),
            deployment("dep"),
        )
    } else {
        (
            "/api/v1/namespaces/default/configmaps/cm".to_string(),
            config_map("cm"),
        )
    };
    if deployment_target && c.ratio(1, 4) {
        path.push_str(c.pick(&["/status", "/scale"]));
    }
    let kind = c.below(4);
    let (content_type, body) = match kind {
        0 => ("application/json-patch+json", {
            let p = json_patch(c);
            encode(c, &p)
        }),
        1 => ("application/merge-patch+json", {
            let p = merge_patch(c, &base);
            encode(c, &p)
        }),
        2 => ("application/strategic-merge-patch+json", {
            let p = merge_patch(c, &base);
            encode(c, &p)
        }),
        _ => ("application/apply-patch+yaml", {
            let mut p = base.clone();
            if let Value::Object(m) = &mut p {
                m.remove("status");
            }
            for _ in 0..c.below(4) {
                mutate(c, &mut p, 6);
            }
            encode(c, &p)
        }),
    };
    let body = if c.ratio(1, 32) { c.bytes(256) } else { body };
    let mut pairs = Vec::new();
    if kind == 3 || c.ratio(1, 4) {
        if c.ratio(7, 8) {
            pairs.push((
                "fieldManager".to_string(),
                c.word(&["fuzzer", "kubectl", ""]),
            ));
        }
        if c.ratio(1, 3) {
            pairs.push(("force".to_string(), c.word(&["true", "false"])));
        }
    }
    if c.ratio(1, 8) {
        pairs.push(("dryRun".to_string(), c.word(&["All"])));
    }
    if c.ratio(1, 4) {
        pairs.push((
            "fieldValidation".to_string(),
            c.word(&["Strict", "Warn", "Ignore"]),
        ));
    }
    let uri = if pairs.is_empty() {
        path.clone()
    } else {
        format!("{path}?{}", query(&pairs))
    };
    let second = c.ratio(1, 4).then(|| {
        let p = json_patch(c);
        serde_json::to_vec(&p).unwrap_or_default()
    });
    Box::pin(async move {
        let server = server();
        let headers = [("content-type", content_type.to_string())];
        let mut answers = vec![send(&server, "PATCH", &uri, &headers, body).await];
        if let Some(second) = second {
            let headers = [("content-type", "application/json-patch+json".to_string())];
            answers.push(send(&server, "PATCH", &path, &headers, second).await);
        }
        if answers.iter().any(|a| (200..300).contains(&a.status)) {
            // what a successful patch stored must still be its kind: a watcher decodes it
            let object_path = path.trim_end_matches("/status").trim_end_matches("/scale");
            let got = send(&server, "GET", object_path, &[], Vec::new()).await;
            assert_eq!(got.status, 200, "GET {object_path} after a patch");
            let stored: Value = serde_json::from_slice(&got.body).unwrap_or_default();
            let decoded = if deployment_target {
                serde_json::from_value::<Deployment>(stored).map(drop)
            } else {
                serde_json::from_value::<ConfigMap>(stored).map(drop)
            };
            if let Err(e) = decoded {
                panic!(
                    "a patch stored what does not decode ({e}): {uri} {content_type}\nstored: {}",
                    String::from_utf8_lossy(&got.body)
                );
            }
        }
    })
}

#[test]
fn patch_application() {
    run(patching);
}

// ---------------------------------------------------------------------------------------------
// (3) Selector parsing

const LABEL_KEYS: &[&str] = &[
    "app",
    "tier",
    "example.com/role",
    "a.b-c_d",
    "-bad",
    "a/b/c",
    "",
    "x",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

const LABEL_VALUES: &[&str] = &["web", "front", "", "1", "-1", "v_1.2-3", "bad value", "!"];

fn label_selector(c: &mut Choices<'_>) -> String {
    let mut terms = Vec::new();
    for _ in 0..c.below(5) {
        let key = c.word(LABEL_KEYS);
        let term = match c.below(10) {
            0 => key,
            1 => format!("!{key}"),
            2 => format!("{key}={}", c.word(LABEL_VALUES)),
            3 => format!("{key}=={}", c.word(LABEL_VALUES)),
            4 => format!("{key}!={}", c.word(LABEL_VALUES)),
            5 | 6 => {
                let op = c.pick(&["in", "notin", "In", "in(", "notin "]);
                let values: Vec<String> = (0..c.below(4)).map(|_| c.word(LABEL_VALUES)).collect();
                format!("{key} {op} ({})", values.join(","))
            }
            7 => format!(
                "{key}{}{}",
                c.pick(&[">", "<", " > ", "<<"]),
                c.word(&["1", "x"])
            ),
            8 => c
                .pick(&["", " ", ",", "(", ")", "=", "!", "a b", "a,,b"])
                .to_string(),
            _ => c.text(16),
        };
        terms.push(term);
    }
    let sep = c.pick(&[",", ",", ", ", " ,", ";"]);
    terms.join(sep)
}

const FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "status.phase",
    "spec.nodeName",
    "spec.restartPolicy",
    "status.podIP",
    "spec.replicas",
    "data.a",
    "",
    "metadata",
];

fn field_selector(c: &mut Choices<'_>) -> String {
    let mut terms = Vec::new();
    for _ in 0..c.below(4) {
        let field = c.word(FIELDS);
        let op = c.pick(&["=", "==", "!=", "", " in ", "=!"]);
        let value = c.word(&[
            "cm", "p", "default", "node-1", "Running", "", "a\\,b", "a\\=b", "\\",
        ]);
        terms.push(format!("{field}{op}{value}"));
    }
    terms.join(c.pick(&[",", ",", ",,"]))
}

fn selecting(c: &mut Choices<'_>) -> Target {
    let path = c.pick(&[
        "/api/v1/namespaces/default/configmaps",
        "/api/v1/configmaps",
        "/api/v1/namespaces/default/pods",
        "/api/v1/pods",
        "/apis/apps/v1/namespaces/default/deployments",
        "/api/v1/namespaces",
        "/api/v1/events",
    ]);
    let mut pairs = Vec::new();
    if c.ratio(3, 4) {
        pairs.push(("labelSelector".to_string(), label_selector(c)));
    }
    if c.ratio(1, 2) {
        pairs.push(("fieldSelector".to_string(), field_selector(c)));
    }
    if c.ratio(1, 4) {
        pairs.push(("limit".to_string(), c.word(&["1", "2"])));
    }
    // deletecollection too, where it is served: in a namespace
    let delete = c.ratio(1, 8) && path.contains("/namespaces/");
    let uri = format!("{path}?{}", query(&pairs));
    Box::pin(async move {
        let server = server();
        let method = if delete { "DELETE" } else { "GET" };
        let a = send(&server, method, &uri, &[], Vec::new()).await;
        // a selector is valid or a Bad Request
        assert!(
            [200, 400].contains(&a.status),
            "{} for {method} {uri}: {}",
            a.status,
            String::from_utf8_lossy(&a.body)
        );
    })
}

#[test]
fn selector_parsing() {
    run(selecting);
}

// ---------------------------------------------------------------------------------------------
// Regressions: every input the fuzzer found, as a test of its own

/// PATCH `path` with `body` as `content_type`; the status, and what GET `path` then returns.
async fn patch_then_get(
    path: &str,
    query: &str,
    content_type: &str,
    body: Value,
) -> (u16, Vec<u8>) {
    let server = server();
    let headers = [("content-type", content_type.to_string())];
    let body = serde_json::to_vec(&body).unwrap_or_default();
    let patched = send(&server, "PATCH", &format!("{path}{query}"), &headers, body).await;
    let got = send(&server, "GET", path, &[], Vec::new()).await;
    assert_eq!(got.status, 200);
    (patched.status, got.body.to_vec())
}

/// Found by `patch_application`: an apply giving a ConfigMap's `data` a boolean was stored,
/// and every client (and every watch) then failed to decode the ConfigMap.
#[tokio::test]
async fn regression_apply_of_a_field_of_the_wrong_type_is_refused() {
    let (status, stored) = patch_then_get(
        "/api/v1/namespaces/default/configmaps/cm",
        "?fieldManager=fuzzer",
        "application/apply-patch+yaml",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": true}),
    )
    .await;
    assert_eq!(status, 500);
    let cm: ConfigMap = serde_json::from_slice(&stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cm.data.unwrap_or_default().len(), 2);
}

/// Found by `patch_application`: a merge patch setting a Deployment's `spec.replicas` (an
/// int32) to 2^53 was stored, and no client could decode the Deployment; kube-apiserver
/// answers 422, as for any other value Go cannot decode into the field.
#[tokio::test]
async fn regression_merge_patch_of_an_int32_past_its_range_is_refused() {
    let (status, stored) = patch_then_get(
        "/apis/apps/v1/namespaces/default/deployments/dep",
        "",
        "application/merge-patch+json",
        json!({"spec": {"replicas": 9_007_199_254_740_992_i64}}),
    )
    .await;
    assert_eq!(status, 422);
    let dep: Deployment = serde_json::from_slice(&stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dep.spec.replicas, Some(2));
}

/// Found by `patch_application`: an apply (or any write) of `replicas: 3.0` stored the float
/// `3.0`, which a strict client (serde's `i32`) refuses to decode; kube-apiserver stores and
/// returns `3`, as Go encodes a whole number.
#[tokio::test]
async fn regression_whole_floats_are_stored_as_integers() {
    let (status, stored) = patch_then_get(
        "/apis/apps/v1/namespaces/default/deployments/dep",
        "?fieldManager=fuzzer&force=true",
        "application/apply-patch+yaml",
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dep"},
               "spec": {"replicas": 3.0}}),
    )
    .await;
    assert_eq!(status, 200);
    let dep: Deployment = serde_json::from_slice(&stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dep.spec.replicas, Some(3));
}

/// Found by `patch_application`: a merge patch giving a ConfigMap's `binaryData` a value that
/// is not base64 was stored, and no client could decode the ConfigMap (k8s-openapi's
/// `ByteString` refuses it); kube-apiserver's decoder answers 422 with Go's position.
#[tokio::test]
async fn regression_binary_data_that_is_not_base64_is_refused() {
    let (status, stored) = patch_then_get(
        "/api/v1/namespaces/default/configmaps/cm",
        "",
        "application/merge-patch+json",
        json!({"binaryData": {"k": "ab!"}}),
    )
    .await;
    assert_eq!(status, 422);
    let cm: ConfigMap = serde_json::from_slice(&stored).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cm.binary_data, None);
}

/// Found by `patch_application` (CI, seed 156595043847024142031675923511552537584): an apply of
/// a ConfigMap with `data: {a: null}` stored the null, and no client could decode the
/// ConfigMap; kube-apiserver stores `a: ""`, as Go decodes a null into a string.
#[tokio::test]
async fn regression_a_null_in_a_string_map_is_stored_as_go_decodes_it() {
    let (status, stored) = patch_then_get(
        "/api/v1/namespaces/default/configmaps/cm",
        "?fieldManager=fuzzer&force=true",
        "application/apply-patch+yaml",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
               "data": {"a": null, "b": "2"}}),
    )
    .await;
    assert_eq!(status, 200);
    let cm: ConfigMap = serde_json::from_slice(&stored).unwrap_or_else(|e| panic!("{e}"));
    let data = cm.data.unwrap_or_default();
    assert_eq!(data.get("a").map(String::as_str), Some(""));
    assert_eq!(data.get("b").map(String::as_str), Some("2"));
}
