package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	// a statement that writes one of the ledger's tables
	ledgerWrite = regexp.MustCompile(`(?is)\b(UPDATE\s+(runs|mutations|workflows|events)\s+SET\b|INSERT\s+INTO\s+(runs|mutations|workflows)\b)`)
	// a status column assigned (WHERE clauses cut off first)
	statusSet = regexp.MustCompile(`(?i)\b(status|phase|block_kind)\s*=`)
	// an insert: the row is born with its status
	ledgerInsert = regexp.MustCompile(`(?is)\bINSERT\s+INTO\s+(runs|mutations|workflows)\b`)
)

// statusWritersInSource is every function of storage's non-test sources
// whose SQL writes a status: it names one of the ledger's tables in an
// UPDATE or INSERT and, for an UPDATE, assigns a status column in a SET
// (the SQL may be built from several literals).
func statusWritersInSource(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	fset := token.NewFileSet()
	var parsed []*ast.File
	consts := map[string]string{} // package-level SQL kept in a const or var
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					ast.Inspect(v, func(n ast.Node) bool {
						if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							consts[vs.Names[i].Name] += s + " "
						}
						return true
					})
				}
			}
		}
	}
	for _, f := range parsed {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var writes, inserts, sets bool
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				var s string
				switch n := n.(type) {
				case *ast.BasicLit:
					if n.Kind != token.STRING {
						return true
					}
					s, _ = strconv.Unquote(n.Value)
				case *ast.Ident:
					s = consts[n.Name]
				default:
					return true
				}
				writes = writes || ledgerWrite.MatchString(s)
				inserts = inserts || ledgerInsert.MatchString(s)
				if i := strings.Index(strings.ToUpper(s), "WHERE"); i >= 0 {
					s = s[:i]
				}
				sets = sets || statusSet.MatchString(s)
				return true
			})
			if writes && (inserts || sets) {
				found = append(found, fn.Name.Name)
			}
		}
	}
	return found
}

// TestStatusWritersListed: every function whose SQL writes a status is in
// StatusWriters, and every name there is such a function, so the ledger's
// boundary test (engine/ledger) checks the calls of all of them.
func TestStatusWritersListed(t *testing.T) {
	found := statusWritersInSource(t)
	for _, name := range found {
		if !slices.Contains(StatusWriters, name) {
			t.Errorf("%s writes a status but is not in StatusWriters", name)
		}
	}
	for _, name := range StatusWriters {
		if !slices.Contains(found, name) {
			t.Errorf("StatusWriters names %s, which writes no status", name)
		}
	}
}
