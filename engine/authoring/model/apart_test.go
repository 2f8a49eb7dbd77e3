package model

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAuthoringStandsApart: the model's side takes of keep only the
// connectors' credential transport and the config; never the engine, the
// ledger, storage or the sandbox, so what a model answers reaches the
// engine only as the script a RepairRequest asked for (issue 41).
func TestAuthoringStandsApart(t *testing.T) {
	allowed := map[string]bool{"keep/connectors": true, "keep/engine/config": true}
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
				t.Errorf("%s imports %s: authoring takes of keep only %v", name, path, allowed)
			}
		}
	}
	if read == 0 {
		t.Fatal("no file of the package was read")
	}
}
