package sandbox

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a function of this package (issue 41): the worker
// protocol and the guards are read by people checking what holds, and a
// function that does not fit on a screen hides its cases.
const maxFuncLines = 80

// longFuncs lists the functions of the package's files in dir over max
// lines, as "file:func" with their length.
func longFuncs(t *testing.T, files map[string]string, max int) map[string]int {
	t.Helper()
	fset := token.NewFileSet()
	long := map[string]int{}
	for name, src := range files {
		var text any
		if src != "" {
			text = src
		}
		f, err := parser.ParseFile(fset, name, text, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Pos()).Line + 1
			if n > max {
				long[filepath.Base(name)+":"+fn.Name.Name] = n
			}
		}
	}
	return long
}

func TestNoFunctionOverEightyLines(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, p := range paths {
		if !strings.HasSuffix(p, "_test.go") {
			files[p] = "" // read from disk
		}
	}
	if len(files) < 10 {
		t.Fatalf("read %d files: the test runs in the wrong folder", len(files))
	}
	long := longFuncs(t, files, maxFuncLines)
	for fn, n := range long {
		t.Errorf("%s is %d lines, over %d: split it into functions named for what they do", fn, n, maxFuncLines)
	}
}

// TestTheLengthWalkSeesALongFunction proves the walk above counts a
// function's lines: one of 81 lines is found, one of 80 is not.
func TestTheLengthWalkSeesALongFunction(t *testing.T) {
	t.Parallel()
	body := func(lines int) string {
		return "func f() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	long := longFuncs(t, map[string]string{"a.go": "package p\n" + body(81)}, maxFuncLines)
	if long["a.go:f"] != 81 {
		t.Errorf("a function of 81 lines: found %v", long)
	}
	if long := longFuncs(t, map[string]string{"b.go": "package p\n" + body(80)}, maxFuncLines); len(long) != 0 {
		t.Errorf("a function of 80 lines reported as long: %v", long)
	}
}
