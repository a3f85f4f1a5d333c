// Command builtin-input writes the input tree of the built-in clientset (kubernetes/src/apis):
// for every group-version that k8s-openapi ships, the kinds that k8s.io/api (and
// apiextensions-apiserver, kube-aggregator) tag with +genclient, each as a re-export of the
// k8s-openapi type under the very tags the Go type carries.
//
// Facts are read, never guessed: the Go sources give the tags (gengo's rule: the doc comment
// plus the comment block one blank line above it; package tags from doc.go), the k8s-openapi
// sources give the group-versions and the types. A +genclient kind without a k8s-openapi type,
// or a tag this tool cannot carry over, is an error.
//
// Usage (scripts/update-builtin-input.sh runs it):
//
//	go run . -openapi <k8s-openapi>/src/v1_37 -module k8s.io/api=<dir> \
//	    -module k8s.io/apiextensions-apiserver=<dir> -module k8s.io/kube-aggregator=<dir> \
//	    -version k8s.io/api@v0.37.1 -out <dir>
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

type moduleFlag map[string]string

func (m moduleFlag) String() string { return fmt.Sprint(map[string]string(m)) }
func (m moduleFlag) Set(v string) error {
	k, dir, ok := strings.Cut(v, "=")
	if !ok || k == "" || dir == "" {
		return fmt.Errorf("-module wants <module path>=<dir>, got %q", v)
	}
	m[k] = dir
	return nil
}

// A group-version of k8s-openapi and where its Go package is.
type source struct {
	openapiDir  string // .../src/v1_37/api/apps/v1
	rustModule  string // k8s_openapi::api::apps::v1
	goModule    string // k8s.io/api
	goPkgDir    string // apps/v1 (relative to the module)
	groupFolder string // apps (the input tree's folder, Go's package folder)
	version     string // v1
}

// openapiSources lists k8s-openapi's group-versions under root (src/v1_37).
func openapiSources(root string, modules moduleFlag) ([]source, error) {
	var out []source
	add := func(openapiRel, rustPrefix, goModule, goPrefix string) error {
		groups, err := os.ReadDir(filepath.Join(root, openapiRel))
		if err != nil {
			return err
		}
		for _, g := range groups {
			if !g.IsDir() {
				continue
			}
			versions, err := os.ReadDir(filepath.Join(root, openapiRel, g.Name()))
			if err != nil {
				return err
			}
			for _, v := range versions {
				if !v.IsDir() {
					continue
				}
				if _, ok := modules[goModule]; !ok {
					return fmt.Errorf("no -module %s given", goModule)
				}
				out = append(out, source{
					openapiDir:  filepath.Join(root, openapiRel, g.Name(), v.Name()),
					rustModule:  rustPrefix + "::" + g.Name() + "::" + v.Name(),
					goModule:    goModule,
					goPkgDir:    filepath.Join(goPrefix, g.Name(), v.Name()),
					groupFolder: g.Name(),
					version:     v.Name(),
				})
			}
		}
		return nil
	}
	if err := add("api", "k8s_openapi::api", "k8s.io/api", ""); err != nil {
		return nil, err
	}
	if err := add("apiextensions_apiserver/pkg/apis", "k8s_openapi::apiextensions_apiserver::pkg::apis",
		"k8s.io/apiextensions-apiserver", "pkg/apis"); err != nil {
		return nil, err
	}
	if err := add("kube_aggregator/pkg/apis", "k8s_openapi::kube_aggregator::pkg::apis",
		"k8s.io/kube-aggregator", "pkg/apis"); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].groupFolder != out[j].groupFolder {
			return out[i].groupFolder < out[j].groupFolder
		}
		return out[i].version < out[j].version
	})
	return out, nil
}

var resourceImpl = regexp.MustCompile(`(?m)^impl crate::Resource for (\w+) \{`)
var metadataImpl = regexp.MustCompile(`(?m)^impl crate::Metadata for (\w+) \{`)

