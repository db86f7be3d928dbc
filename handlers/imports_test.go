package handlers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pagePackages are the handler packages that render console pages; only
// they may import views. The kernel and the JSON APIs must not depend on
// templates at all, not even through another package.
var pagePackages = []string{
	"corral/handlers/account",
	"corral/handlers/cloudpage",
	"corral/handlers/console",
	"corral/handlers/doctor",
	"corral/handlers/layout",
	"corral/handlers/query",
	"corral/handlers/world",
}

func isViews(path string) bool {
	return path == "corral/views" || strings.HasPrefix(path, "corral/views/") || path == "corral/static"
}

// corralImports lists the corral packages a package's non-test files
// import. dir is relative to the module root.
func corralImports(t *testing.T, pkg string) []string {
	t.Helper()
	dir := filepath.Join("..", strings.TrimPrefix(pkg, "corral"))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
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
			if (path == "corral" || strings.HasPrefix(path, "corral/")) && !slices.Contains(out, path) {
				out = append(out, path)
			}
		}
	}
	return out
}

// TestOnlyPagePackagesImportViews walks every handler package's imports.
func TestOnlyPagePackagesImportViews(t *testing.T) {
	dirs, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := []string{"corral/handlers"}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			pkgs = append(pkgs, "corral/handlers/"+d)
		}
	}
	if len(pkgs) < 6 {
		t.Fatalf("found only %v", pkgs)
	}
	for _, pkg := range pkgs {
		if slices.Contains(pagePackages, pkg) {
			continue
		}
		for _, imp := range corralImports(t, pkg) {
			if isViews(imp) {
				t.Errorf("%s imports %s; only the page packages %v may", pkg, imp, pagePackages)
			}
		}
	}
}

// TestKernelAndAPIsDependOnNoViews follows imports transitively, as
// `go list -deps` would, so that no package in between smuggles views in.
func TestKernelAndAPIsDependOnNoViews(t *testing.T) {
	for _, root := range []string{"corral/handlers", "corral/handlers/compute", "corral/handlers/placementapi"} {
		via := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			pkg := queue[0]
			queue = queue[1:]
			for _, imp := range corralImports(t, pkg) {
				if _, seen := via[imp]; seen {
					continue
				}
				via[imp] = pkg
				if isViews(imp) {
					t.Errorf("%s depends on %s (imported by %s)", root, imp, pkg)
					continue
				}
				queue = append(queue, imp)
			}
		}
		if len(via) < 3 {
			t.Errorf("%s: found only %d packages; is the walk broken?", root, len(via))
		}
	}
}
