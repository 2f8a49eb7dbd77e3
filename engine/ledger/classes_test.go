package ledger

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"keep/connectors"
)

// TestOneClassVocabulary: the ledger's classes are the connectors' words
// (and Parked), and every word a connector can give reaches a run as one
// of them, itself where the ledger has it. The connectors' words are read
// from their declaration, so a class added there is checked here.
func TestOneClassVocabulary(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "../../connectors/connector.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var words []connectors.Class
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Class" {
				continue
			}
			for _, v := range vs.Values {
				s, _ := strconv.Unquote(v.(*ast.BasicLit).Value)
				words = append(words, connectors.Class(s))
			}
		}
	}
	if len(words) < 6 {
		t.Fatalf("read %d connector classes: the walk reads the wrong file", len(words))
	}
	ours := map[Class]bool{ClassTransient: true, ClassLogic: true, ClassAuth: true, ClassPermission: true, ClassInternal: true}
	for c := range ours {
		if !contains(words, connectors.Class(c)) {
			t.Errorf("the ledger's class %q is not a connectors word", c)
		}
	}
	for _, w := range words {
		got := ClassOf(w)
		switch {
		case !ours[got]:
			t.Errorf("connectors' %q reaches a run as %q, not a class of the ledger", w, got)
		case ours[Class(w)] && got != Class(w):
			t.Errorf("connectors' %q reaches a run as %q: the same word should stay itself", w, got)
		}
	}
	if ClassOf(connectors.Uncertain) != ClassTransient || ClassOf("made-up") != ClassInternal {
		t.Error("uncertain is a transient run, an unknown word an internal one")
	}
}

func contains(ws []connectors.Class, c connectors.Class) bool {
	for _, w := range ws {
		if w == c {
			return true
		}
	}
	return false
}