// openapiKinds: the types of one k8s-openapi group-version that are objects with ObjectMeta
// (crate::Resource + crate::Metadata), by name.
func openapiKinds(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.rs"))
	if err != nil {
		return nil, err
	}
	resources, metadata := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range resourceImpl.FindAllStringSubmatch(string(b), -1) {
			resources[m[1]] = true
		}
		for _, m := range metadataImpl.FindAllStringSubmatch(string(b), -1) {
			metadata[m[1]] = true
		}
	}
	kinds := map[string]bool{}
	for k := range resources {
		if metadata[k] {
			kinds[k] = true
		}
	}
	return kinds, nil
}

// openapiHasStatus reports whether k8s-openapi's struct `kind` (in dir) has a `status` field:
// the Rust side of client-gen's genStatus rule (a `Status` member makes UpdateStatus).
func openapiHasStatus(dir, kind string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.rs"))
	if err != nil {
		return false, err
	}
	open := "pub struct " + kind + " {"
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if l != open {
				continue
			}
			for _, body := range lines[i+1:] {
				if body == "}" {
					return false, nil
				}
				if strings.HasPrefix(body, "    pub status: ") {
					return true, nil
				}
			}
		}
	}
	return false, fmt.Errorf("k8s-openapi declares no struct %s in %s", kind, dir)
}

var shortNamesFunc = regexp.MustCompile(`func \(r \*REST\) ShortNames\(\) \[\]string \{\s*return \[\]string\{([^}]*)\}`)

// The storage's object: a generic store's NewFunc, or a hand-written REST's New().
var newFunc = regexp.MustCompile(`(?:NewFunc:\s*func\(\) runtime\.Object|\) New\(\) runtime\.Object) \{\s*return &\w+\.(\w+)\{\}`)

var registryImport = regexp.MustCompile(`"k8s.io/kubernetes/pkg/registry/([\w/]+/storage)"`)

// A REST storage that declares short names: its kind and the names.
type storageShortNames struct {
	kind  string
	names []string
}

// registryShortNames reads the short names kube-apiserver's REST storage declares
// (`func (r *REST) ShortNames() []string { return []string{"po"} }`) under dir, keyed by
// "<group folder>/<Kind>" (the kind from the storage's NewFunc or New()). group names the
// folder for every file; "" takes it from the first folder below dir (pkg/registry/<group>/…),
// and then a group that serves another group's storage (events.k8s.io serves core's events)
// gets its names too, from the storage packages its rest/ folder imports.
func registryShortNames(dir, group string, out map[string][]string) error {
	byPackage := map[string]storageShortNames{} // "core/event/storage" → …
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sn := shortNamesFunc.FindSubmatch(b)
		if sn == nil {
			return nil
		}
		kind := newFunc.FindSubmatch(b)
		if kind == nil {
			return fmt.Errorf("%s declares ShortNames but no NewFunc or New() naming its kind", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		g := group
		if g == "" {
			g = strings.Split(rel, "/")[0]
		}
		var names []string
		for _, n := range strings.Split(string(sn[1]), ",") {
			if n = strings.Trim(strings.TrimSpace(n), `"`); n != "" {
				names = append(names, n)
			}
		}
		out[g+"/"+string(kind[1])] = names
		byPackage[filepath.ToSlash(filepath.Dir(rel))] = storageShortNames{string(kind[1]), names}
		return nil
	})
	if err != nil || group != "" {
		return err
	}
	groups, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, g := range groups {
		files, _ := filepath.Glob(filepath.Join(dir, g.Name(), "rest", "*.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for _, m := range registryImport.FindAllSubmatch(b, -1) {
				if st, ok := byPackage[string(m[1])]; ok {
					key := g.Name() + "/" + st.kind
					if _, set := out[key]; !set {
						out[key] = st.names
					}
				}
			}
		}
	}
	return nil
}

// A +genclient kind as the Go package declares it.
type goKind struct {
	name string
	file string // relative to the module
	line int
	tags []string // the client tags, in source order, without "// "
}

