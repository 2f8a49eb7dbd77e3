package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// authSeen records the Authorization header of every request a server got.
type authSeen struct {
	mu   sync.Mutex
	auth []string
}

func (a *authSeen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (a *authSeen) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auth...)
}

// TestMCPOverHTTPKeepsTheTokenWhereItIsBound: a server that answers 307 to
// another host and port gets the account's token, and the place it sends
// keep to gets none; an http:// URL to another machine is refused before
// anything is sent.
func TestMCPOverHTTPKeepsTheTokenWhereItIsBound(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "elsewhere", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "find", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "[]"}}}, nil
	})
	var atTarget, atFirst authSeen
	target := httptest.NewServer(atTarget.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(target.Close)
	first := httptest.NewServer(atFirst.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})))
	t.Cleanup(first.Close)
	// another host as well as another port: localhost, then 127.0.0.1
	url := strings.Replace(first.URL, "127.0.0.1", "localhost", 1) + "/mcp"

	c, err := New(Config{Name: "svc", URL: url, Account: &tokenAccount{}, Reads: []string{"find"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Do(context.Background(), connectors.Call{Method: "find", Params: map[string]any{}})
	if got := atFirst.all(); len(got) == 0 || got[0] != "Bearer s3cret" {
		t.Fatalf("the server the account is for got %q, want its token", got)
	}
	seen := atTarget.all()
	if len(seen) == 0 {
		t.Fatal("the redirect was never followed: the test proves nothing")
	}
	for _, a := range seen {
		if a != "" {
			t.Fatalf("the server a 307 pointed to got Authorization %q", a)
		}
	}

	t.Run("plain http to another machine is refused before any request", func(t *testing.T) {
		c, err := New(Config{Name: "far", URL: "http://mcp.example.com:8080/mcp", Account: &tokenAccount{}, Reads: []string{"find"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_, err = c.Do(context.Background(), connectors.Call{Method: "find", Params: map[string]any{}})
		var ce *connectors.Error
		if !errors.As(err, &ce) || ce.Class != connectors.Permission || !ce.NotSent || !strings.Contains(err.Error(), "plain http") {
			t.Fatalf("err = %v, want a permission error with nothing sent", err)
		}
	})
}

// TestMCPOverHTTPFollowsRedirectsAsEveryConnectorDoes: MCP's HTTP client
// is the SDK's to drive, and it took net/http's rules: a 302 to a JSON-RPC
// POST was followed as a GET. It takes connectors' (BoundClient): a
// redirect that changes the method is not followed, and a tools/call is
// never turned into something else at another address.
func TestMCPOverHTTPFollowsRedirectsAsEveryConnectorDoes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var atTarget []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		atTarget = append(atTarget, r.Method)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(target.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(first.Close)
	c, err := New(Config{Name: "moved", URL: first.URL + "/mcp", Reads: []string{"find"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Do(context.Background(), connectors.Call{Method: "find", Params: map[string]any{}}); err == nil {
		t.Fatal("a session answered only by a redirect succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(atTarget) > 0 {
		t.Fatalf("the redirect's target got %v: a POST was followed as another method", atTarget)
	}
}
