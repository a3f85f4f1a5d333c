// A minimal controller-runtime webhook server: the Go peer of the admission round-trip
// benchmark (scripts/bench-webhook.sh). It serves one validating webhook for ConfigMaps at
// /validate--v1-configmap that refuses a ConfigMap with a "password" key — the check the Rust
// side makes — with controller-runtime v0.25's webhook.Server and admission.WithValidator.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

type noPasswords struct{}

func (noPasswords) check(cm *corev1.ConfigMap) (admission.Warnings, error) {
	if _, ok := cm.Data["password"]; ok {
		return nil, errors.New("ConfigMaps hold no passwords")
	}
	return nil, nil
}

func (v noPasswords) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.check(cm)
}

func (v noPasswords) ValidateUpdate(_ context.Context, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.check(cm)
}

func (noPasswords) ValidateDelete(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

func main() {
	port := flag.Int("port", 9443, "port to listen on")
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key")
	flag.Parse()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: *port, CertDir: *certDir})
	server.Register("/validate--v1-configmap", admission.WithValidator[*corev1.ConfigMap](scheme, noPasswords{}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Println("serving")
	if err := server.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
