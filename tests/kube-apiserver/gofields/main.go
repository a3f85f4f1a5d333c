// Command gofields prints, for every struct type of the built-in API kinds (client-go's scheme
// and apiextensions.k8s.io/v1), the JSON fields that Go writes even when they are empty: a
// slice, map or pointer field whose json tag has no `omitempty` (written as `null`). OpenAPI
// does not say this (such a field may still be `+optional`), and server-side apply's
// comparison counts these fields as present in an object's zero value.
// scripts/update-openapi-extensions.sh runs it; the output is a JSON object from OpenAPI
// definition name to the sorted field names.
package main

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"

	"kube-codegen.invalid/kube-apiserver/internal/builtin"
)

func main() {
	s := builtin.Scheme()
	out := map[string][]string{}
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			if t.Kind() == reflect.Map {
				visit(t.Key())
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t.PkgPath() == "" {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			visit(f.Type)
			if f.Anonymous && name == "" {
				continue
			}
			if name == "" || strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",inline,") {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer:
				def := builtin.DefinitionName(t)
				out[def] = append(out[def], name)
			}
		}
	}
	for _, t := range s.AllKnownTypes() {
		visit(t)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
