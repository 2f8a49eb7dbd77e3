package walk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Calls lists every call of one of names — a method (x.Name(...)) or a
// plain function (Name(...)) — in the Go files under root, as
// "path:line Name" with the path relative to root and slash-separated,
// sorted. skip leaves out a file or a whole folder by that path (the
// owner's own files, say); hidden folders and testdata are never read.
func Calls(t testing.TB, root string, names []string, skip func(rel string, dir bool) bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	var calls []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || skip(rel, true)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || skip(rel, false) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var id *ast.Ident
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				id = fn.Sel
			case *ast.Ident:
				id = fn
			}
			if id != nil && slices.Contains(names, id.Name) {
				calls = append(calls, rel+":"+strconv.Itoa(fset.Position(id.Pos()).Line)+" "+id.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(calls)
	return calls
}
