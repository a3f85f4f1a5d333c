//! The files the scaffold writes, as the text they hold. `{{name}}`-style placeholders are
//! replaced by [`render`]; every other brace is the file's own.

/// Replaces each `{{key}}` of `template` by its value.
pub(crate) fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (key, value) in vars {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

pub(crate) const CARGO_TOML: &str = r#"[package]
name = "{{name}}"
description = "A Kubernetes operator built on kube-codegen"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
# the generated client links against the runtime; `fake` adds the in-memory API server
{{runtime_dep}}
# the Manager (leader election, probes, metrics), the controller Builder, the operator's flags
{{controller_runtime_dep}}
kube = { version = "{{kube_version}}", default-features = false, features = ["admission", "client", "rustls-tls", "ring", "runtime"] }
k8s-openapi = { version = "{{k8s_openapi_version}}", default-features = false, features = ["{{k8s_feature}}"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
clap = { version = "4", features = ["derive", "env"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
thiserror = "2"
tracing = "0.1"

[build-dependencies]
# build.rs generates the API code, the client and the CRDs
{{codegen_dep}}
"#;

pub(crate) const BUILD_RS: &str = r#"//! Generates the API packages' code (deep copy, register, CRD impls) and the client tree
//! (clientset, listers, informers, apply configurations, fake clientset) into `OUT_DIR`, from
//! the tagged types under `src/pkg/apis/`, and keeps `deploy/role.yaml` and
//! `deploy/webhooks.yaml` equal to the `+kubebuilder:rbac` and `+kubebuilder:webhook` markers
//! under `src/`.

fn main() {
    kube_codegen::Builder::new()
        .apis_dir("src/pkg/apis")
        .apis_module("crate::pkg::apis")
        .client_module("crate::pkg::client")
        .crd_file_name("{group}_{plural}_crd.yaml")
        .rbac("src", "deploy/role.yaml", "{{name}}")
        .webhooks("src", "deploy/webhooks.yaml")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
"#;

pub(crate) const MAIN_RS: &str = r#"//! `{{name}}`: the operator's binary.
//!
//! ```text
//! {{name}} --namespace NS      # against the cluster of $KUBECONFIG (or in-cluster)
//! {{name}} --embedded          # against an in-memory API server, for kubectl on loopback
//! ```

use std::process::ExitCode;

use clap::Parser;
use kube_controller_runtime::operator::{Operator, OperatorFlags};

// Leader election: one Lease, created once, then read and renewed. (`kube-codegen rbac` turns
// these markers, and the controllers', into deploy/role.yaml.)
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,resourceNames={{name}},verbs=get;update

/// The {{name}} operator.
#[derive(Parser)]
#[command(name = "{{name}}", version)]
struct Cli {
    #[command(flatten)]
    operator: OperatorFlags,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = Operator::new("{{name}}")
        .crds({{crate}}::crds())
        .run(cli.operator, |mgr| {
            let _ = mgr;
            // +kube-codegen:scaffold:controllers
            // +kube-codegen:scaffold:webhooks
            Ok(())
        })
        .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
"#;

pub(crate) const LIB_RS: &str = r#"//! The {{name}} operator: its API types under [`pkg::apis`], the client `build.rs` generates
//! under [`pkg::client`], its controllers under [`controller`] and its webhooks under
//! [`webhook`].

pub mod controller;
pub mod pkg;
pub mod webhook;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The CustomResourceDefinitions of the operator's kinds (what `deploy/crds/` holds).
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        // +kube-codegen:scaffold:crds
    ]
}
"#;

pub(crate) const PKG_MOD_RS: &str = r#"//! The Go-style layout the generator reads: API types under `apis/<group>/<version>/`.

pub mod apis;
// +kube-codegen:scaffold:client
"#;

pub(crate) const PKG_CLIENT: &str = r#"
/// The generated client tree (`clientset::versioned`, `listers`, `informers::externalversions`,
/// `applyconfiguration`, `clientset::versioned::fake`), written to `OUT_DIR` by `build.rs`.
#[allow(missing_docs)]
pub mod client {
    kube_codegen_runtime::include_client!();
}
"#;

pub(crate) const APIS_MOD_RS: &str = r#"//! API types, one module per group folder.

// +kube-codegen:scaffold:groups
"#;

pub(crate) const CONTROLLER_MOD_RS: &str = r#"//! The controllers, one module per kind; `main.rs` registers each with the manager.

// +kube-codegen:scaffold:controller-modules
"#;

pub(crate) const GROUP_MOD_RS: &str = r#"//! The `{{group}}` API group.

// +kube-codegen:scaffold:versions
"#;

pub(crate) const VERSION_MOD_RS: &str = r#"// +k8s:deepcopy-gen=package
// +groupName={{group}}

//! Version `{{version}}` of the `{{group}}` API.
//!
//! The deep copy, register and CRD code of this package is generated by `build.rs` and
//! included below.

// +kube-codegen:scaffold:kinds

kube_codegen_runtime::include_package!("{{group_dir}}", "{{version}}");
"#;

pub(crate) const TYPES_RS: &str = r#"//! The `{{kind}}` kind of `{{group}}/{{version}}`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ListMeta, ObjectMeta};
use serde::{Deserialize, Serialize};

/// A {{kind}}: what the user wants in `spec`, what the controller observed in `status`.
// +genclient{{nonnamespaced}}
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status{{storage_version}}
// +kubebuilder:printcolumn:name=READY,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=AGE,type=date,JSONPath=`.metadata.creationTimestamp`
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct {{kind}} {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: {{kind}}Spec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<{{kind}}Status>,
}

/// The desired state of a {{kind}}.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct {{kind}}Spec {
    /// An example field; replace it with the fields of your API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// The observed state of a {{kind}}.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct {{kind}}Status {
    /// The generation the controller last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The latest observations of the object's state (`Ready`, …).
    // +listType=map
    // +listMapKey=type
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A list of {{kind}}s.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct {{kind}}List {
    #[serde(default)]
    pub metadata: ListMeta,
    pub items: Vec<{{kind}}>,
}
"#;

pub(crate) const SAMPLE_YAML: &str = r#"apiVersion: {{group}}/{{version}}
kind: {{kind}}
metadata:
  name: {{lower}}-sample
spec:
  foo: bar
"#;

pub(crate) const CONTROLLER_RS: &str = r#"//! The {{kind}} controller: reconciles each {{kind}} (`{{group}}/{{version}}`) and reports
//! it in the `Ready` condition of its status, with the generation it acted on.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube_codegen_runtime::ApplyOptions;
use kube_codegen_runtime::api_status::is_not_found;
use kube_codegen_runtime::apply::meta::ConditionApplyConfiguration;
use kube_controller_runtime::{Action, BoxError, Context, Controller, Manager, Request};

use crate::pkg::apis::{{group_mod}}::{{version}}::{{kind}};
use crate::pkg::client::applyconfiguration::{{group_mod}}::{{version}}::{
    {{kind}}ApplyConfiguration, {{kind}}StatusApplyConfiguration,
};
use crate::pkg::client::clientset::versioned::Clientset;
use crate::pkg::client::informers::externalversions::{{group_mod}}::{{version}}::{{kind}}Informer;
use crate::pkg::client::listers::{{group_mod}}::{{version}}::{{kind}}Lister;

/// The controller's name: its field manager and its label in the metrics.
pub const NAME: &str = "{{lower}}-controller";

// The kind is read from the informer's cache (list, watch); the status written by server-side
// apply (patch). Add a marker for every kind the reconciler reads or writes.
// +kubebuilder:rbac:groups={{group}},resources={{plural}},verbs=list;watch
// +kubebuilder:rbac:groups={{group}},resources={{plural}}/status,verbs=patch

/// Registers the controller with the manager.
pub fn setup(mgr: &Manager) -> Result<(), BoxError> {
    let lister = {{kind}}Informer::new(mgr.factory()).lister();
    let clientset = Clientset::new(mgr.client());
    Controller::builder(mgr)
        .for_::<{{kind}}>()
        .named(NAME)
        .complete(move |req: Request, _ctx: Context| {
            let (lister, clientset) = (lister.clone(), clientset.clone());
            async move { reconcile(req, &lister, &clientset).await }
        })?;
    Ok(())
}

/// Brings the world in line with the {{kind}}'s spec, then says so in its status.
async fn reconcile(
    req: Request,
    lister: &{{kind}}Lister,
    clientset: &Clientset,
) -> Result<Action, kube::Error> {
{{namespace_line}}    let obj = match lister{{lister_scope}}.get(&req.name) {
        Ok(obj) => obj,
        Err(e) if is_not_found(&e) => return Ok(Action::done()), // deleted meanwhile
        Err(e) => return Err(e),
    };
    let generation = obj.metadata.generation;
    let conditions = obj.status.as_ref().map(|s| s.conditions.as_slice());
    let ready = conditions.and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    if ready.is_some_and(|c| c.status == "True" && c.observed_generation == generation) {
        return Ok(Action::done());
    }
    // Your reconcile logic goes here: read obj.spec, create or update what it asks for.
    let mut condition = ConditionApplyConfiguration::default()
        .with_type("Ready")
        .with_status("True")
        .with_reason("Reconciled")
        .with_message("the spec is in effect")
        .with_last_transition_time(Time(Timestamp::now()));
    let mut status = {{kind}}StatusApplyConfiguration::default();
    if let Some(g) = generation {
        condition = condition.with_observed_generation(g);
        status = status.with_observed_generation(g);
    }
    let config = {{kind}}ApplyConfiguration::new({{new_args}})
        .with_status(status.with_conditions([condition]));
    let client = clientset.{{group_version}}().{{accessor}}({{client_scope}});
    let opts = ApplyOptions::new(NAME).force();
    match client.apply_status(&config, &opts).await {
        Ok(_) => Ok(Action::done()),
        Err(e) if is_not_found(&e) => Ok(Action::done()),
        Err(e) => Err(e),
    }
}
"#;

pub(crate) const CONTROLLER_TEST_RS: &str = r#"//! The {{kind}} controller on the in-memory API server: a new {{kind}} becomes Ready for its
//! generation.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{GetParams, PostParams};
use kube::{Api, CustomResourceExt};
use kube_codegen_runtime::fake::FakeApiServer;
use kube_controller_runtime::{BoxError, CancellationToken, Manager};

use {{crate}}::pkg::apis::{{group_mod}}::{{version}}::{{kind}};
use {{crate}}::pkg::client::clientset::versioned::Clientset;

#[tokio::test]
async fn a_new_{{snake}}_becomes_ready() -> Result<(), BoxError> {
    let server = FakeApiServer::new();
    let client = server.client()?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = {{kind}}::crd();
    crds.create(&PostParams::default(), &crd).await?;
    let mgr = Manager::builder(client.clone())
        .leader_election(false)
        .health_probe_bind_address("0")
        .metrics_bind_address("0")
        .build()?;
    {{crate}}::controller::{{module}}::setup(&mgr)?;
    let stop = CancellationToken::new();
    let running = tokio::spawn(mgr.start(stop.clone().cancelled_owned()));

    let clientset = Clientset::new(client);
    let client = clientset.{{group_version}}().{{accessor}}({{test_scope}});
    let mut obj = {{kind}}::default();
    obj.metadata.name = Some("sample".into());
    client.create(&obj, &PostParams::default()).await?;

    let mut ready = None;
    for _ in 0..300 {
        let got = client.get("sample", &GetParams::default()).await?;
        let status = got.status.unwrap_or_default();
        ready = status.conditions.into_iter().find(|c| c.type_ == "Ready");
        if ready.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.cancel();
    running.await??;
    let ready = ready.ok_or("the controller never set Ready")?;
    assert_eq!(ready.status, "True");
    assert_eq!(ready.observed_generation, Some(1));
    Ok(())
}
"#;

pub(crate) const SERVICE_ACCOUNT_YAML: &str = r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{name}}
"#;

pub(crate) const ROLE_BINDING_YAML: &str = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{name}}
subjects:
- kind: ServiceAccount
  name: {{name}}
  namespace: {{namespace}}
roleRef:
  kind: ClusterRole
  name: {{name}}
  apiGroup: rbac.authorization.k8s.io
"#;

pub(crate) const OPERATOR_YAML: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{name}}
spec:
  replicas: 1
  selector:
    matchLabels:
      name: {{name}}
  template:
    metadata:
      labels:
        name: {{name}}
    spec:
      serviceAccountName: {{name}}
      securityContext:
        runAsNonRoot: true
      containers:
      - name: {{name}}
        image: {{name}}:latest
        imagePullPolicy: IfNotPresent
        args:
        - --leader-elect
        - --health-probe-bind-address=:8081
        env:
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        ports:
        - name: probes
          containerPort: 8081
        livenessProbe:
          httpGet:
            path: /healthz
            port: 8081
        readinessProbe:
          httpGet:
            path: /readyz
            port: 8081
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
"#;

pub(crate) const DOCKERFILE: &str = r#"# Builds the operator and runs it as a non-root user on a small base image.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin {{name}}

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/{{name}} /{{name}}
USER 65532:65532
ENTRYPOINT ["/{{name}}"]
"#;

pub(crate) const GITIGNORE: &str = "/target\n";

pub(crate) const README_MD: &str = r#"# {{name}}

A Kubernetes operator, scaffolded by `kube-codegen new`.

```text
src/pkg/apis/<group>/<version>/   API types (tags: +genclient, +groupName, +kubebuilder:…)
src/controller/<kind>.rs          one controller per kind, registered in src/main.rs
src/webhook/<group>_<version>_<kind>.rs  a kind's webhooks, registered in src/main.rs
build.rs                          generates deep copy, register, client, CRDs into OUT_DIR
deploy/                           service_account.yaml, role.yaml, role_binding.yaml,
                                  operator.yaml, crds/, samples/, webhooks.yaml
PROJECT                           what `kube-codegen add …` has added (read by later commands)
```

## Develop

```sh
kube-codegen add api --api-version=<group>/<version> --kind=<Kind>
kube-codegen add controller --api-version=<group>/<version> --kind=<Kind>
kube-codegen add webhook --api-version=<group>/<version> --kind=<Kind> --defaulting --validation
kube-codegen manifests              # deploy/crds/, deploy/role.yaml, deploy/webhooks.yaml
cargo test                          # the controllers' tests run on an in-memory API server
kube-codegen run --local --embedded  # kubectl and the webhooks, no cluster (nor certificate)
```

## Deploy

```sh
kubectl apply -f deploy/service_account.yaml -f deploy/role.yaml -f deploy/role_binding.yaml
kubectl apply -f deploy/crds/
kube-codegen run --local --namespace default   # or build the Dockerfile and apply deploy/operator.yaml
```
"#;

pub(crate) const WEBHOOK_MOD_RS: &str = r#"//! The webhooks, one module per kind and version; `main.rs` registers each with the manager.

// +kube-codegen:scaffold:webhook-modules

/// Whether to serve the webhooks: not when `ENABLE_WEBHOOKS=false` (as Kubebuilder's `main.go`
/// reads it), for a run in a cluster without a serving certificate in `--webhook-cert-dir`
/// (`--embedded` makes its own).
pub fn enabled() -> bool {
    !std::env::var("ENABLE_WEBHOOKS").is_ok_and(|v| v == "false")
}
"#;

pub(crate) const WEBHOOK_HEAD_RS: &str = r#"//! The webhooks of {{kind}} (`{{group}}/{{version}}`):
//! {{what}}.
//!
//! [`setup`] registers them with the manager's webhook server (`main.rs` calls it);
//! `kube-codegen manifests` turns the `+kubebuilder:webhook` markers below into
//! `deploy/webhooks.yaml`.

{{imports}}
use kube_controller_runtime::{BoxError, Manager};
{{serde_imports}}
use crate::pkg::apis::{{group_mod}}::{{version}}::{{kind}};
{{spoke_imports}}
/// Registers the webhooks of {{kind}} with the manager's webhook server.
pub fn setup(mgr: &Manager) -> Result<(), BoxError> {
    Webhook::builder(mgr)
        .for_::<{{kind}}>(){{builder_calls}}
        .complete()?;
    Ok(())
}
"#;

pub(crate) const WEBHOOK_DEFAULTER_RS: &str = r#"
// The API server calls the defaulter on every create and update of {{kind}} objects, at the
// path the builder serves it on (`webhook::mutate_path::<{{kind}}>()`).
// +kubebuilder:webhook:path=/mutate-{{group_path}}-{{version}}-{{lower}},mutating=true,failurePolicy=fail,sideEffects=None,groups={{group}},resources={{plural}},verbs=create;update,versions={{version}},name=m{{lower}}-{{version}}.kb.io,admissionReviewVersions=v1

/// Sets the defaults of {{kind}} objects: what a user left out of the spec.
#[derive(Debug, Clone, Default)]
pub struct {{kind}}Defaulter;

impl Defaulter<{{kind}}> for {{kind}}Defaulter {
    async fn default(&self, _req: &Request, obj: &mut {{kind}}) -> Result<(), Denial> {
        // Your defaults go here (the API server gets the JSON patch of what changed).
        if obj.spec.foo.is_none() {
            obj.spec.foo = Some("default".into());
        }
        Ok(())
    }
}
"#;

pub(crate) const WEBHOOK_VALIDATOR_RS: &str = r#"
// The API server calls the validator on every create and update of {{kind}} objects (add
// `delete` to the verbs, and implement `validate_delete`, to check deletes too).
// +kubebuilder:webhook:path=/validate-{{group_path}}-{{version}}-{{lower}},mutating=false,failurePolicy=fail,sideEffects=None,groups={{group}},resources={{plural}},verbs=create;update,versions={{version}},name=v{{lower}}-{{version}}.kb.io,admissionReviewVersions=v1

/// Checks {{kind}} objects on create and update: the rules no schema can express.
#[derive(Debug, Clone, Default)]
pub struct {{kind}}Validator;

impl {{kind}}Validator {
    /// The rules every {{kind}} object follows; replace them with yours.
    fn check(obj: &{{kind}}) -> ValidationResult {
        if obj.spec.foo.as_deref() == Some("") {
            return Err(Denial::invalid("spec.foo must not be empty")
                .with_cause("spec.foo", "leave it out or give it a value"));
        }
        Ok(vec![])
    }
}

impl Validator<{{kind}}> for {{kind}}Validator {
    async fn validate_create(&self, _req: &Request, obj: &{{kind}}) -> ValidationResult {
        Self::check(obj)
    }

    async fn validate_update(
        &self,
        _req: &Request,
        _old: &{{kind}},
        new: &{{kind}},
    ) -> ValidationResult {
        Self::check(new)
    }
}
"#;

pub(crate) const WEBHOOK_HUB_RS: &str = r#"
// {{version}} is the hub: every other version of {{kind}} converts to and from it, at
// `/convert` (the `+kube-codegen:webhook:conversion` marker on the type gives the CRD its
// `spec.conversion`). A version added later is converted once it has its `Convertible` impl
// below and its `.with_spoke` in `setup`.
impl Hub for {{kind}} {}

/// `from` as the type `T` of another version, through its JSON.
fn carry<F: Serialize, T: DeserializeOwned>(from: &F) -> Result<T, ConversionError> {
    serde_json::to_value(from)
        .and_then(serde_json::from_value)
        .map_err(|e| ConversionError::new(e.to_string()))
}
"#;

pub(crate) const WEBHOOK_SPOKE_RS: &str = r#"
/// {{kind}} `{{spoke}}` to and from the hub. The versions have the same fields when
/// scaffolded, so spec and status are carried over as they are; once a version's fields
/// differ, convert them here (what one version cannot hold is reported as loss, and the
/// conversion refused).
impl Convertible<{{kind}}> for {{spoke_type}} {
    fn convert_to(&self) -> Result<{{kind}}, ConversionError> {
        Ok({{kind}} {
            metadata: self.metadata.clone(),
            spec: carry(&self.spec)?,
            status: carry(&self.status)?,
        })
    }

    fn convert_from(hub: &{{kind}}) -> Result<Self, ConversionError> {
        Ok({{spoke_type}} {
            metadata: hub.metadata.clone(),
            spec: carry(&hub.spec)?,
            status: carry(&hub.status)?,
        })
    }
}
"#;

pub(crate) const WEBHOOK_TEST_HEAD_RS: &str = r#"//! The webhooks of {{kind}} (`{{group}}/{{version}}`): registered with the manager (at the
//! paths of their markers in `deploy/webhooks.yaml`), and answering as they promise, called
//! as the webhook server calls them.

{{test_imports}}
{{test_kind_imports}}{{admission_helpers}}
#[tokio::test]
async fn the_webhooks_are_registered() -> Result<(), BoxError> {
    let server = FakeApiServer::new();
    let mgr = Manager::builder(server.client()?)
        .leader_election(false)
        .health_probe_bind_address("0")
        .metrics_bind_address("0")
        .build()?;
    {{crate}}::webhook::{{module}}::setup(&mgr)?;
{{path_checks}}    Ok(())
}
"#;

pub(crate) const WEBHOOK_TEST_HELPERS_RS: &str = r#"
/// The request the API server sends for `operation` of `obj`.
fn request(operation: &str, obj: &{{kind}}) -> Result<Request, BoxError> {
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0b4f7c52-test",
            "kind": {"group": "{{group}}", "version": "{{version}}", "kind": "{{kind}}"},
            "resource": {"group": "{{group}}", "version": "{{version}}", "resource": "{{plural}}"},
            "name": "sample",
            "operation": operation,
            "userInfo": {"username": "test"},
            "object": serde_json::to_value(obj)?,
            "dryRun": false,
        }
    }))?;
    Ok(review.try_into()?)
}

