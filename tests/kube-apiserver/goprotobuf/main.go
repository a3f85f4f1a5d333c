// Command goprotobuf prints what the in-memory server needs to read a built-in object sent as
// protobuf (client-go's typed clients and kubectl's generators send protobuf to kube-apiserver):
// for every kind of client-go's scheme and apiextensions.k8s.io/v1, the Go type that decodes it,
// and for every struct type reached from them, its fields as the `protobuf` and `json` struct
// tags give them. The server turns a protobuf body into the JSON Go's encoding/json would write
// for the decoded value, so the Go facts protobuf does not carry come along: whether a field is
// a pointer (a zero number that was sent stays), `omitempty`, and `inline` (a nested message in
// protobuf, the parent's own fields in JSON).
//
// Output: a JSON object with
//   - "kinds": "group/version/Kind" (core: "v1/Kind") to the OpenAPI definition name of its type;
//   - "types": definition name to its fields in Go's order (which encoding/json keeps), each
//     [number, json name, type, flags], where
//     type is "string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "float32",
//     "float64", a definition name, "[]T" or "map[K]V", and flags holds "p" (pointer), "o"
//     (omitempty) and "i" (inline). A named slice type with a protobuf message of its own (such
//     as ExtraValue) has one field whose json name is empty: its JSON is that field's value.
//   - "custom": the types that write their own JSON (meta/v1 Time, resource.Quantity, …): the
//     server knows their encodings by name (their fields, where the struct tags give them, are
//     under "types" too).
//
// scripts/update-openapi-extensions.sh runs it and writes
// fake-apiserver/src/semantics/builtin_protobuf.json.
package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"kube-codegen.invalid/kube-apiserver/internal/builtin"
)

var (
	jsonMarshaler  = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	protoMarshaler = reflect.TypeOf((*interface{ Marshal() ([]byte, error) })(nil)).Elem()
)

type output struct {
	Kinds  map[string]string          `json:"kinds"`
	Types  map[string][][]interface{} `json:"types"`
	Custom []string                   `json:"custom"`
}

func main() {
	s := builtin.Scheme()
	out := output{Kinds: map[string]string{}, Types: map[string][][]interface{}{}}
	custom := map[string]bool{}
	seen := map[reflect.Type]bool{}

	// typeName names t for a field, visiting the struct types it reaches.
	var typeName func(t reflect.Type) string
	var visit func(t reflect.Type)
	typeName = func(t reflect.Type) string {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		named := t.PkgPath() != "" && t.Name() != ""
		if named && (reflect.PointerTo(t).Implements(jsonMarshaler) || t.Implements(jsonMarshaler)) {
			custom[builtin.DefinitionName(t)] = true
			if t.Kind() == reflect.Struct {
				visit(t)
			}
			return builtin.DefinitionName(t)
		}
		switch t.Kind() {
		case reflect.String:
			return "string"
		case reflect.Bool:
			return "bool"
		case reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			return t.Kind().String()
		case reflect.Int:
			return "int64"
		case reflect.Slice:
			if t.Elem().Kind() == reflect.Uint8 {
				return "bytes"
			}
			if named && reflect.PointerTo(t).Implements(protoMarshaler) {
				// A message of its own wrapping the list.
				def := builtin.DefinitionName(t)
				if !seen[t] {
					seen[t] = true
					out.Types[def] = [][]interface{}{{1, "", "[]" + typeName(t.Elem()), ""}}
				}
				return def
			}
			return "[]" + typeName(t.Elem())
		case reflect.Map:
			return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
		case reflect.Struct:
			visit(t)
			return builtin.DefinitionName(t)
		}
		panic(fmt.Sprintf("unexpected type %s", t))
	}
	visit = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		def := builtin.DefinitionName(t)
		fields := [][]interface{}{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, ok := f.Tag.Lookup("protobuf")
			if !ok || tag == "-" || !f.IsExported() {
				continue // TypeMeta: apiVersion and kind travel in the envelope
			}
			parts := strings.Split(tag, ",")
			if len(parts) < 2 {
				panic(fmt.Sprintf("%s.%s: protobuf tag %q", def, f.Name, tag))
			}
			number, err := strconv.Atoi(parts[1])
			if err != nil {
				panic(fmt.Sprintf("%s.%s: protobuf tag %q", def, f.Name, tag))
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			flags := ""
			if f.Type.Kind() == reflect.Pointer {
				flags += "p"
			}
			if strings.Contains(","+opts+",", ",omitempty,") {
				flags += "o"
			}
			if strings.Contains(","+opts+",", ",inline,") || (f.Anonymous && name == "") {
				flags += "i"
				name = ""
			} else if name == "" {
				name = f.Name
			}
			fields = append(fields, []interface{}{number, name, typeName(f.Type), flags})
		}
		out.Types[def] = fields
	}

	for gvk, t := range s.AllKnownTypes() {
		if t.Kind() != reflect.Struct {
			continue
		}
		key := gvk.Version + "/" + gvk.Kind
		if gvk.Group != "" {
			key = gvk.Group + "/" + key
		}
		out.Kinds[key] = typeName(t)
	}
	for c := range custom {
		out.Custom = append(out.Custom, c)
	}
	sort.Strings(out.Custom)
	write(out)
}

// write prints out with one kind or type per line, so that a change shows as a small diff.
func write(out output) {
	line := func(v interface{}) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	section := func(name string, keys []string, value func(string) interface{}, last bool) {
		sort.Strings(keys)
		fmt.Printf(" %q: {\n", name)
		for i, k := range keys {
			sep := ","
			if i == len(keys)-1 {
				sep = ""
			}
			fmt.Printf("  %s: %s%s\n", line(k), line(value(k)), sep)
		}
		if last {
			fmt.Println(" }")
		} else {
			fmt.Println(" },")
		}
	}
	fmt.Println("{")
	fmt.Printf(" \"custom\": %s,\n", line(out.Custom))
	kinds := make([]string, 0, len(out.Kinds))
	for k := range out.Kinds {
		kinds = append(kinds, k)
	}
	section("kinds", kinds, func(k string) interface{} { return out.Kinds[k] }, false)
	types := make([]string, 0, len(out.Types))
	for k := range out.Types {
		types = append(types, k)
	}
	section("types", types, func(k string) interface{} { return out.Types[k] }, true)
	fmt.Println("}")
}
