"""The official Python client against an API server: the test runs this against kube-apiserver
and against the fake and compares what it prints (one JSON line per step, nothing that differs
between runs such as uids, timestamps or resourceVersions).

Usage: KUBECONFIG=... python probe.py <namespace>
"""

import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

GROUP = "conformance.kube-codegen.dev"


def out(step, value):
    print(json.dumps({"step": step, "value": value}, sort_keys=True), flush=True)


def error(e):
    body = json.loads(e.body) if e.body else {}
    return {"status": e.status, "reason": body.get("reason"), "message": body.get("message")}


def main():
    ns = sys.argv[1]
    config.load_kube_config()
    core = client.CoreV1Api()
    apps = client.AppsV1Api()
    custom = client.CustomObjectsApi()

    names = [n.metadata.name for n in core.list_namespace().items]
    out("default namespace listed", "default" in names)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py", labels={"app": "py"}), data={"a": "1"})
    created = core.create_namespaced_config_map(ns, cm)
    out("create configmap", {"data": created.data, "labels": created.metadata.labels})
    patched = core.patch_namespaced_config_map("py", ns, {"data": {"b": "2"}})
    out("strategic merge patch", patched.data)
    patched.data["a"] = "3"
    replaced = core.replace_namespaced_config_map("py", ns, patched)
    out("replace", replaced.data)
    try:
        core.read_namespaced_config_map("missing", ns)
    except ApiException as e:
        out("get missing", error(e))
    stale = replaced
    stale.metadata.resource_version = "1"
    try:
        core.replace_namespaced_config_map("py", ns, stale)
    except ApiException as e:
        out("stale replace", error(e))
    try:
        core.create_namespaced_config_map(ns, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}})
    except ApiException as e:
        out("invalid name", error(e))

    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    }
    apps.create_namespaced_deployment(ns, deployment)
    scale = apps.read_namespaced_deployment_scale("web", ns)
    out("deployment scale", {"replicas": scale.spec.replicas, "selector": scale.status.selector})
    scaled = apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 4}})
    out("patch scale", scaled.spec.replicas)
    out("deployment replicas after scale", apps.read_namespaced_deployment("web", ns).spec.replicas)

    check = {"apiVersion": f"{GROUP}/v1", "kind": "Check", "metadata": {"name": "py"},
             "spec": {"replicas": 2, "tags": ["a"], "name": "n-py"}}
    made = custom.create_namespaced_custom_object(GROUP, "v1", ns, "checks", check)
    out("create custom object", made["spec"])
    try:
        custom.create_namespaced_custom_object(GROUP, "v1", ns, "checks",
                                               {**check, "metadata": {"name": "bad"}, "spec": {"replicas": 99}})
    except ApiException as e:
        out("invalid custom object", error(e))
    merged = custom.patch_namespaced_custom_object(GROUP, "v1", ns, "checks", "py", {"spec": {"tags": ["b"]}})
    out("merge patch custom object", merged["spec"])
    cscale = custom.get_namespaced_custom_object_scale(GROUP, "v1", ns, "checks", "py")
    out("custom object scale", {"spec": cscale["spec"], "status": cscale["status"]})
    listed = custom.list_namespaced_custom_object(GROUP, "v1", ns, "checks")
    out("list custom objects", [i["metadata"]["name"] for i in listed["items"]])

    w = watch.Watch()
    seen = []
    for ev in w.stream(core.list_namespaced_config_map, ns, timeout_seconds=3):
        seen.append([ev["type"], ev["object"].metadata.name])
        if len(seen) == 1:
            w.stop()
    out("watch", seen)

    core.delete_namespaced_config_map("py", ns)
    try:
        core.read_namespaced_config_map("py", ns)
    except ApiException as e:
        out("get deleted", error(e))


if __name__ == "__main__":
    main()