/// A {{kind}} named `sample` whose `spec.foo` is `value`.
fn sample(value: Option<&str>) -> {{kind}} {
    let mut obj = {{kind}}::default();
    obj.metadata.name = Some("sample".into());
    obj.spec.foo = value.map(String::from);
    obj
}
"#;

pub(crate) const WEBHOOK_TEST_DEFAULTER_RS: &str = r#"
#[tokio::test]
async fn the_defaulter_fills_in_foo_and_keeps_a_given_one() -> Result<(), BoxError> {
    let mut obj = sample(None);
    {{kind}}Defaulter.default(&request("CREATE", &obj)?, &mut obj).await?;
    assert_eq!(obj.spec.foo.as_deref(), Some("default"));
    let mut obj = sample(Some("mine"));
    {{kind}}Defaulter.default(&request("UPDATE", &obj)?, &mut obj).await?;
    assert_eq!(obj.spec.foo.as_deref(), Some("mine"));
    Ok(())
}
"#;

pub(crate) const WEBHOOK_TEST_VALIDATOR_RS: &str = r#"
#[tokio::test]
async fn the_validator_refuses_an_empty_foo() -> Result<(), BoxError> {
    let good = sample(Some("bar"));
    let warnings = {{kind}}Validator
        .validate_create(&request("CREATE", &good)?, &good)
        .await?;
    assert!(warnings.is_empty());
    let bad = sample(Some(""));
    let denial = {{kind}}Validator
        .validate_update(&request("UPDATE", &bad)?, &good, &bad)
        .await
        .err()
        .ok_or("an empty foo was allowed")?;
    assert_eq!(denial.code, 422);
    assert_eq!(denial.causes[0].field, "spec.foo");
    Ok(())
}
"#;

pub(crate) const WEBHOOK_TEST_CONVERSION_RS: &str = r#"
#[test]
fn every_version_converts_to_the_hub_and_back() -> Result<(), BoxError> {
    let crd = include_str!("../deploy/crds/{{crd_file}}");
    assert!(crd.contains("strategy: Webhook"), "{crd}");
{{spoke_tests}}    Ok(())
}
"#;
