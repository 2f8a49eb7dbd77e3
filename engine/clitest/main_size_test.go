package clitest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// main.go is the command table (issue 41): getting hold of an engine is
// engine/daemon's Site, shared by the TUI, the daemon and every command.
// These are the calls that would grow a second way to do it.
var acquisition = map[string]bool{
	"engine.New": true, "engine.OpenDB": true, "engine.NewBus": true,
	"daemon.ClaimEngine": true, "daemon.Attach": true, "daemon.Dial": true,
	"daemon.Serve": true, "daemon.AwaitStart": true,
}

func TestMainIsACommandTable(t *testing.T) {
	src, err := os.ReadFile("../../main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n >= 2000 {
		t.Errorf("main.go has %d lines: what is not the command line belongs in a package (engine/daemon/site.go gets hold of the engine)", n)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "../../main.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		calls++
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && acquisition[pkg.Name+"."+sel.Sel.Name] {
				t.Errorf("main.go calls %s.%s: get hold of the engine through daemon.Site (engine/daemon/acquire.go)", pkg.Name, sel.Sel.Name)
			}
		}
		return true
	})
	if calls == 0 {
		t.Fatal("no calls seen in main.go: the walk reads nothing")
	}
}
