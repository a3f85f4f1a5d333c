// Command probe drives an API server with client-go (typed clientset, dynamic client,
// server-side apply with apply configurations, scale, watch) and prints one JSON line per
// step, leaving out what differs between runs (uids, timestamps, resourceVersions). The Rust
// test runs it against kube-apiserver and against the fake and compares the output.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func out(step string, value any) {
	b, err := json.Marshal(map[string]any{"step": step, "value": value})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(b))
}

func status(err error) map[string]any {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return map[string]any{"code": st.Code, "reason": string(st.Reason), "message": st.Message}
	}
	return map[string]any{"error": err.Error()}
}

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	ns := os.Args[1]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	must(err, "kubeconfig")
	// The fake speaks JSON and YAML, not protobuf (tests/CONFORMANCE.md): ask for JSON, which
	// kube-apiserver serves as well.
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	must(err, "clientset")
	dyn, err := dynamic.NewForConfig(cfg)
	must(err, "dynamic client")

	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	must(err, "namespace")
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "go"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	must(err, "create")
	out("create", cm.Data)
	_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	out("create again", status(err))
	out("is already exists", apierrors.IsAlreadyExists(err))

	// Server-side apply with apply configurations: two managers, a conflict, then force.
	applied, err := cms.Apply(ctx, corev1ac.ConfigMap("go", ns).WithData(map[string]string{"b": "2"}), metav1.ApplyOptions{FieldManager: "alice"})
	must(err, "apply alice")
	out("apply", applied.Data)
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("go", ns).WithData(map[string]string{"b": "3"}), metav1.ApplyOptions{FieldManager: "bob"})
	out("apply conflict", status(err))
	out("is conflict", apierrors.IsConflict(err))
	forced, err := cms.Apply(ctx, corev1ac.ConfigMap("go", ns).WithData(map[string]string{"b": "3"}), metav1.ApplyOptions{FieldManager: "bob", Force: true})
	must(err, "apply bob")
	managers := []string{}
	for _, m := range forced.ManagedFields {
		managers = append(managers, m.Manager+"/"+string(m.Operation))
	}
	out("apply force", map[string]any{"data": forced.Data, "managers": managers})

	patched, err := cms.Patch(ctx, "go", types.StrategicMergePatchType, []byte(`{"data":{"c":"4"}}`), metav1.PatchOptions{})
	must(err, "patch")
	out("strategic merge patch", patched.Data)
	_, err = cms.Get(ctx, "missing", metav1.GetOptions{})
	out("get missing", status(err))
	out("is not found", apierrors.IsNotFound(err))

	// Deployments and their scale subresource.
	replicas := int32(2)
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	d, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{})
	must(err, "deployment")
	out("deployment defaults", map[string]any{"strategy": d.Spec.Strategy.Type, "revisionHistoryLimit": *d.Spec.RevisionHistoryLimit, "progressDeadlineSeconds": *d.Spec.ProgressDeadlineSeconds})
	scale, err := cs.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
	must(err, "get scale")
	out("get scale", map[string]any{"replicas": scale.Spec.Replicas, "selector": scale.Status.Selector})
	scale, err = cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}}, metav1.UpdateOptions{})
	must(err, "update scale")
	out("update scale", scale.Spec.Replicas)

	// A custom resource through the dynamic client.
	checks := dyn.Resource(schema.GroupVersionResource{Group: "conformance.kube-codegen.dev", Version: "v1", Resource: "checks"}).Namespace(ns)
	check := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "conformance.kube-codegen.dev/v1", "kind": "Check",
		"metadata": map[string]any{"name": "go"},
		"spec":     map[string]any{"replicas": int64(1), "name": "n-go", "mode": "fast"},
	}}
	made, err := checks.Create(ctx, check, metav1.CreateOptions{})
	must(err, "create check")
	out("create check", made.Object["spec"])
	_, err = checks.Patch(ctx, "go", types.MergePatchType, []byte(`{"spec":{"mode":"slow"}}`), metav1.PatchOptions{})
	out("transition rule", status(err))
	bad := check.DeepCopy()
	bad.SetName("bad")
	bad.Object["spec"] = map[string]any{"replicas": "many"}
	_, err = checks.Create(ctx, bad, metav1.CreateOptions{FieldValidation: "Strict"})
	out("invalid check", status(err))

	// Watch from the list's resourceVersion.
	list, err := cms.List(ctx, metav1.ListOptions{})
	must(err, "list")
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	must(err, "watch")
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{})
	must(err, "create watched")
	ev := <-w.ResultChan()
	w.Stop()
	name := ""
	if o, ok := ev.Object.(*corev1.ConfigMap); ok {
		name = o.Name
	}
	out("watch", []string{string(ev.Type), name})
}
