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
// which is held to the standard library and no I/O as they are; models/doctor
// also scheduling); their tests may also use the generated cloud. No gorm, no echo, no store, and no I/O: the
// standard library's files, network, databases, processes and logs are
// denied too (tests may read their seed files).
func TestPurePackagesImportOnlyStdlibAndModels(t *testing.T) {
	allowed := map[string][]string{
		"../placement": {"corral/models"},
		"../pycompat":  {},
		".":            {"corral/models", "corral/models/placement", "corral/models/pycompat"},
		"../doctor":    {"corral/models", "corral/models/placement", "corral/models/scheduling"},
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
				if !strings.HasSuffix(file, "_test.go") && isIO(path) {
					t.Errorf("%s imports %q: the pure core does no I/O", file, path)
					continue
				}
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

// ioPackages are standard-library packages (and their subpackages) that
// reach outside the process: files, network, databases, processes, logs.
var ioPackages = []string{"os", "net", "database", "syscall", "unsafe", "plugin", "io/fs", "io/ioutil",
	"path/filepath", "log", "embed", "runtime/cgo", "runtime/debug", "crypto/rand", "time/tzdata"}

// isIO reports whether path is one of ioPackages or below one. net/url and
// net/netip only parse values, so they are allowed.
func isIO(path string) bool {
	if path == "net/url" || path == "net/netip" {
		return false
	}
	for _, p := range ioPackages {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
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

func TestIsIO(t *testing.T) {
	for path, want := range map[string]bool{"os": true, "os/exec": true, "net/http": true, "net": true,
		"database/sql": true, "log/slog": true, "path/filepath": true, "io": false, "fmt": false,
		"encoding/json": false, "runtime": false, "net/url": false, "osmosis": false} {
		if isIO(path) != want {
			t.Errorf("isIO(%q) = %v", path, !want)
		}
	}
}
