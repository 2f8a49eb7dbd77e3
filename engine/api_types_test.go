package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPITypesLiveWithTheAPI: every type of this package that an API
// method takes or gives, directly or through a field, is declared in
// api.go, or in a leaf: a file that names nothing declared in another file
// of the package (arguments.go's Argument, made where the listing is), so
// api.go never reaches up into a feature file for its words (issue 41). An
// alias of a lower package's type declares nothing and ends the walk.
func TestAPITypesLiveWithTheAPI(t *testing.T) {
	decls := map[string]*ast.TypeSpec{}
	file := map[string]string{}
	top := map[string]string{}           // every top-level name → its file
	used := map[string]map[string]bool{} // file → the names it mentions
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				decls[ts.Name.Name], file[ts.Name.Name] = ts, name
			}
			return true
		})
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					top[d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						top[sp.Name.Name] = name
					case *ast.ValueSpec:
						for _, id := range sp.Names {
							top[id.Name] = name
						}
					}
				}
			}
		}
		used[name] = map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				used[name][id.Name] = true
			}
			return true
		})
	}
	api, ok := decls["API"]
	if !ok || file["API"] != "api.go" {
		t.Fatalf("no API interface in api.go (found in %q)", file["API"])
	}
	// leaf: f names nothing another file declares (a method's name is no
	// top-level name, so a call of one is not counted: the walk stays strict
	// where a file only calls methods of Engine)
	leaf := func(f string) bool {
		for n := range used[f] {
			if g, ok := top[n]; ok && g != f && n != "_" {
				return false
			}
		}
		return true
	}
	seen := map[string]bool{}
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				return false // another package's name
			case *ast.Ident:
				ts, ok := decls[x.Name]
				if !ok || seen[x.Name] {
					return true
				}
				seen[x.Name] = true
				if ts.Assign.IsValid() {
					return true // an alias: its target is named where it lives
				}
				if f := file[x.Name]; f != "api.go" && !leaf(f) {
					t.Errorf("%s, which the API takes or gives, is declared in %s, which uses other files of the package: move it to api.go", x.Name, f)
				}
				walk(ts.Type)
			}
			return true
		})
	}
	walk(api.Type)
	// the walk itself: it must reach types found only through fields
	for _, deep := range []string{"TryReport", "TryRun", "TraceLine", "ProposalSummary", "Argument", "HandlerView", "OutputCounters"} {
		if !seen[deep] {
			t.Errorf("the walk from API never reached %s: it does not follow fields", deep)
		}
	}
	if n := len(seen); n < 30 {
		t.Errorf("the walk reached %d types: fewer than the API has", n)
	}
}
