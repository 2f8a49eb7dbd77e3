package clitest

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// mainImports is what main.go may take from keep itself (issue 14): the
// engine, the TUI and the bundled workflows. engine/daemon,
// engine/authoring and engine/benchmark import engine, so the engine
// cannot re-export them without a cycle, and engine/api is the API's own
// room, which the engine implements and does not re-export (issue 41);
// they are engine's own subpackages and named here one by one — any other
// keep package main needs goes through engine/host_api.go.
var mainImports = map[string]bool{
	"keep/engine":           true,
	"keep/tui":              true,
	"keep/workflows":        true,
	"keep/engine/api":       true,
	"keep/engine/authoring": true,
	"keep/engine/daemon":    true,
	"keep/engine/benchmark": true,
}

func TestMainImportsOnlyEngineTUIAndWorkflows(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		if path != "keep" && !strings.HasPrefix(path, "keep/") {
			continue
		}
		seen++
		if !mainImports[path] {
			t.Errorf("main.go imports %s: take it through engine (engine/host_api.go) or tui instead", path)
		}
	}
	if seen == 0 {
		t.Fatal("main.go imports nothing of keep: the test reads the wrong file")
	}
}
