// Package walk reads the tree's Go files for the tests that hold the
// house's boundaries: which of keep's packages a folder imports (a room
// must not reach up), and where a name is called (only its owner may). It
// takes nothing of keep itself, so any package's tests may use it without a
// cycle.
package walk

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Imports returns, for each non-test Go file matching pattern (a
// filepath.Glob pattern such as "*.go" or "../*.go"), the packages of
// module keep it imports. It fails t when no file matches: a test that read
// nothing proves nothing.
func Imports(t testing.TB, pattern string) map[string][]string {
	t.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = nil
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "keep" || strings.HasPrefix(path, "keep/") {
				got[name] = append(got[name], path)
			}
		}
	}
	if len(got) == 0 {
		t.Fatalf("no Go file matches %s", pattern)
	}
	return got
}
