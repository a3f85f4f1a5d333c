// Command gofields prints, for every struct type of the built-in API kinds (client-go's scheme
// and apiextensions.k8s.io/v1), the JSON fields that Go writes even when they are empty: a
// slice, map or pointer field whose json tag has no `omitempty` (written as `null`). OpenAPI
// does not say this (such a field may still be `+optional`), and server-side apply's
// comparison counts these fields as present in an object's zero value.
// scripts/update-openapi-extensions.sh runs it; the output is a JSON object from OpenAPI
// definition name to the sorted field names.
//
// With -omitempty-scalars it prints the other half of Go's encoding instead: the bool, number
// and string fields whose json tag has `omitempty`, which Go leaves out when they hold their
// zero value (`paused: false` is not stored, nor owned by the writer that sent it).
package main

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"sort"
	"strings"

	"kube-codegen.invalid/kube-apiserver/internal/builtin"
)

var marshaler = reflect.TypeFor[json.Marshaler]()

func main() {
	scalars := flag.Bool("omitempty-scalars", false, "print the omitempty bool, number and string fields")
	flag.Parse()
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
			omitempty := strings.Contains(","+opts+",", ",omitempty,")
			if name == "" || strings.Contains(","+opts+",", ",inline,") || omitempty != *scalars {
				continue
			}
			def := builtin.DefinitionName(t)
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer:
				if !*scalars {
					out[def] = append(out[def], name)
				}
			case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
				reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				// A type with a marshaler of its own (none among the scalars today) would not
				// be written by the zero-value rule.
				if *scalars && !f.Type.Implements(marshaler) && !reflect.PointerTo(f.Type).Implements(marshaler) {
					out[def] = append(out[def], name)
				}
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
