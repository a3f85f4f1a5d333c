// Command probe drives an API server with client-go (typed clientset, dynamic client,
// server-side apply with apply configurations, scale, watch) and prints one JSON line per
// step, leaving out what differs between runs (uids, timestamps, resourceVersions). The Rust
// test runs it against kube-apiserver and against the fake and compares the output.
//
// Usage: probe [--protobuf] NAMESPACE
//
// The typed clientset sends JSON unless --protobuf is given; with it, client-go's default:
// built-in objects (bodies of create, update and delete) go as protobuf.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

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
	args := os.Args[1:]
	protobuf := len(args) > 0 && args[0] == "--protobuf"
	if protobuf {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: probe [--protobuf] NAMESPACE")
		os.Exit(2)
	}
	ns := args[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	must(err, "kubeconfig")
	if !protobuf {
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	}
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

	objects(ctx, cs, ns)
}

// stored prints obj as the server returned it, without what differs between servers and runs:
// uid, resourceVersion, times, and a Service's allocated IPs.
func stored(step string, obj any, err error) {
	if err != nil {
		out(step, status(err))
		return
	}
	b, err := json.Marshal(obj)
	must(err, step)
	var m map[string]any
	must(json.Unmarshal(b, &m), step)
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"} {
			delete(meta, k)
		}
		if mf, ok := meta["managedFields"].([]any); ok {
			for _, e := range mf {
				if e, ok := e.(map[string]any); ok {
					delete(e, "time")
				}
			}
		}
	}
	if spec, ok := m["spec"].(map[string]any); ok {
		for _, k := range []string{"clusterIP", "clusterIPs"} {
			delete(spec, k)
		}
	}
	out(step, m)
}

// objects writes built-in kinds whose fields protobuf and JSON encode differently (bytes,
// quantities, int-or-strings, pointers to zero values, inline structs, micro times), updates
// them and deletes with options, printing what the server stored each time.
func objects(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	secret, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bytes", Labels: map[string]string{"a": ""}},
		Data:       map[string][]byte{"bin": {0, 1, 2, 255}, "empty": {}},
		StringData: map[string]string{"text": "hello"},
		Type:       corev1.SecretTypeOpaque,
	}, metav1.CreateOptions{})
	stored("secret", secret, err)

	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80},
				{Name: "named", Port: 81, TargetPort: intstr.FromString("http")},
				{Name: "number", Port: 82, TargetPort: intstr.FromInt32(8082), Protocol: corev1.ProtocolUDP},
			},
		},
	}, metav1.CreateOptions{})
	stored("service", svc, err)

	no, zero, grace, mode := false, int32(0), int64(30), int32(0o640)
	size := resource.MustParse("1Gi")
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Annotations: map[string]string{"note": "x"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: &no},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx:1.27",
				Args:  []string{"--port", "8080"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env: []corev1.EnvVar{
					{Name: "PLAIN", Value: "v"},
					{Name: "FROM", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1.5")},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}},
					InitialDelaySeconds: zero,
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "go"}, DefaultMode: &mode}}},
			},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &grace}},
		},
	}, metav1.CreateOptions{})
	stored("pod", pod, err)

	replicas := int32(0)
	surge, unavailable := intstr.FromString("50%"), intstr.FromInt32(0)
	deploy, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "zero"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"zero"}}}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "zero"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}, metav1.CreateOptions{})
	stored("deployment", deploy, err)
	if err == nil {
		deploy.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 0, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			LastUpdateTime: metav1.NewTime(time.Unix(1700000000, 0)), LastTransitionTime: metav1.NewTime(time.Unix(1700000000, 0))}}}
		deploy, err = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, deploy, metav1.UpdateOptions{})
		stored("deployment status", deploy, err)
	}

	backoff := int32(2)
	job, err := cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"true"}}}}}},
	}, metav1.CreateOptions{})
	if job != nil {
		// A Job's generated selector and labels carry its uid.
		job.Spec.Selector = nil
		job.Spec.Template.Labels = nil
		job.Labels = nil
	}
	stored("job", job, err)

	seconds := int32(15)
	renew := metav1.NewMicroTime(time.Unix(1700000000, 123456000))
	holder := "me"
	lease, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "lock"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renew, AcquireTime: &renew},
	}, metav1.CreateOptions{})
	stored("lease", lease, err)

	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "watched", metav1.GetOptions{})
	must(err, "get watched")
	cm.Data = map[string]string{"k": "v"}
	cm.Labels = map[string]string{"updated": "yes"}
	cm, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	stored("update", cm, err)

	// Delete options travel in the body.
	err = cs.CoreV1().ConfigMaps(ns).Delete(ctx, "watched", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	out("delete dry run", err == nil)
	cm, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "watched", metav1.GetOptions{})
	stored("after dry run", cm, err)
	stale := "1"
	err = cs.CoreV1().ConfigMaps(ns).Delete(ctx, "watched", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	out("delete stale precondition", apierrors.IsConflict(err))
	foreground := metav1.DeletePropagationForeground
	err = cs.AppsV1().Deployments(ns).Delete(ctx, "zero", metav1.DeleteOptions{PropagationPolicy: &foreground})
	out("delete foreground", err == nil)
	deploy, err = cs.AppsV1().Deployments(ns).Get(ctx, "zero", metav1.GetOptions{})
	if err != nil {
		out("after foreground delete", status(err))
	} else {
		out("after foreground delete", deploy.Finalizers)
	}
}