// commentText: the lines of a comment group without the comment markers and one leading
// space (Go's CommentGroup.Text, line by line).
func commentText(g *ast.CommentGroup) []string {
	if g == nil {
		return nil
	}
	return strings.Split(strings.TrimRight(g.Text(), "\n"), "\n")
}

// clientTag reports whether a tag line is one the client generators read.
func clientTag(line string) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "+genclient") || strings.HasPrefix(line, "+resourceName")
}

// goPackage reads one Go package: its package tags (doc.go) and its +genclient kinds.
func goPackage(dir string, rel string) (pkgTags []string, kinds []goKind, err error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		if name == "doc.go" {
			for _, g := range f.Comments {
				for _, l := range commentText(g) {
					l = strings.TrimSpace(l)
					if strings.HasPrefix(l, "+groupName") || strings.HasPrefix(l, "+groupGoName") {
						pkgTags = append(pkgTags, l)
					}
				}
			}
		}
		// Comment groups by the line they end on (gengo's second-closest lookup).
		endsAt := map[int]*ast.CommentGroup{}
		for _, g := range f.Comments {
			endsAt[fset.Position(g.End()).Line] = g
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				// The doc comment, and the block ending two lines above its first line (or
				// above the declaration when there is no doc comment).
				top := fset.Position(gd.Pos()).Line
				if doc != nil {
					top = fset.Position(doc.Pos()).Line
				}
				var lines []string
				if second := endsAt[top-2]; second != nil && second != doc {
					lines = append(lines, commentText(second)...)
				}
				lines = append(lines, commentText(doc)...)
				var tags []string
				for _, l := range lines {
					if clientTag(l) {
						tags = append(tags, strings.TrimSpace(l))
					}
				}
				genclient := false
				for _, t := range tags {
					if t == "+genclient" {
						genclient = true
					}
				}
				if !genclient {
					continue
				}
				kinds = append(kinds, goKind{
					name: ts.Name.Name,
					file: filepath.Join(rel, name),
					line: fset.Position(ts.Pos()).Line,
					tags: tags,
				})
			}
		}
	}
	return pkgTags, kinds, nil
}

var groupNameConst = regexp.MustCompile(`(?m)^\s*(?:const\s+)?GroupName\s*=\s*"([^"]*)"`)

// registeredGroup reads `const GroupName = "…"` from the package's register.go.
func registeredGroup(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "register.go"))
	if err != nil {
		return "", err
	}
	m := groupNameConst.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("register.go declares no GroupName")
	}
	return string(m[1]), nil
}

// goTypeRef turns a Go type reference of +genclient:method (input=, result=) into the Rust
// path of the same k8s-openapi type.
func goTypeRef(ref string, here source, known map[string]string) (string, error) {
	if !strings.Contains(ref, ".") && !strings.Contains(ref, "/") {
		// A type of the same package.
		return here.rustModule + "::" + ref, nil
	}
	i := strings.LastIndex(ref, ".")
	pkg, name := ref[:i], ref[i+1:]
	rust, ok := known[pkg]
	if !ok {
		return "", fmt.Errorf("type %s: package %s is not one k8s-openapi ships", ref, pkg)
	}
	return rust + "::" + name, nil
}

// rustTag translates one tag line: +genclient:method type references become Rust paths
// (the generator takes Rust paths); everything else is kept verbatim.
func rustTag(tag string, here source, known map[string]string) (string, error) {
	const method = "+genclient:method="
	if !strings.HasPrefix(tag, method) {
		return tag, nil
	}
	parts := strings.Split(strings.TrimPrefix(tag, method), ",")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if ok && (k == "input" || k == "result") {
			r, err := goTypeRef(v, here, known)
			if err != nil {
				return "", err
			}
			parts[i] = k + "=" + r
		}
	}
	return method + strings.Join(parts, ","), nil
}

const header = `// @generated by scripts/update-builtin-input.sh from %s and k8s-openapi. DO NOT EDIT.
`

