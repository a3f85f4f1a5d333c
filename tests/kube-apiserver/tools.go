//go:build tools

// Package tools pins the commands scripts/build-kube-apiserver.sh builds, so that
// `go mod tidy` keeps every module they need in go.mod and go.sum.
// The package is never compiled (build tag "tools").
package tools

import (
	_ "go.etcd.io/etcd/server/v3" // etcd server: package main at the module root
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
