// Command informer runs a client-go shared informer for the ConfigMaps of one namespace, the
// way controllers do (client-go v0.37: WatchList by default), and reports on stdout:
//
//	synced <n>          once the informer has synced, with the number of objects it holds
//	seen <name>         when an object named by the second argument arrives, then it exits
//
// Usage: informer <namespace> <name-to-wait-for>   (KUBECONFIG names the server)
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: informer <namespace> <name-to-wait-for>")
		os.Exit(2)
	}
	ns, want := os.Args[1], os.Args[2]
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubeconfig %s: %v\n", os.Getenv("KUBECONFIG"), err)
		os.Exit(1)
	}
	// JSON: the in-memory server answers only in JSON, so every run decodes the same format.
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	seen := make(chan struct{})
	var once sync.Once
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == want {
				once.Do(func() { close(seen) })
			}
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "handler: %v\n", err)
		os.Exit(1)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		fmt.Fprintln(os.Stderr, "the informer did not sync")
		os.Exit(1)
	}
	fmt.Printf("synced %d\n", len(inf.GetStore().List()))
	select {
	case <-seen:
		fmt.Printf("seen %s\n", want)
	case <-ctx.Done():
		fmt.Fprintf(os.Stderr, "%s never arrived\n", want)
		os.Exit(1)
	}
	cancel()
	factory.Shutdown()
}