func main() {
	modules := moduleFlag{}
	openapi := flag.String("openapi", "", "k8s-openapi's src/<version feature> folder")
	out := flag.String("out", "", "where to write the input tree (kubernetes/src/apis)")
	version := flag.String("version", "", "what the Go sources are, for the header (k8s.io/api@v0.37.1)")
	acOut := flag.String("applyconfig-out", "", "where to write the apply-configuration input tree (kubernetes/applyconfig-input); empty: not written")
	flag.Var(modules, "module", "<Go module path>=<its folder>, repeatable (k8s.io/kubernetes for the REST storage's short names)")
	flag.Parse()
	if *openapi == "" || *out == "" || *version == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*openapi, *out, *acOut, *version, modules); err != nil {
		fmt.Fprintf(os.Stderr, "builtin-input: error: %v\n", err)
		os.Exit(1)
	}
}

func run(openapi, out, acOut, version string, modules moduleFlag) error {
	sources, err := openapiSources(openapi, modules)
	if err != nil {
		return err
	}
	// Short names: kube-apiserver's REST storage, not k8s.io/api, declares them.
	shortNames := map[string][]string{}
	for _, r := range []struct{ module, dir, group string }{
		{"k8s.io/kubernetes", "pkg/registry", ""},
		{"k8s.io/apiextensions-apiserver", "pkg/registry", "apiextensions"},
		{"k8s.io/kube-aggregator", "pkg/registry", "apiregistration"},
	} {
		root, ok := modules[r.module]
		if !ok {
			return fmt.Errorf("no -module %s given", r.module)
		}
		if err := registryShortNames(filepath.Join(root, r.dir), r.group, shortNames); err != nil {
			return err
		}
	}
	// Go import path → Rust module, for type references across packages.
	known := map[string]string{}
	for _, s := range sources {
		known[s.goModule+"/"+filepath.ToSlash(s.goPkgDir)] = s.rustModule
	}
	groups := map[string][]string{}   // folder → versions
	kindTags := map[string][]string{} // k8s-openapi path → the kind's tags
	packageTags := map[string][]string{}
	var groupOrder []string
	for _, s := range sources {
		kinds, err := openapiKinds(s.openapiDir)
		if err != nil {
			return err
		}
		goDir := filepath.Join(modules[s.goModule], s.goPkgDir)
		rel := s.goModule + "/" + filepath.ToSlash(s.goPkgDir)
		pkgTags, goKinds, err := goPackage(goDir, rel)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		hasGroup, fallback := false, false
		for _, t := range pkgTags {
			if strings.HasPrefix(t, "+groupName") {
				hasGroup = true
			}
		}
		if !hasGroup {
			// gengo falls back to the package's folder name; kube-codegen wants the tag.
			// register.go's GroupName constant says what the group is.
			g, err := registeredGroup(goDir)
			if err != nil {
				return fmt.Errorf("%s: doc.go has no +groupName and %w", rel, err)
			}
			if g != s.groupFolder {
				return fmt.Errorf("%s: doc.go has no +groupName, and register.go's GroupName %q is not the folder name Go falls back to", rel, g)
			}
			fallback = true
			pkgTags = append(pkgTags, "+groupName="+g)
		}
		var b strings.Builder
		fmt.Fprintf(&b, header, version)
		fmt.Fprintf(&b, "\n//! The kinds of `%s` with a typed client: each a re-export of k8s-openapi's type under\n", rel)
		fmt.Fprintf(&b, "//! the `+genclient` tags of its Go declaration.\n\n")
		sort.Slice(goKinds, func(i, j int) bool { return goKinds[i].name < goKinds[j].name })
		tagged := map[string]bool{}
		var unshipped []string
		for _, k := range goKinds {
			if !kinds[k.name] {
				// k8s-openapi is generated from the OpenAPI document of the release, which
				// leaves out some alpha kinds (not served by default any more).
				unshipped = append(unshipped, fmt.Sprintf("%s (%s:%d)", k.name, k.file, k.line))
				continue
			}
			tagged[k.name] = true
			status, err := openapiHasStatus(s.openapiDir, k.name)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "// %s:%d\n", k.file, k.line)
			full := s.rustModule + "::" + k.name
			for _, t := range k.tags {
				rt, err := rustTag(t, s, known)
				if err != nil {
					return fmt.Errorf("%s:%d: %w", k.file, k.line, err)
				}
				fmt.Fprintf(&b, "// %s\n", rt)
				kindTags[full] = append(kindTags[full], rt)
			}
			// What client-gen reads from the Go struct and a re-export cannot show.
			fmt.Fprintf(&b, "// +kube-codegen:external:status=%t\n", status)
			// What discovery serves and kube-apiserver's REST storage declares.
			if names := shortNames[s.groupFolder+"/"+k.name]; len(names) > 0 {
				fmt.Fprintf(&b, "// +kubebuilder:resource:shortName=%s\n", strings.Join(names, ";"))
				kindTags[full] = append(kindTags[full], "+kubebuilder:resource:shortName="+strings.Join(names, ";"))
			}
			fmt.Fprintf(&b, "pub use %s::%s;\n\n", s.rustModule, k.name)
		}
		if len(unshipped) > 0 {
			fmt.Fprintf(&b, "// +genclient kinds in Go that k8s-openapi does not ship (no typed client): %s.\n",
				strings.Join(unshipped, ", "))
		}
		var untagged []string
		for k := range kinds {
			if !tagged[k] {
				untagged = append(untagged, k)
			}
		}
		sort.Strings(untagged)
		if len(untagged) > 0 {
			fmt.Fprintf(&b, "// k8s-openapi objects of this version without +genclient in Go (no typed client): %s.\n",
				strings.Join(untagged, ", "))
		}
		dir := filepath.Join(out, s.groupFolder, s.version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "types.rs"), []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
			return err
		}
		var m strings.Builder
		fmt.Fprintf(&m, header, version)
		if fallback {
			fmt.Fprintf(&m, "\n// From %s/doc.go, which has no +groupName: gengo falls back to the folder\n", rel)
			fmt.Fprintf(&m, "// name, and register.go's GroupName says the same.\n")
		} else {
			fmt.Fprintf(&m, "\n// From %s/doc.go:\n", rel)
		}
		for _, t := range pkgTags {
			fmt.Fprintf(&m, "// %s\n", t)
		}
		packageTags[s.rustModule] = pkgTags
		fmt.Fprintf(&m, "\n//! Version `%s` of the `%s` input: kinds re-exported from `%s`.\n\n", s.version, s.groupFolder, s.rustModule)
		fmt.Fprintf(&m, "mod types;\n#[rustfmt::skip]\nmod zz_generated_register;\n\npub use types::*;\npub use zz_generated_register::*;\n")
		if err := os.WriteFile(filepath.Join(dir, "mod.rs"), []byte(m.String()), 0o644); err != nil {
			return err
		}
		if _, ok := groups[s.groupFolder]; !ok {
			groupOrder = append(groupOrder, s.groupFolder)
		}
		groups[s.groupFolder] = append(groups[s.groupFolder], s.version)
	}
	for _, g := range groupOrder {
		var m strings.Builder
		fmt.Fprintf(&m, header, version)
		fmt.Fprintf(&m, "\n//! The `%s` group's versions.\n\n", g)
		for _, v := range groups[g] {
			fmt.Fprintf(&m, "pub mod %s;\n", v)
		}
		if err := os.WriteFile(filepath.Join(out, g, "mod.rs"), []byte(m.String()), 0o644); err != nil {
			return err
		}
	}
	if acOut != "" {
		if err := writeApplyInput(openapi, acOut, version, modules, sources, kindTags, packageTags); err != nil {
			return err
		}
	}
	var m strings.Builder
	fmt.Fprintf(&m, header, version)
	fmt.Fprintf(&m, "\n//! The input of the built-in clientset: one module per API group, each behind the feature\n")
	fmt.Fprintf(&m, "//! of the same name.\n\n")
	for _, g := range groupOrder {
		fmt.Fprintf(&m, "#[cfg(feature = %q)]\npub mod %s;\n", g, g)
	}
	return os.WriteFile(filepath.Join(out, "mod.rs"), []byte(m.String()), 0o644)
}
