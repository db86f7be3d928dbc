package views

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocs keeps each views package's doc its own: templ's version
// comment, written directly above `package`, would become part of it
// (regenerate with `make generate`, which leaves the comment out).
func TestPackageDocs(t *testing.T) {
	for _, dir := range []string{".", "account", "console", "world"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		var parsed []*ast.File
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil && strings.Contains(af.Doc.Text(), "templ: version") {
				t.Errorf("%s: templ's version comment is part of the package doc", f)
			}
			parsed = append(parsed, af)
		}
		p, err := doc.NewFromFiles(fset, parsed, "corral/views/"+dir)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.Doc, "Package "+p.Name+" ") {
			t.Errorf("views/%s: package doc %q does not start with \"Package %s\"", dir, p.Doc, p.Name)
		}
	}
}
