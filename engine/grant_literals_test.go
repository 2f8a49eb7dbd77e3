package engine

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoGrantModeLiterals: a grant mode is written once, as the typed
// constants of storage/states.go (GrantAllow, GrantAsk, GrantDeny, which the
// engine re-exports); no other non-test Go file of keep spells "allow",
// "ask" or "deny" as a string literal outside a const declaration. A mode
// compared as a bare string is how a decision drifts (a typo allows
// nothing, or a second rule grows beside the ledger's).
func TestNoGrantModeLiterals(t *testing.T) {
	t.Parallel()
	modes := map[string]bool{}
	for _, m := range GrantModes() {
		modes[string(m)] = true
	}
	var bad []string
	defined := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if gd, ok := n.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				if strings.HasSuffix(filepath.ToSlash(path), "storage/states.go") {
					defined += countModes(gd, modes)
				}
				return false // a declaration may spell its value
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && modes[v] {
				bad = append(bad, fmt.Sprintf("%s: %s", fset.Position(lit.Pos()), lit.Value))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if defined != len(modes) {
		t.Fatalf("found %d of the %d grant modes defined in storage/states.go: the walk reads the wrong tree", defined, len(modes))
	}
	if len(bad) > 0 {
		t.Errorf("%d grant modes spelled as literals (use GrantAllow, GrantAsk, GrantDeny):\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// countModes counts the grant-mode values gd declares.
func countModes(gd *ast.GenDecl, modes map[string]bool) int {
	n := 0
	for _, spec := range gd.Specs {
		for _, v := range spec.(*ast.ValueSpec).Values {
			if lit, ok := v.(*ast.BasicLit); ok {
				if s, _ := strconv.Unquote(lit.Value); modes[s] {
					n++
				}
			}
		}
	}
	return n
}
