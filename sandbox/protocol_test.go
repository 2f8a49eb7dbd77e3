package sandbox

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// constsOf parses the package's files and returns the constants declared
// with type typ, by name, with their string values.
func constsOf(t *testing.T, typ string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range parsePackage(t) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("constant %s is not a literal", n.Name)
					}
					out[n.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

func parsePackage(t *testing.T) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestEveryHostCallIsServed holds the host-call names and what serves
// them together: a name the worker can send that the host does not serve
// (or the reverse) fails here, not in a run.
func TestEveryHostCallIsServed(t *testing.T) {
	t.Parallel()
	names := constsOf(t, "hostCallName")
	if len(names) < 5 {
		t.Fatalf("found %d host-call constants: the walk reads the wrong files", len(names))
	}
	for c, v := range names {
		if _, ok := hostCalls[hostCallName(v)]; !ok {
			t.Errorf("host call %s (%q) has no entry in hostCalls", c, v)
		}
	}
	for name := range hostCalls {
		found := false
		for _, v := range names {
			found = found || v == string(name)
		}
		if !found {
			t.Errorf("hostCalls serves %q, which no hostCallName constant names", name)
		}
	}
}

// TestTheProtocolIsSpokenInConstants fails on a frame's op or a host call
// written as a bare string: the op and hostCallName constants (wire.go,
// hostcalls.go) are the whole protocol, documented where they are declared.
func TestTheProtocolIsSpokenInConstants(t *testing.T) {
	t.Parallel()
	ops := constsOf(t, "op")
	if len(ops) != 8 {
		t.Errorf("found %d ops, the protocol comment in wire.go lists 8: keep them in step", len(ops))
	}
	words := map[string]bool{}
	for _, v := range ops {
		words[v] = true
	}
	for _, v := range constsOf(t, "hostCallName") {
		words[v] = true
	}
	var bare []string
	isWord := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		v, _ := strconv.Unquote(lit.Value)
		return lit.Value, words[v]
	}
	isOp := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Op"
	}
	for _, f := range parsePackage(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CompositeLit: // frame{Op: "run"}, frame{Name: "read"}
				if id, ok := x.Type.(*ast.Ident); ok && id.Name == "frame" {
					for _, el := range x.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if w, bad := isWord(kv.Value); bad {
								bare = append(bare, "frame{…: "+w+"}")
							}
						}
					}
				}
			case *ast.BinaryExpr: // f.Op == "done"
				if w, bad := isWord(x.Y); bad && isOp(x.X) {
					bare = append(bare, "Op compared with "+w)
				}
			case *ast.SwitchStmt: // switch in.Op { case "done": }
				if x.Tag != nil && isOp(x.Tag) {
					for _, st := range x.Body.List {
						for _, e := range st.(*ast.CaseClause).List {
							if w, bad := isWord(e); bad {
								bare = append(bare, "case "+w)
							}
						}
					}
				}
			case *ast.CallExpr: // p.call(ctx, "read", …)
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "call" {
					for _, a := range x.Args {
						if w, bad := isWord(a); bad {
							bare = append(bare, "call("+w+")")
						}
					}
				}
			}
			return true
		})
	}
	slices.Sort(bare)
	for _, b := range bare {
		t.Errorf("the worker protocol written as a bare string: %s (use the op or hostCallName constants)", b)
	}
}
