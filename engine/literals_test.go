package engine

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stateValues is every value of the typed states; the test writes them out
// itself, so a renamed constant does not quietly shrink the check.
var stateValues = []string{
	"active", "paused:transient", "paused:approval", "paused:reconciliation", "failed:logic", "failed:internal", "committed", "crashed",
	"preparing", "prepared", "mutating", "mutated", "emitting",
	"awaiting_approval", "approved", "in_flight", "applied", "failed", "needs_reconcile", "indeterminate", "skipped",
	"approval", "reconciliation", "repair", "transient", "internal", "permission", "auth",
	"paused", "archived", "pending", "consumed",
}

// onlyStates are the values that are never anything but a state; the TUI
// may still write "failed" or "skipped" as a word on the screen.
var onlyStates = []string{
	"paused:transient", "paused:approval", "paused:reconciliation", "failed:logic", "failed:internal", "crashed",
	"preparing", "prepared", "mutating", "mutated", "emitting",
	"awaiting_approval", "in_flight", "needs_reconcile", "indeterminate",
}

// TestNoStatusLiterals: outside a const declaration, no non-test Go file of
// the engine or storage spells a state as a string literal, nor the TUI a
// value that is only a state; they use the typed constants
// (storage/states.go, re-exported by the engine).
func TestNoStatusLiterals(t *testing.T) {
	set := func(vs []string) map[string]bool {
		m := map[string]bool{}
		for _, v := range vs {
			m[v] = true
		}
		return m
	}
	var bad []string
	for _, dir := range []string{".", "../storage", "../tui"} {
		values := set(stateValues)
		if dir == "../tui" {
			values = set(onlyStates)
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if gd, ok := n.(*ast.GenDecl); ok && gd.Tok == token.CONST {
					return false // a declaration may spell its value
				}
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(lit.Value); err == nil && values[v] {
					bad = append(bad, fmt.Sprintf("%s: %s", fset.Position(lit.Pos()), lit.Value))
				}
				return true
			})
		}
	}
	if len(bad) > 0 {
		t.Fatalf("%d state literals outside a const declaration (use the typed constants):\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
