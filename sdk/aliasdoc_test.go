package sdk_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// update rewrites the field lists of the aliases' doc comments.
var update = flag.Bool("update", false, "rewrite the field lists of the doc comments of aliases of internal structs")

// modulePath is the SDK's import path prefix.
const modulePath = "github.com/tetherhq/tether/"

// fieldsMarker starts the field list of an alias's doc comment.
const fieldsMarker = "// Fields (the type is defined in an internal package):"

// publicPackages are the SDK's public packages, relative to this
// directory.
var publicPackages = []string{"activity", "client", "common", "converter", "enums", "log", "mocks",
	"temporal", "testsuite", "worker", "workflow", "interceptor", "contrib/envconfig", "contrib/opentelemetry",
	"contrib/opentracing"}

// TestAliasFieldDocs: go doc does not show the fields of a type alias, so
// every exported alias (in the public packages) of a struct defined in
// sdk/internal must list each exported field of the struct in its doc
// comment, with the field's type and documentation; and every such field
// must be documented where it is defined. It fails on an alias whose list
// is missing or stale: run it with -update to rewrite the lists.
func TestAliasFieldDocs(t *testing.T) {
	fset := token.NewFileSet()
	internal := map[string]map[string]*ast.TypeSpec{} // import path → type name → spec
	for _, dir := range publicPackages {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			edits := checkFile(t, fset, f, internal)
			if len(edits) == 0 {
				continue
			}
			if !*update {
				for _, e := range edits {
					t.Errorf("%s: the doc comment of alias %s does not list the fields of %s as they are "+
						"(go test ./sdk -run TestAliasFieldDocs -update rewrites it)", fset.Position(e.pos), e.name, e.target)
				}
				continue
			}
			out := applyEdits(src, fset, edits)
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// edit replaces a doc comment's bytes [from, to) with text.
type edit struct {
	pos          token.Pos
	name, target string
	from, to     int
	text         string
}

// checkFile returns the edits that bring the doc comments of f's aliases
// of internal structs up to date.
func checkFile(t *testing.T, fset *token.FileSet, f *ast.File, internal map[string]map[string]*ast.TypeSpec) []edit {
	t.Helper()
	imports := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	var edits []edit
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			if !ts.Assign.IsValid() || !ts.Name.IsExported() {
				continue
			}
			sel, ok := ts.Type.(*ast.SelectorExpr)
			if !ok {
				continue
			}
			pkgIdent, ok := sel.X.(*ast.Ident)
			if !ok {
				continue
			}
			path := imports[pkgIdent.Name]
			if !strings.HasPrefix(path, modulePath+"sdk/internal/") {
				continue
			}
			target := internalType(t, fset, internal, path, sel.Sel.Name)
			if target == nil {
				continue
			}
			st, ok := target.Type.(*ast.StructType)
			if !ok {
				continue
			}
			doc := ts.Doc
			if doc == nil && len(gd.Specs) == 1 {
				doc = gd.Doc
			}
			if doc == nil {
				t.Errorf("%s: alias %s has no doc comment", fset.Position(ts.Pos()), ts.Name.Name)
				continue
			}
			want := fieldList(t, fset, path, sel.Sel.Name, st)
			if want == "" {
				continue
			}
			from, to := fset.Position(doc.Pos()).Offset, fset.Position(doc.End()).Offset
			text := commentText(doc)
			base := text
			if i := strings.Index(text, "\n//\n"+fieldsMarker); i >= 0 {
				base = text[:i]
			}
			if full := base + "\n//\n" + want; full != text {
				edits = append(edits, edit{pos: ts.Pos(), name: ts.Name.Name, target: pkgIdent.Name + "." + sel.Sel.Name,
					from: from, to: to, text: full})
			}
		}
	}
	return edits
}

// commentText is the comment group's lines as written.
func commentText(g *ast.CommentGroup) string {
	lines := make([]string, 0, len(g.List))
	for _, c := range g.List {
		lines = append(lines, c.Text)
	}
	return strings.Join(lines, "\n")
}

// internalType returns the spec of type name of the package at import
// path (parsed once).
func internalType(t *testing.T, fset *token.FileSet, cache map[string]map[string]*ast.TypeSpec, path, name string) *ast.TypeSpec {
	t.Helper()
	if cache[path] == nil {
		cache[path] = map[string]*ast.TypeSpec{}
		dir := filepath.Join("..", strings.TrimPrefix(path, modulePath))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range files {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
					for _, s := range gd.Specs {
						ts := s.(*ast.TypeSpec)
						cache[path][ts.Name.Name] = ts
					}
				}
			}
		}
	}
	return cache[path][name]
}

// fieldList is the doc comment lines listing st's exported fields ("" when
// it has none); a field without documentation fails the test.
func fieldList(t *testing.T, fset *token.FileSet, path, typeName string, st *ast.StructType) string {
	t.Helper()
	var items []string
	for _, fl := range st.Fields.List {
		var typ bytes.Buffer
		if err := printer.Fprint(&typ, fset, fl.Type); err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(fl.Names))
		for _, n := range fl.Names {
			if n.IsExported() {
				names = append(names, n.Name)
			}
		}
		if len(fl.Names) == 0 { // embedded
			n := strings.TrimPrefix(typ.String(), "*")
			if i := strings.LastIndex(n, "."); i >= 0 {
				n = n[i+1:]
			}
			if ast.IsExported(n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			continue
		}
		text := strings.Join(strings.Fields(fl.Doc.Text()), " ")
		if text == "" {
			t.Errorf("%s: field %s of %s.%s has no doc comment", fset.Position(fl.Pos()), strings.Join(names, ", "), path, typeName)
			continue
		}
		for _, n := range names {
			items = append(items, wrapItem(n+" "+typ.String()+": "+text))
		}
	}
	if len(items) == 0 {
		return ""
	}
	return fieldsMarker + "\n//\n" + strings.Join(items, "\n")
}

// wrapItem is a list item of a doc comment, wrapped at 80 columns as gofmt
// keeps it ("//   - " then continuation lines "//     ").
func wrapItem(s string) string {
	const width = 80
	words := strings.Fields(s)
	var lines []string
	line := "//   -"
	for _, w := range words {
		if len(line)+1+len(w) > width && !slices.Contains([]string{"//   -", "//    "}, line) {
			lines = append(lines, line)
			line = "//    "
		}
		line += " " + w
	}
	return strings.Join(append(lines, line), "\n")
}

// applyEdits applies edits (in file order) to src.
func applyEdits(src []byte, fset *token.FileSet, edits []edit) []byte {
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(src[last:e.from])
		out.WriteString(e.text)
		last = e.to
	}
	out.Write(src[last:])
	_ = fset
	return out.Bytes()
}
