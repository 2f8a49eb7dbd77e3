package api

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAPIStandsBelowTheEngine: the API and every type its methods take or
// give are declared here, and this package takes of keep only the rooms
// below the engine (the ledger's words, storage's states, a script's
// manifest, a connector's argument rules): never the run loop, authoring
// or a front end, so whatever implements the API, and whoever calls it,
// stands above it (issue 41).
func TestAPIStandsBelowTheEngine(t *testing.T) {
	allowed := map[string]bool{"keep/storage": true, "keep/sandbox": true, "keep/engine/ledger": true, "keep/connectors": true}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		read++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if (path == "keep" || strings.HasPrefix(path, "keep/")) && !allowed[path] {
				t.Errorf("%s imports %s: the API takes of keep only %v", name, path, allowed)
			}
		}
	}
	if read == 0 {
		t.Fatal("no file of the package was read")
	}
}
