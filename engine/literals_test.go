package engine

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
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
// the engine or storage, nor main.go, spells a state as a string literal,
// nor the TUI a value that is only a state; they use the typed constants
// (storage/states.go, re-exported by the engine), and flags list their
// values from them.
func TestNoStatusLiterals(t *testing.T) {
	set := func(vs []string) map[string]bool {
		m := map[string]bool{}
		for _, v := range vs {
			m[v] = true
		}
		return m
	}
	var bad []string
	for _, dir := range []string{".", "./ledger", "../storage", "../tui", "../main.go"} {
		values := set(stateValues)
		switch dir {
		case "../tui":
			values = set(onlyStates)
		case "../main.go":
			// "auth" is also a sub-command's name there
			delete(values, "auth")
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if dir == "../main.go" {
			files = []string{dir}
		}
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

// TestStateListsComplete: each full list of a state type (what flags offer)
// holds every constant of that type declared in storage/states.go, so a
// state added there cannot be missing from a flag's values.
func TestStateListsComplete(t *testing.T) {
	lists := map[string][]string{
		"RunStatus":      strs(RunStatuses()),
		"MutationStatus": strs(MutationStatuses()),
		"EventStatus":    strs(EventStatuses()),
		"GrantMode":      strs(GrantModes()),
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../storage/states.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			typ, ok := vs.Type.(*ast.Ident)
			if !ok || lists[typ.Name] == nil {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					declared[typ.Name] = append(declared[typ.Name], s)
				}
			}
		}
	}
	for typ, list := range lists {
		if len(declared[typ]) == 0 {
			t.Errorf("no constants of %s found in storage/states.go", typ)
		}
		for _, v := range declared[typ] {
			if !slices.Contains(list, v) {
				t.Errorf("%s %q is declared but missing from its full list", typ, v)
			}
		}
		if len(list) != len(declared[typ]) {
			t.Errorf("%s: full list %v, declared %v", typ, list, declared[typ])
		}
	}
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
