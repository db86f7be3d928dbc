package scheduling

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPurePackagesImportOnlyStdlibAndModels keeps the filtering core pure:
// models/placement and models/scheduling may import the standard library
// and corral/models (scheduling also the placement package and pycompat,
// which its own test holds to the standard library); their tests may also
// use the generated cloud. No gorm, no echo, no store.
func TestPurePackagesImportOnlyStdlibAndModels(t *testing.T) {
	allowed := map[string][]string{
		"../placement": {"corral/models"},
		".":            {"corral/models", "corral/models/placement", "corral/models/pycompat"},
	}
	testOnly := []string{"corral/models/cloudgen"}
	for dir, ok := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if isStdlib(path) || contains(ok, path) || strings.HasSuffix(file, "_test.go") && contains(testOnly, path) {
					continue
				}
				t.Errorf("%s imports %q: pure packages may import only the standard library and %v", file, path, ok)
			}
		}
	}
}

// isStdlib: standard library paths have no dot in their first element and
// are not this module's.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && first != "corral"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestIsStdlib(t *testing.T) {
	for path, want := range map[string]bool{"fmt": true, "encoding/json": true, "corral/models": false,
		"gorm.io/gorm": false, "github.com/labstack/echo/v4": false} {
		if isStdlib(path) != want {
			t.Errorf("isStdlib(%q) = %v", path, !want)
		}
	}
}
