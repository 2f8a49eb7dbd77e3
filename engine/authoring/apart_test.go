package authoring

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTheRunLoopStandsBelowAuthoring: authoring drives the engine (dry
// runs on a throw-away engine, proposals filed in its ledger), so the run
// loop imports nothing of authoring, the model's side included: it reaches
// authoring only through the Repairer it is given at construction, and
// none given is no repair (issue 41).
func TestTheRunLoopStandsBelowAuthoring(t *testing.T) {
	names, err := filepath.Glob("../*.go")
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
			if path == "keep/engine/authoring" || strings.HasPrefix(path, "keep/engine/authoring/") {
				t.Errorf("engine/%s imports %s: the run loop reaches authoring only through Opts.Repairer", filepath.Base(name), path)
			}
		}
	}
	if read == 0 {
		t.Fatal("no file of the engine was read")
	}
}
