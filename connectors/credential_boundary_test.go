package connectors

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// signers are the files allowed to put a credential on a request: the one
// transport (Transport.Do and Signed both call Authorize).
var signers = map[string]string{
	"connectors/authorize.go": "Authorize: the credential of an account, for Transport and Signed",
}

// clientMakers are the files allowed to build an HTTP client or transport,
// each with why no credential reaches the wire through it but by
// connectors' Transport or Signed (origin.go): a client built anywhere
// else is a way around the binding (scheme, host, port; redirects; plain
// http only to this machine).
var clientMakers = map[string]string{
	"connectors/transport.go":         "NewHTTPTransport: the connections every connector's client shares",
	"connectors/slack/slack.go":       "its client goes to connectors.Transport with the account",
	"connectors/calendar/calendar.go": "its client goes to connectors.Transport with the account",
	"connectors/sheets/google.go":     "its client goes to connectors.Transport with the account",
	"connectors/mcp/session.go":       "its client's RoundTripper is connectors.Signed when an account is set",
	"engine/authoring/model/chat.go":  "its client goes to connectors.Transport with the LLM key",
	"engine/daemon/client.go":         "a unix socket to keep's own daemon: no credential",
}

// credentialSites is every place under root, outside _test.go files and
// test-server helpers, that puts a credential on a request (a header
// named Authorization set, added or assigned, SetBasicAuth) or builds an
// HTTP client or transport (http.Client{}, http.Transport{}, new of
// either, a Clone of http.DefaultTransport), as "path:line what" keyed by
// path.
func credentialSites(t *testing.T, root string) (sign, build map[string][]string) {
	t.Helper()
	sign, build = map[string][]string{}, map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// test servers (oauthtest, radicaletest, mcptest) play the other
		// side of the wire: their package names end in "test"
		if strings.HasSuffix(f.Name.Name, "test") {
			return nil
		}
		at := func(n ast.Node, what string) string {
			return rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) + " " + what
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if name := httpType(n.Type); name != "" {
					build[rel] = append(build[rel], at(n, "http."+name+"{}"))
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 && httpType(n.Args[0]) != "" {
						build[rel] = append(build[rel], at(n, "new(http."+httpType(n.Args[0])+")"))
					}
					return true
				}
				switch sel.Sel.Name {
				case "SetBasicAuth":
					sign[rel] = append(sign[rel], at(n, "SetBasicAuth"))
				case "Set", "Add":
					if len(n.Args) == 2 && authHeader(n.Args[0]) {
						sign[rel] = append(sign[rel], at(n, "Header."+sel.Sel.Name+"(Authorization)"))
					}
				case "Clone":
					if strings.Contains(exprString(sel.X), "DefaultTransport") {
						build[rel] = append(build[rel], at(n, "http.DefaultTransport.Clone()"))
					}
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if ix, ok := l.(*ast.IndexExpr); ok && authHeader(ix.Index) && strings.HasSuffix(exprString(ix.X), "Header") {
						sign[rel] = append(sign[rel], at(n, "Header[Authorization] ="))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sign, build
}

// httpType is "Client" or "Transport" when e names net/http's.
func httpType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "http" || pkg.Name == "nethttp") &&
		(sel.Sel.Name == "Client" || sel.Sel.Name == "Transport") {
		return sel.Sel.Name
	}
	return ""
}

// authHeader reports whether e is the literal name of a credential header.
func authHeader(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && (strings.EqualFold(s, "Authorization") || strings.EqualFold(s, "Proxy-Authorization"))
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.TypeAssertExpr:
		return exprString(e.X)
	case *ast.ParenExpr:
		return exprString(e.X)
	}
	return ""
}

func outside(found map[string][]string, allowed map[string]string) []string {
	var out []string
	for path, sites := range found {
		if _, ok := allowed[path]; !ok {
			out = append(out, sites...)
		}
	}
	sort.Strings(out)
	return out
}

// TestCredentialsGoOnlyThroughTheOneTransport: no file but Authorize puts
// a credential on a request, and no file but the listed ones builds an
// HTTP client; a listed file that no longer does must leave the list, so
// the list never grows stale.
func TestCredentialsGoOnlyThroughTheOneTransport(t *testing.T) {
	t.Parallel()
	sign, build := credentialSites(t, "..")
	if bad := outside(sign, signers); len(bad) > 0 {
		t.Errorf("a credential is put on a request outside connectors.Authorize (use connectors.Transport or connectors.NewSigned):\n%s", strings.Join(bad, "\n"))
	}
	if bad := outside(build, clientMakers); len(bad) > 0 {
		t.Errorf("an HTTP client is built outside the files that hand it to connectors' transport (add it to clientMakers only with why no credential passes through it otherwise):\n%s", strings.Join(bad, "\n"))
	}
	for path := range signers {
		if len(sign[path]) == 0 {
			t.Errorf("%s no longer signs requests: take it off signers", path)
		}
	}
	for path := range clientMakers {
		if len(build[path]) == 0 {
			t.Errorf("%s no longer builds a client: take it off clientMakers", path)
		}
	}
}

// TestTheCredentialWalkSeesEveryWay: the walk above finds each way a file
// could build a client or sign a request, so its silence means something.
func TestTheCredentialWalkSeesEveryWay(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src := `package rogue

import "net/http"

func a(req *http.Request, key string) {
	c := &http.Client{}
	_ = http.Transport{}
	_ = new(http.Client)
	_ = http.DefaultTransport.(*http.Transport).Clone()
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Add("authorization", key)
	req.Header["Authorization"] = []string{key}
	req.SetBasicAuth("me", key)
	_ = c
}
`
	if err := os.MkdirAll(filepath.Join(root, "engine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "engine", "rogue.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sign, build := credentialSites(t, root)
	if got := len(sign["engine/rogue.go"]); got != 4 {
		t.Errorf("signing sites found = %v, want 4", sign)
	}
	if got := len(build["engine/rogue.go"]); got != 4 {
		t.Errorf("client sites found = %v, want 4", build)
	}
}
