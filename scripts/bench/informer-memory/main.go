// Command informermemory measures client-go's informer memory per cached ConfigMap or Pod, for
// scripts/bench-informer-memory.sh: heap (runtime.MemStats.HeapAlloc after a GC) and RSS
// growth from before the informer starts to after its cache synced. With -strip-managed-fields
// a transform drops metadata.managedFields before objects are stored (what our Manager does
// by default).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib * 1024
		}
	}
	return 0
}

func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the server")
	strip := flag.Bool("strip-managed-fields", false, "drop managedFields before caching")
	kind := flag.String("kind", "configmaps", "what to cache: configmaps or pods")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	// Warm the client (TLS, connection pool) before the baseline.
	_, _ = cs.CoreV1().ConfigMaps("default").Get(ctx, "warm-up", metav1.GetOptions{})
	h0, r0 := heap(), rss()
	factory := informers.NewSharedInformerFactory(cs, 0)
	var inf cache.SharedIndexInformer
	switch *kind {
	case "configmaps":
		inf = factory.Core().V1().ConfigMaps().Informer()
	case "pods":
		inf = factory.Core().V1().Pods().Informer()
	default:
		fmt.Fprintf(os.Stderr, "-kind: unknown kind %q (configmaps or pods)\n", *kind)
		os.Exit(2)
	}
	if *strip {
		_ = inf.SetTransform(func(o interface{}) (interface{}, error) {
			if m, err := meta.Accessor(o); err == nil {
				m.SetManagedFields(nil)
			}
			return o, nil
		})
	}
	stop := make(chan struct{})
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		os.Exit(1)
	}
	time.Sleep(500 * time.Millisecond)
	h1, r1 := heap(), rss()
	n := int64(len(inf.GetStore().ListKeys()))
	if n == 0 {
		n = 1
	}
	mode := "client-go"
	if *strip {
		mode = "client-go-strip-managed-fields"
	}
	fmt.Printf("%s %d %d %d\n", mode, n, (h1-h0)/n, (r1-r0)/n)
	runtime.KeepAlive(inf)
	close(stop)
}
