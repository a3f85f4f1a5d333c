package main

// The apply-configuration input tree (kubernetes/applyconfig-input): every struct k8s-openapi
// declares for a group-version, transcribed as a plain Rust declaration the generator reads —
// each field under its JSON name (#[serde(rename)], from k8s-openapi's Deserialize impl) and
// k8s-openapi's type, with the +listType/+listMapKey/+mapType markers of the Go field of the
// same struct and JSON name in k8s.io/api (else the merge strategy of k8s-openapi's DeepMerge
// impl, which is derived from the same markers through the OpenAPI document), and the kinds
// under the same +genclient tags as in kubernetes/src/apis.
// The tree is never compiled: kube-codegen's applyconfiguration generator reads it.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// One field of a k8s-openapi struct.
type acField struct {
	rust, json, ty string
	doc            []string
	markers        []string
	mapKeys        []string // Rust names of the list-map keys, fields of the element type
}

// One k8s-openapi struct with named fields.
type acStruct struct {
	name   string
	doc    []string
	fields []acField
	file   string
}

var (
	structOpen = regexp.MustCompile(`^pub struct (\w+) \{$`)
	fieldLine  = regexp.MustCompile(`^    pub (\w+): (.+),$`)
	jsonArm    = regexp.MustCompile(`"([^"]+)" => Field::Key_(\w+),`)
	listMap    = regexp.MustCompile(`(?s)merge_strategies::list::map\(\s*&mut self\.(\w+),\s*other\.\w+,\s*&\[\|lhs, rhs\| ([^\]]*)\]`)
	mapKeyEq   = regexp.MustCompile(`lhs\.(\w+) ==`)
	strategy   = regexp.MustCompile(`merge_strategies::(list|map)::(atomic|set|granular)\(\s*&mut self\.(\w+)`)
	crateRef   = regexp.MustCompile(`crate::((?:\w+::)*)(\w+)`)
)

