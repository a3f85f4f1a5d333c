//! A minimal valid object of every built-in kind that kube-apiserver v1.37 serves by default and
//! that can be created without nodes, controllers or webhooks running: the table of the
//! built-in clientset's round trips against a real server (`tests/builtin_real.rs`).
//!
//! [`template`] answers for a resource by group, version and plural; [`Support`] says which
//! verbs a round trip can use (create-only reviews, read-only component statuses). Resources
//! the API server serves that are deliberately not round-tripped are in [`EXEMPT`], each with
//! the reason.

use base64::Engine;
use serde_json::{Value, json};

/// A P-256 PKCS#10 certificate request (subject `CN=kube-codegen-test`), test data for
/// CertificateSigningRequests and PodCertificateRequests.
pub const CSR_PEM: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHXMH4CAQAwHDEaMBgGA1UEAwwRa3ViZS1jb2RlZ2VuLXRlc3QwWTATBgcqhkjO
PQIBBggqhkjOPQMBBwNCAASczZGveMuozYtyBPRhgnL164S8XftDk8M98Lce79EP
+3Rc7LAvBeLWjVL7WUKYQryPSvp4FTprqOA8TfglyNzUoAAwCgYIKoZIzj0EAwID
SQAwRgIhAMp0mlUmmKxRyapaD/ArIzvMau1ss39EliuVRycsBNE3AiEArcdgzg+j
YuknOcHW3LbTR/HFRQbfi3unl7NxdUzjBo0=
-----END CERTIFICATE REQUEST-----
";

/// A self-signed P-256 CA certificate valid until 2126, for ClusterTrustBundles.
pub const CA_PEM: &str = "-----BEGIN CERTIFICATE-----
MIIBpDCCAUugAwIBAgIUdz3sAApMQIGAeFXUj3rk9AWDbiQwCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwUa3ViZS1jb2RlZ2VuLXRlc3QtY2EwIBcNMjYxMTI0MDYzNzIw
WhgPMjEyNjEwMzEwNjM3MjBaMB8xHTAbBgNVBAMMFGt1YmUtY29kZWdlbi10ZXN0
LWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEnM2Rr3jLqM2LcgT0YYJy9euE
vF37Q5PDPfC3Hu/RD/t0XOywLwXi1o1S+1lCmEK8j0r6eBU6a6jgPE34Jcjc1KNj
MGEwHQYDVR0OBBYEFOchl5APAycCV+QQ2M+MJ9cnuoPWMB8GA1UdIwQYMBaAFOch
l5APAycCV+QQ2M+MJ9cnuoPWMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQD
AgIEMAoGCCqGSM49BAMCA0cAMEQCIDoxClMk2JECl1j7rmncZToPqjNBwtSHhSPK
yhQbMWhmAiAGl2CUO4NN9dPkAk3cHkZBftu87HQXm+as/XAvfpqtFQ==
-----END CERTIFICATE-----
";

/// What a round trip of a resource can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// create, get, list, watch, delete.
    Full,
    /// Only create (reviews: the answer is computed, nothing is stored).
    CreateOnly,
    /// Only get and list (component statuses).
    ReadOnly,
}

/// Served resources that are not round-tripped, and why.
pub const EXEMPT: &[(&str, &str, &str)] = &[(
    "",
    "bindings",
    "no typed client in client-go either (Binding has no +genclient): a pod is bound through PodClient::bind, which the pod round trip exercises",
)];

const IMAGE: &str = "registry.k8s.io/pause:3.10";

fn pod_spec() -> Value {
    json!({"containers": [{"name": "c", "image": IMAGE}]})
}

