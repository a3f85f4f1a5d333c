// Package builtin is what the helpers gofields and goprotobuf share: the scheme of the
// built-in kinds and the OpenAPI definition names of their Go types.
package builtin

import (
	"reflect"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// Scheme holds client-go's kinds and apiextensions.k8s.io/v1's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// DefinitionName turns a Go type into its OpenAPI definition name: the package path with its
// first segment's domain reversed (k8s.io/api/core/v1.Pod -> io.k8s.api.core.v1.Pod).
func DefinitionName(t reflect.Type) string {
	path := t.PkgPath()
	first, rest, _ := strings.Cut(path, "/")
	parts := strings.Split(first, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + strings.ReplaceAll(rest, "/", ".") + "." + t.Name()
}