// openapiStructs reads the structs of one k8s-openapi group-version folder.
func openapiStructs(dir string) ([]acStruct, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.rs"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []acStruct
	for _, f := range files {
		if filepath.Base(f) == "mod.rs" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		text := string(b)
		json := map[string]string{}
		for _, m := range jsonArm.FindAllStringSubmatch(text, -1) {
			json[m[2]] = m[1]
		}
		markers := map[string][]string{}
		mapKeys := map[string][]string{}
		for _, m := range listMap.FindAllStringSubmatch(text, -1) {
			markers[m[1]] = []string{"+listType=map"}
			for _, k := range mapKeyEq.FindAllStringSubmatch(m[2], -1) {
				mapKeys[m[1]] = append(mapKeys[m[1]], k[1])
			}
		}
		for _, m := range strategy.FindAllStringSubmatch(text, -1) {
			switch m[1] {
			case "list":
				markers[m[3]] = []string{"+listType=" + m[2]}
			case "map":
				markers[m[3]] = []string{"+mapType=" + m[2]}
			}
		}
		lines := strings.Split(text, "\n")
		for i := 0; i < len(lines); i++ {
			m := structOpen.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			s := acStruct{name: m[1], file: filepath.Base(f)}
			for j := i - 1; j >= 0; j-- {
				l := lines[j]
				if strings.HasPrefix(l, "#[") {
					continue
				}
				if !strings.HasPrefix(l, "///") {
					break
				}
				s.doc = append([]string{l}, s.doc...)
			}
			var doc []string
			for i++; i < len(lines) && lines[i] != "}"; i++ {
				l := lines[i]
				if strings.HasPrefix(l, "    ///") {
					doc = append(doc, strings.TrimPrefix(l, "    "))
					continue
				}
				fm := fieldLine.FindStringSubmatch(l)
				if fm == nil {
					if strings.TrimSpace(l) != "" {
						return nil, fmt.Errorf("%s:%d: unexpected line in struct %s: %q", f, i+1, s.name, l)
					}
					continue
				}
				j, ok := json[fm[1]]
				if !ok {
					return nil, fmt.Errorf("%s:%d: field %s.%s has no JSON name in the Deserialize impl", f, i+1, s.name, fm[1])
				}
				s.fields = append(s.fields, acField{rust: fm[1], json: j, ty: fm[2], doc: doc, markers: markers[fm[1]], mapKeys: mapKeys[fm[1]]})
				doc = nil
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// writeApplyInput writes the apply-configuration input tree under out.
func writeApplyInput(openapi, out, version string, modules moduleFlag, sources []source, kindTags map[string][]string, pkgTags map[string][]string) error {
	// Every struct of every group-version, by Rust module, to tell a struct that gets an apply
	// configuration (written as a path into the input tree) from a type used as it is.
	structs := map[string][]acStruct{}
	where := map[string]source{}
	for _, s := range sources {
		ss, err := openapiStructs(s.openapiDir)
		if err != nil {
			return err
		}
		structs[s.rustModule] = ss
		where[s.rustModule] = s
	}
	find := func(module, name string) *acStruct {
		for i := range structs[module] {
			if structs[module][i].name == name {
				return &structs[module][i]
			}
		}
		return nil
	}
	has := func(module, name string) bool { _, ok := where[module]; return ok && find(module, name) != nil }
	// meta/v1's structs (the runtime has their configurations): for their JSON names only.
	meta, err := openapiStructs(filepath.Join(openapi, "apimachinery/pkg/apis/meta/v1"))
	if err != nil {
		return err
	}
	structs["k8s_openapi::apimachinery::pkg::apis::meta::v1"] = meta
	// List-map keys are fields of the element type: their JSON names come from its struct.
	for module, ss := range structs {
		for i := range ss {
			for j := range ss[i].fields {
				f := &ss[i].fields[j]
				if len(f.mapKeys) == 0 {
					continue
				}
				refs := crateRef.FindAllStringSubmatch(f.ty, -1)
				if len(refs) == 0 {
					return fmt.Errorf("%s %s.%s: a list-map of %s, not of a struct", module, ss[i].name, f.rust, f.ty)
				}
				last := refs[len(refs)-1]
				elem := find("k8s_openapi::"+strings.TrimSuffix(last[1], "::"), last[2])
				if elem == nil {
					return fmt.Errorf("%s %s.%s: element type %s not found", module, ss[i].name, f.rust, last[0])
				}
				for _, k := range f.mapKeys {
					json := ""
					for _, ef := range elem.fields {
						if ef.rust == k {
							json = ef.json
						}
					}
					if json == "" {
						return fmt.Errorf("%s %s.%s: list-map key %s is no field of %s", module, ss[i].name, f.rust, k, elem.name)
					}
					f.markers = append(f.markers, "+listMapKey="+json)
				}
			}
		}
	}
	for _, s := range sources {
		// k8s.io/api's markers win: kube-openapi writes the OpenAPI document k8s-openapi is
		// generated from out of them, but k8s-openapi's DeepMerge drops some (a second list-map
		// key such as Container.ports' protocol).
		goMarkers, err := goMergeMarkers(filepath.Join(modules[s.goModule], s.goPkgDir))
		if err != nil {
			return err
		}
		for i := range structs[s.rustModule] {
			st := &structs[s.rustModule][i]
			for j := range st.fields {
				if ms, ok := goMarkers[st.name+"."+st.fields[j].json]; ok {
					st.fields[j].markers = ms
				}
			}
		}
		rewrite := func(ty string) string {
			return crateRef.ReplaceAllStringFunc(ty, func(ref string) string {
				m := crateRef.FindStringSubmatch(ref)
				module := "k8s_openapi::" + strings.TrimSuffix(m[1], "::")
				if o, ok := where[module]; ok && has(module, m[2]) {
					if module == s.rustModule {
						return m[2]
					}
					return fmt.Sprintf("crate::apis::%s::%s::%s", o.groupFolder, o.version, m[2])
				}
				return "k8s_openapi::" + m[1] + m[2]
			})
		}
		var b strings.Builder
		fmt.Fprintf(&b, header, version)
		fmt.Fprintf(&b, "\n//! The structs of `%s`, transcribed for kube-codegen's applyconfiguration generator\n", s.rustModule)
		fmt.Fprintf(&b, "//! (never compiled): JSON names from k8s-openapi's serde impls, merge semantics from its\n")
		fmt.Fprintf(&b, "//! DeepMerge impls, kinds under the tags of kubernetes/src/apis.\n")
		for _, st := range structs[s.rustModule] {
			b.WriteString("\n")
			for _, d := range st.doc {
				b.WriteString(d + "\n")
			}
			fmt.Fprintf(&b, "// %s\n", st.file)
			for _, t := range kindTags[s.rustModule+"::"+st.name] {
				fmt.Fprintf(&b, "// %s\n", t)
			}
			fmt.Fprintf(&b, "pub struct %s {\n", st.name)
			for _, f := range st.fields {
				for _, d := range f.doc {
					b.WriteString("    " + d + "\n")
				}
				for _, m := range f.markers {
					fmt.Fprintf(&b, "    // %s\n", m)
				}
				fmt.Fprintf(&b, "    #[serde(rename = %q)]\n", f.json)
				fmt.Fprintf(&b, "    pub %s: %s,\n", f.rust, rewrite(f.ty))
			}
			b.WriteString("}\n")
			if len(kindTags[s.rustModule+"::"+st.name]) > 0 {
				// The list type the model wants of a +genclient struct (k8s-openapi's
				// List<T>); it gets no apply configuration.
				fmt.Fprintf(&b, "\n/// The list of `%s` objects (k8s-openapi's `List<%s>`).\n", st.name, st.name)
				fmt.Fprintf(&b, "pub struct %sList {\n", st.name)
				b.WriteString("    #[serde(rename = \"metadata\")]\n    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta,\n")
				fmt.Fprintf(&b, "    #[serde(rename = \"items\")]\n    pub items: Vec<%s>,\n}\n", st.name)
			}
		}
		dir := filepath.Join(out, s.groupFolder, s.version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "types.rs"), []byte(b.String()), 0o644); err != nil {
			return err
		}
		var m strings.Builder
		fmt.Fprintf(&m, header, version)
		m.WriteString("\n")
		for _, t := range pkgTags[s.rustModule] {
			fmt.Fprintf(&m, "// %s\n", t)
		}
		// Every struct gets an apply configuration: other packages' configurations use them.
		m.WriteString("// +kube-codegen:applyconfiguration=package\n")
		fmt.Fprintf(&m, "\n//! Version `%s` of the `%s` apply-configuration input: the structs of `%s`.\n\nmod types;\n", s.version, s.groupFolder, s.rustModule)
		if err := os.WriteFile(filepath.Join(dir, "mod.rs"), []byte(m.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// goMergeMarkers reads the +listType, +listMapKey and +mapType markers of every struct field
// of the Go package in dir, keyed by "<Type>.<json name>" (with the Go file and line).
func goMergeMarkers(dir string) (map[string][]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") || strings.HasSuffix(n, ".pb.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				ts := sp.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fl := range st.Fields.List {
					if fl.Tag == nil {
						continue
					}
					tag := reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
					name, _, _ := strings.Cut(tag, ",")
					if name == "" || name == "-" {
						continue
					}
					var ms []string
					for _, l := range commentText(fl.Doc) {
						l = strings.TrimSpace(l)
						for _, p := range []string{"+listType=", "+listMapKey=", "+mapType="} {
							if strings.HasPrefix(l, p) {
								ms = append(ms, l)
							}
						}
					}
					if len(ms) > 0 {
						out[ts.Name.Name+"."+name] = ms
					}
				}
			}
		}
	}
	return out, nil
}
