package corral_test

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Limits that keep every hand-written file and function small enough to
// read in one sitting and to find from its folder and file name.
const (
	maxFileLines      = 800
	maxFuncLines      = 120
	maxFuncComplexity = 40
)

// sizeExceptions names files that still exceed a limit, with the reason.
// Each entry excuses the file and every function in it; an entry whose
// file no longer exceeds any limit fails the test, so the list only shrinks.
var sizeExceptions = map[string]string{}

// TestFilesAndFunctionsStaySmall walks the module's hand-written, non-test Go files and
// fails for any file above maxFileLines lines, or any function above
// maxFuncLines lines or cyclomatic complexity maxFuncComplexity. It logs the
// ten largest files and the ten longest and most complex functions.
func TestFilesAndFunctionsStaySmall(t *testing.T) {
	files, funcs := measureModule(t, ".")

	offending := map[string]bool{}
	report := func(path, msg string) {
		offending[path] = true
		if reason, ok := sizeExceptions[path]; ok {
			t.Logf("excepted (%s): %s", reason, msg)
			return
		}
		t.Error(msg)
	}
	for _, f := range files {
		if f.lines > maxFileLines {
			report(f.path, fmt.Sprintf("%s has %d lines (limit %d): split it into files by what they hold", f.path, f.lines, maxFileLines))
		}
	}
	for _, fn := range funcs {
		if fn.lines > maxFuncLines || fn.complexity > maxFuncComplexity {
			report(fn.path, fmt.Sprintf("%s has %d lines (limit %d) and cyclomatic complexity %d (limit %d): break it into named steps",
				fn, fn.lines, maxFuncLines, fn.complexity, maxFuncComplexity))
		}
	}
	for path, reason := range sizeExceptions {
		if !offending[path] {
			t.Errorf("%s is excepted (%s) but is within every limit now: drop it from sizeExceptions", path, reason)
		}
	}

	slices.SortFunc(files, func(a, b fileSize) int { return cmp.Or(cmp.Compare(b.lines, a.lines), cmp.Compare(a.path, b.path)) })
	t.Log("largest files:")
	for _, f := range files[:min(10, len(files))] {
		t.Logf("  %5d  %s", f.lines, f.path)
	}
	slices.SortFunc(funcs, func(a, b funcSize) int {
		return cmp.Or(cmp.Compare(b.lines, a.lines), cmp.Compare(a.String(), b.String()))
	})
	t.Log("longest functions (lines, complexity):")
	for _, fn := range funcs[:min(10, len(funcs))] {
		t.Logf("  %5d  %3d  %s", fn.lines, fn.complexity, fn)
	}
	slices.SortFunc(funcs, func(a, b funcSize) int {
		return cmp.Or(cmp.Compare(b.complexity, a.complexity), cmp.Compare(a.String(), b.String()))
	})
	t.Log("most complex functions (complexity, lines):")
	for _, fn := range funcs[:min(10, len(funcs))] {
		t.Logf("  %3d  %5d  %s", fn.complexity, fn.lines, fn)
	}
}

// TestComplexityCountsBranches pins the measure: 1, plus one for each if,
// for, range, non-default case or select case, && and ||, closures included.
func TestComplexityCountsBranches(t *testing.T) {
	src := `package p
func f(a, b bool, xs []int, c chan int) {
	if a && b || a {
	}
	for i := 0; i < 1; i++ {
	}
	for range xs {
	}
	switch {
	case a:
	case b:
	default:
	}
	select {
	case <-c:
	default:
	}
	_ = func() {
		if b {
		}
	}
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 1 + if + && + || + for + range + 2 cases + 1 select case + the closure's
	// if; default clauses add no path of their own.
	if got, want := complexity(f.Decls[0].(*ast.FuncDecl)), 10; got != want {
		t.Errorf("complexity = %d, want %d", got, want)
	}
}

type fileSize struct {
	path  string
	lines int
}

type funcSize struct {
	path, name        string
	lines, complexity int
}

func (f funcSize) String() string { return f.path + ": " + f.name }

// measureModule parses every hand-written non-test Go file under root.
// Files named *_templ.go or carrying the "Code generated ... DO NOT EDIT."
// header are generated and skipped.
func measureModule(t *testing.T, root string) ([]fileSize, []funcSize) {
	t.Helper()
	var files []fileSize
	var funcs []funcSize
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_templ.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		path = filepath.ToSlash(path)
		files = append(files, fileSize{path, fset.File(f.Pos()).LineCount()})
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			funcs = append(funcs, funcSize{path, funcName(fn), lines, complexity(fn)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files found")
	}
	return files, funcs
}

// funcName is "Recv.Name" for methods, "Name" for functions.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fmt.Sprintf("%T.%s", typ, fn.Name.Name)
}

// complexity is the cyclomatic complexity of fn: 1, plus one for each if,
// for, range, non-default case or select case, && and ||, counting the
// closures inside fn as part of it.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
