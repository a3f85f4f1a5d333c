// Command gofields prints, for every struct type of the built-in API kinds (client-go's scheme
// and apiextensions.k8s.io/v1), the JSON fields that Go writes even when they are empty: a
// slice, map or pointer field whose json tag has no `omitempty` (written as `null`). OpenAPI
// does not say this (such a field may still be `+optional`), and server-side apply's
// comparison counts these fields as present in an object's zero value.
// scripts/update-openapi-extensions.sh runs it; the output is a JSON object from OpenAPI
// definition name to the sorted field names.
//
// With -scalars it prints how Go writes the bool, number and string fields instead, from
// definition name to {"omitempty": [...], "written": [...]}: an `omitempty` field is left out
// when it holds its zero value (`paused: false` is neither stored nor owned by the writer that
// sent it); any other is always written, so an object's zero value holds it (a StatefulSet's
// `serviceName: ""`), and writing its zero value changes nothing. Its "structs" are the struct
// fields that are not pointers, from field name to what Go writes when the field holds its
// zero value: `omitempty` does not leave a struct out (only `omitzero` does), so an Event's
// absent `source` is written `{}` and its `firstTimestamp` `null`.
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

// scalar reports whether Go's JSON encoding writes a field of type t as a bool, number or
// string by itself (no marshaler of its own, no pointer).
func scalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return !t.Implements(marshaler) && !reflect.PointerTo(t).Implements(marshaler)
	}
	return false
}

func main() {
	scalars := flag.Bool("scalars", false, "print the omitempty and always-written bool, number and string fields")
	flag.Parse()
	s := builtin.Scheme()
	nulls := map[string][]string{}
	byOmit := map[string]map[string]any{}
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
			if name == "" || strings.Contains(","+opts+",", ",inline,") {
				continue
			}
			omitempty := strings.Contains(","+opts+",", ",omitempty,")
			omitzero := strings.Contains(","+opts+",", ",omitzero,")
			def := builtin.DefinitionName(t)
			if byOmit[def] == nil {
				byOmit[def] = map[string]any{}
			}
			switch {
			case scalar(f.Type):
				group := "written"
				if omitempty {
					group = "omitempty"
				}
				names, _ := byOmit[def][group].([]string)
				byOmit[def][group] = append(names, name)
			case f.Type.Kind() == reflect.Struct && !omitzero:
				zero, err := json.Marshal(reflect.Zero(f.Type).Interface())
				if err != nil {
					panic(err)
				}
				structs, _ := byOmit[def]["structs"].(map[string]json.RawMessage)
				if structs == nil {
					structs = map[string]json.RawMessage{}
					byOmit[def]["structs"] = structs
				}
				structs[name] = zero
			case !omitempty && (f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Map || f.Type.Kind() == reflect.Pointer):
				nulls[def] = append(nulls[def], name)
			}
		}
	}
	for _, t := range s.AllKnownTypes() {
		visit(t)
	}
	var out any = nulls
	for _, v := range nulls {
		sort.Strings(v)
	}
	if *scalars {
		for def, groups := range byOmit {
			for _, v := range groups {
				if names, ok := v.([]string); ok {
					sort.Strings(names)
				}
			}
			if len(groups) == 0 {
				delete(byOmit, def)
			}
		}
		out = byOmit
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