fn pod_template(app: &str, restart: Option<&str>) -> Value {
    let mut spec = pod_spec();
    if let Some(r) = restart {
        spec["restartPolicy"] = json!(r);
    }
    json!({"metadata": {"labels": {"app": app}}, "spec": spec})
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn csr_der_b64() -> String {
    let body: String = CSR_PEM
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    body
}

/// The support and the body (without `apiVersion`, `kind` and `metadata`, which the caller
/// adds) of a resource's minimal object, or `None` if the table has no entry.
fn body(
    group: &str,
    version: &str,
    resource: &str,
    ns: &str,
    name: &str,
) -> Option<(Support, Value)> {
    use Support::*;
    let app = name;
    let selector = json!({"matchLabels": {"app": app}});
    Some(match (group, resource) {
        // core
        ("", "componentstatuses") => (ReadOnly, json!({})),
        ("", "configmaps") => (Full, json!({"data": {"k": "v"}})),
        ("", "endpoints") => (
            Full,
            json!({"subsets": [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"port": 80}]}]}),
        ),
        ("", "events") => (
            Full,
            json!({"involvedObject": {"kind": "Pod", "name": "x", "namespace": ns},
                   "reason": "Tested", "message": "round trip", "type": "Normal",
                   "source": {"component": "kube-codegen"}}),
        ),
        ("", "limitranges") => (
            Full,
            json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}),
        ),
        ("", "namespaces") => (Full, json!({})),
        ("", "nodes") => (Full, json!({"spec": {}})),
        ("", "persistentvolumeclaims") => (
            Full,
            json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        ("", "persistentvolumes") => (
            Full,
            json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": "/tmp/kube-codegen"}}}),
        ),
        ("", "pods") => (Full, json!({"spec": pod_spec()})),
        ("", "podtemplates") => (Full, json!({"template": pod_template(app, None)})),
        ("", "replicationcontrollers") => (
            Full,
            json!({"spec": {"replicas": 0, "selector": {"app": app}, "template": pod_template(app, None)}}),
        ),
        ("", "resourcequotas") => (Full, json!({"spec": {"hard": {"pods": "10"}}})),
        ("", "secrets") => (Full, json!({"stringData": {"k": "v"}})),
        ("", "serviceaccounts") => (Full, json!({})),
        ("", "services") => (Full, json!({"spec": {"ports": [{"port": 80}]}})),
        // admissionregistration.k8s.io
        ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => (
            Full,
            json!({"spec": {
                "matchConstraints": {"resourceRules": [{"apiGroups": ["kube-codegen.example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["nothings"]}]},
                "failurePolicy": "Ignore",
                "reinvocationPolicy": "Never",
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}}]
            }}),
        ),
        ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings") => {
            (Full, json!({"spec": {"policyName": name}}))
        }
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations")
        | ("admissionregistration.k8s.io", "validatingwebhookconfigurations") => (Full, json!({})),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => (
            Full,
            json!({"spec": {
                "matchConstraints": {"resourceRules": [{"apiGroups": ["kube-codegen.example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["nothings"]}]},
                "failurePolicy": "Ignore",
                "validations": [{"expression": "true"}]
            }}),
        ),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => (
            Full,
            json!({"spec": {"policyName": name, "validationActions": ["Audit"]}}),
        ),
        // apiextensions.k8s.io, apiregistration.k8s.io
        ("apiextensions.k8s.io", "customresourcedefinitions") => return None,
        ("apiregistration.k8s.io", "apiservices") => return None,
        // apps
        ("apps", "controllerrevisions") => (Full, json!({"revision": 1, "data": {"k": "v"}})),
        ("apps", "daemonsets") => (
            Full,
            json!({"spec": {"selector": selector, "template": pod_template(app, None)}}),
        ),
        ("apps", "deployments") | ("apps", "replicasets") => (
            Full,
            json!({"spec": {"replicas": 0, "selector": selector, "template": pod_template(app, None)}}),
        ),
        ("apps", "statefulsets") => (
            Full,
            json!({"spec": {"replicas": 0, "serviceName": app, "selector": selector, "template": pod_template(app, None)}}),
        ),
        // authentication.k8s.io, authorization.k8s.io
        ("authentication.k8s.io", "selfsubjectreviews") => (CreateOnly, json!({})),
        ("authentication.k8s.io", "tokenreviews") => {
            (CreateOnly, json!({"spec": {"token": "not-a-token"}}))
        }
        ("authorization.k8s.io", "localsubjectaccessreviews") => (
            CreateOnly,
            json!({"spec": {"user": "someone", "resourceAttributes": {"namespace": ns, "verb": "get", "resource": "pods"}}}),
        ),
        ("authorization.k8s.io", "selfsubjectaccessreviews") => (
            CreateOnly,
            json!({"spec": {"resourceAttributes": {"namespace": ns, "verb": "get", "resource": "pods"}}}),
        ),
        ("authorization.k8s.io", "selfsubjectrulesreviews") => {
            (CreateOnly, json!({"spec": {"namespace": ns}}))
        }
        ("authorization.k8s.io", "subjectaccessreviews") => (
            CreateOnly,
            json!({"spec": {"user": "someone", "resourceAttributes": {"verb": "list", "resource": "nodes"}}}),
        ),
        // autoscaling
        ("autoscaling", "horizontalpodautoscalers") => {
            let target = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": app});
            if version == "v1" {
                (
                    Full,
                    json!({"spec": {"scaleTargetRef": target, "maxReplicas": 2}}),
                )
            } else {
                (
                    Full,
                    json!({"spec": {"scaleTargetRef": target, "minReplicas": 1, "maxReplicas": 2,
                                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}}),
                )
            }
        }
        // batch
        ("batch", "cronjobs") => (
            Full,
            json!({"spec": {"schedule": "*/5 * * * *", "suspend": true,
                            "jobTemplate": {"spec": {"template": pod_template(app, Some("OnFailure"))}}}}),
        ),
        ("batch", "jobs") => (
            Full,
            json!({"spec": {"suspend": true, "template": pod_template(app, Some("Never"))}}),
        ),
        // certificates.k8s.io
        ("certificates.k8s.io", "certificatesigningrequests") => (
            Full,
            json!({"spec": {"request": b64(CSR_PEM), "signerName": "example.com/kube-codegen", "usages": ["digital signature"]}}),
        ),
        ("certificates.k8s.io", "clustertrustbundles") => {
            (Full, json!({"spec": {"trustBundle": CA_PEM}}))
        }
        ("certificates.k8s.io", "podcertificaterequests") => (
            Full,
            json!({"spec": {
                "signerName": "example.com/kube-codegen",
                "podName": "p", "podUID": "00000000-0000-0000-0000-000000000001",
                "serviceAccountName": "default", "serviceAccountUID": "00000000-0000-0000-0000-000000000002",
                "nodeName": "n", "nodeUID": "00000000-0000-0000-0000-000000000003",
                "maxExpirationSeconds": 86400,
                "stubPKCS10Request": csr_der_b64()
            }}),
        ),
        // coordination.k8s.io, discovery.k8s.io, events.k8s.io
        ("coordination.k8s.io", "leases") => (Full, json!({"spec": {"holderIdentity": "me"}})),
        ("discovery.k8s.io", "endpointslices") => (
            Full,
            json!({"addressType": "IPv4", "endpoints": [{"addresses": ["192.0.2.10"]}], "ports": [{"port": 80}]}),
        ),
        ("events.k8s.io", "events") => (
            Full,
            json!({"eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/kube-codegen",
                   "reportingInstance": "kube-codegen-0", "action": "Test", "reason": "Tested", "type": "Normal",
                   "regarding": {"kind": "Pod", "name": "x", "namespace": ns}, "note": "round trip"}),
        ),
        // flowcontrol.apiserver.k8s.io
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => (
            Full,
            json!({"spec": {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 9000,
                            "rules": [{"subjects": [{"kind": "User", "user": {"name": "kube-codegen-nobody"}}],
                                       "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "namespaces": [ns]}]}]}}),
        ),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => (
            Full,
            json!({"spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}}}),
        ),
        // networking.k8s.io
        ("networking.k8s.io", "ingressclasses") => (
            Full,
            json!({"spec": {"controller": "example.com/kube-codegen"}}),
        ),
        ("networking.k8s.io", "ingresses") => (
            Full,
            json!({"spec": {"defaultBackend": {"service": {"name": app, "port": {"number": 80}}}}}),
        ),
        ("networking.k8s.io", "ipaddresses") => return None,
        ("networking.k8s.io", "networkpolicies") => (Full, json!({"spec": {"podSelector": {}}})),
        ("networking.k8s.io", "servicecidrs") => {
            (Full, json!({"spec": {"cidrs": ["10.255.128.0/24"]}}))
        }
        // node.k8s.io, policy, scheduling.k8s.io
        ("node.k8s.io", "runtimeclasses") => (Full, json!({"handler": "runc"})),
        ("policy", "poddisruptionbudgets") => (
            Full,
            json!({"spec": {"minAvailable": 1, "selector": selector}}),
        ),
        ("scheduling.k8s.io", "priorityclasses") => (Full, json!({"value": 1000})),
        // rbac.authorization.k8s.io
        ("rbac.authorization.k8s.io", "clusterroles") | ("rbac.authorization.k8s.io", "roles") => (
            Full,
            json!({"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
        ),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => (
            Full,
            json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                   "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "kube-codegen-nobody"}]}),
        ),
        ("rbac.authorization.k8s.io", "rolebindings") => (
            Full,
            json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                   "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]}),
        ),
        // resource.k8s.io
        ("resource.k8s.io", "deviceclasses") => (Full, json!({"spec": {}})),
        ("resource.k8s.io", "devicetaintrules") => (
            Full,
            json!({"spec": {"deviceSelector": {"driver": "example.com"}, "taint": {"key": "example.com/t", "effect": "NoSchedule"}}}),
        ),
        ("resource.k8s.io", "resourceclaims") => (
            Full,
            json!({"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "dc"}}]}}}),
        ),
        ("resource.k8s.io", "resourceclaimtemplates") => (
            Full,
            json!({"spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "dc"}}]}}}}),
        ),
        ("resource.k8s.io", "resourceslices") => (
            Full,
            json!({"spec": {"driver": "example.com", "allNodes": true,
                            "pool": {"name": name, "generation": 0, "resourceSliceCount": 1}, "devices": []}}),
        ),
        // storage.k8s.io, storagemigration.k8s.io
        ("storage.k8s.io", "csidrivers") => (Full, json!({"spec": {}})),
        ("storage.k8s.io", "csinodes") => (Full, json!({"spec": {"drivers": []}})),
        ("storage.k8s.io", "csistoragecapacities") => (Full, json!({"storageClassName": "sc"})),
        ("storage.k8s.io", "storageclasses") => {
            (Full, json!({"provisioner": "example.com/kube-codegen"}))
        }
        ("storage.k8s.io", "volumeattachments") => (
            Full,
            json!({"spec": {"attacher": "kube-codegen.example.com", "nodeName": "n",
                            "source": {"persistentVolumeName": "pv"}}}),
        ),
        ("storage.k8s.io", "volumeattributesclasses") => (
            Full,
            json!({"driverName": "kube-codegen.example.com", "parameters": {"k": "v"}}),
        ),
        ("storagemigration.k8s.io", "storageversionmigrations") => (
            Full,
            json!({"spec": {"resource": {"group": "", "resource": "configmaps"}}}),
        ),
        _ => return None,
    })
}

/// A minimal object of `resource` in `group`/`version` named `name` (in `ns` if namespaced),
/// with `apiVersion`, `kind` and `metadata`; `None` if the table has no entry. Special cases
/// whose name is not free (an IPAddress is named by its address) or that need a group of their
/// own (CRDs, APIServices) use `name` as a suffix.
pub fn template(
    group: &str,
    version: &str,
    resource: &str,
    kind: &str,
    namespaced: bool,
    ns: &str,
    name: &str,
) -> Option<(Support, Value)> {
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut metadata = json!({"name": name, "labels": {"kube-codegen-round-trip": "yes"}});
    if namespaced {
        metadata["namespace"] = json!(ns);
    }
    let (support, mut obj) = match (group, resource) {
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            let g = format!("{name}.example.com");
            metadata["name"] = json!(format!("things.{g}"));
            (
                Support::Full,
                json!({"spec": {"group": g, "scope": "Namespaced",
                    "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
            )
        }
        ("apiregistration.k8s.io", "apiservices") => {
            let g = format!("{name}.example.com");
            metadata["name"] = json!(format!("v1.{g}"));
            (
                Support::Full,
                json!({"spec": {"group": g, "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 15}}),
            )
        }
        ("networking.k8s.io", "ipaddresses") => {
            // Named by the address; a different address per run keeps reruns apart.
            let n = name
                .bytes()
                .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
            metadata["name"] = json!(format!("10.255.{}.{}", 129 + n % 100, 1 + (n / 100) % 250));
            (
                Support::Full,
                json!({"spec": {"parentRef": {"group": "", "resource": "services", "namespace": ns, "name": name}}}),
            )
        }
        _ => body(group, version, resource, ns, name)?,
    };
    if support == Support::CreateOnly {
        // Reviews are computed, not stored: their metadata must be empty (but for a local
        // review's namespace).
        metadata = if namespaced {
            json!({"namespace": ns})
        } else {
            json!({})
        };
    }
    if let Value::Object(m) = &mut obj {
        m.insert("apiVersion".into(), json!(api_version));
        m.insert("kind".into(), json!(kind));
        m.insert("metadata".into(), metadata);
    }
    Some((support, obj))
}
