package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/conntest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenAccount is a token account as the host hands it to a connector.
type tokenAccount struct{ invalidated int }

func (a *tokenAccount) Name() string                           { return "svc" }
func (a *tokenAccount) Kind() string                           { return "token" }
func (a *tokenAccount) Username() string                       { return "" }
func (a *tokenAccount) Secret(context.Context) (string, error) { return "s3cret", nil }
func (a *tokenAccount) Invalidate()                            { a.invalidated++ }

// httpPeer is a real MCP server over streamable HTTP, built with the SDK.
type httpPeer struct {
	mu      sync.Mutex
	auth    []string
	keys    []any
	entered chan struct{}
	release chan struct{}
	remotes map[string]bool // the client connections requests came on
	// refuse, when set, is asked of each request's body: true answers it
	// 401, as a server does to a token that has just expired
	refuse func(body []byte) bool
}

func newHTTPPeer(t *testing.T) (*httpPeer, *httptest.Server) {
	p := &httpPeer{entered: make(chan struct{}, 1), release: make(chan struct{}), remotes: map[string]bool{}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1"}, nil)
	obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	record := func(ctx context.Context, req *sdk.CallToolRequest) {
		p.mu.Lock()
		p.keys = append(p.keys, req.Params.Meta[MetaKey])
		p.mu.Unlock()
	}
	srv.AddTool(&sdk.Tool{Name: "post", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		record(ctx, req)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"id":"m1"}`}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "put", InputSchema: obj, Annotations: &sdk.ToolAnnotations{IdempotentHint: true}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		record(ctx, req)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "stored"}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "refuse", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "quota exceeded"}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "hang", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p.entered <- struct{}{}
		select {
		case <-ctx.Done():
		case <-p.release:
		}
		return nil, ctx.Err()
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.auth = append(p.auth, r.Header.Get("Authorization"))
		p.remotes[r.RemoteAddr] = true
		refuse := p.refuse
		p.mu.Unlock()
		if refuse != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if refuse(body) {
				http.Error(w, "token expired", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(p.release) }) // runs first: the hanging handler returns
	return p, ts
}

func TestStreamableHTTPServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	peer, ts := newHTTPPeer(t)
	c, err := New(Config{Name: "svc", URL: ts.URL, Account: &tokenAccount{}, TrustHints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	res, err := c.Do(ctx, connectors.Call{Method: "post", Params: map[string]any{"text": "hi"}, IdempotencyKey: "key-1"})
	if err != nil || res.(map[string]any)["json"].(map[string]any)["id"] != "m1" {
		t.Fatalf("post = %v, %v", res, err)
	}
	peer.mu.Lock()
	keys, auth := append([]any(nil), peer.keys...), append([]string(nil), peer.auth...)
	peer.mu.Unlock()
	if len(keys) != 1 || keys[0] != "key-1" {
		t.Fatalf("the idempotency key in _meta: %v", keys)
	}
	for _, a := range auth {
		if a != "Bearer s3cret" {
			t.Fatalf("Authorization = %q on some request, want the account's token on every one", a)
		}
	}

	t.Run("a tool error result is a logic failure", func(t *testing.T) {
		_, err := c.Do(ctx, connectors.Call{Method: "refuse", Params: map[string]any{}})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("a trusted idempotent tool is settled by calling it again with the same key", func(t *testing.T) {
		v, r, err := c.Reconcile(ctx, connectors.Call{Method: "put", Params: map[string]any{"text": "x"}, IdempotencyKey: "key-2"})
		if v != connectors.Applied || r == nil || err != nil {
			t.Fatalf("reconcile put = %v %v %v", v, r, err)
		}
		if _, _, err := c.Reconcile(ctx, connectors.Call{Method: "post", Params: map[string]any{"text": "x"}}); err != connectors.ErrCannotCheck {
			t.Fatalf("post is not idempotent: %v", err)
		}
	})

	t.Run("a connection lost during a mutation is uncertain", func(t *testing.T) {
		go func() {
			<-peer.entered
			ts.CloseClientConnections()
		}()
		_, err := c.Do(ctx, connectors.Call{Method: "hang", Params: map[string]any{}, IdempotencyKey: "key-3"})
		if connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("err = %v (%s), want uncertain", err, connectors.ClassOf(err))
		}
	})
}

// TestConcurrentCallsKeepTheirConnections: calls made at once to one MCP
// server over HTTP (a consumer's runs) reuse their connections round after
// round instead of dialling all but net/http's default two again.
func TestConcurrentCallsKeepTheirConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	peer, ts := newHTTPPeer(t)
	c, err := New(Config{Name: "svc", URL: ts.URL, TrustHints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const atOnce, rounds = 8, 5
	conntest.Rounds(t, atOnce, rounds, func(round, i int) error {
		_, err := c.Do(ctx, connectors.Call{Method: "put", Params: map[string]any{"text": "x"}, IdempotencyKey: fmt.Sprintf("k-%d-%d", round, i)})
		return err
	})
	peer.mu.Lock()
	n := len(peer.remotes)
	peer.mu.Unlock()
	// the session's own requests open one more; one returned a moment late
	// may cost a dial more a round
	if n > atOnce+rounds+1 {
		t.Errorf("requests came on %d connections for %d rounds of %d calls at once, want at most %d", n, rounds, atOnce, atOnce+rounds+1)
	}
}

// refusingAccount is a token account that records the refusals the
// accounts store would mark.
type refusingAccount struct {
	tokenAccount
	mu      sync.Mutex
	refused []string
}

func (a *refusingAccount) Refuse(secret, why string) *connectors.Error {
	a.mu.Lock()
	a.refused = append(a.refused, secret)
	a.mu.Unlock()
	return connectors.Errorf(connectors.Auth, "%s (keep auth login %s)", why, a.Name())
}

// issue 42: a 401 or 403 from an MCP server to the credential keep sent is
// an Auth failure naming `keep auth login NAME`, and the account is told
// (the store marks it as needing a sign-in); nothing was done.
func TestRefusedCredentialIsAnAuthFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			_, ok := newHTTPPeer(t)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ok.URL+`/.well-known/oauth-protected-resource"`)
				w.WriteHeader(status)
			}))
			t.Cleanup(ts.Close)
			acct := &refusingAccount{}
			// the server's URL carries a key of its own: the refusal names
			// the server without it
			c, err := New(Config{Name: "svc", URL: ts.URL + "/mcp?key=url-s3cret", Account: acct})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			_, err = c.Do(ctx, connectors.Call{Method: "post", Params: map[string]any{"text": "hi"}, IdempotencyKey: "k"})
			if connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), "keep auth login svc") {
				t.Fatalf("err = %v (%s), want an auth failure naming keep auth login svc", err, connectors.ClassOf(err))
			}
			if strings.Contains(err.Error(), "url-s3cret") || !strings.Contains(err.Error(), "key=REDACTED") {
				t.Errorf("err = %v, want the server named with key=REDACTED", err)
			}
			acct.mu.Lock()
			defer acct.mu.Unlock()
			if len(acct.refused) == 0 || acct.refused[0] != "s3cret" {
				t.Fatalf("the account was told of refusals %q, want the token it sent", acct.refused)
			}
		})
	}
}

// A refusal belongs to the request it answered. A 401 to a listing (a
// token that expired, then renewed by a sign-in) once stayed with the
// connector until the next call that failed, for whatever reason: a
// mutation whose connection was cut mid-call (uncertain: it may have
// happened) then read as refused, nothing done, and could be made again.
func TestARefusalIsOnlyItsOwnRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	peer, ts := newHTTPPeer(t)
	var mu sync.Mutex
	lists, refusing := 0, false
	peer.refuse = func(body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if !bytes.Contains(body, []byte(`"tools/list"`)) {
			return false
		}
		lists++
		if refusing {
			refusing = false // the sign-in that follows renews the token
			return true
		}
		return false
	}
	c, err := New(Config{Name: "svc", URL: ts.URL, Account: &tokenAccount{}, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.AwaitTools(ctx); err != nil {
		t.Fatal(err)
	}
	for settled := false; !settled; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		if settled = lists >= 2; settled { // the listing at the start, and AwaitTools'
			refusing = true
		}
		mu.Unlock()
	}
	if _, err := c.Tools(ctx); connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), "keep auth login svc") {
		t.Fatalf("the refused listing: %v (%s), want an auth failure: sign in, not try again", err, connectors.ClassOf(err))
	}
	if _, err := c.Tools(ctx); err != nil {
		t.Fatalf("the listing after the sign-in: %v", err)
	}
	go func() {
		<-peer.entered
		ts.CloseClientConnections()
	}()
	_, err = c.Do(ctx, connectors.Call{Method: "hang", Params: map[string]any{}, IdempotencyKey: "key-1"})
	if connectors.ClassOf(err) != connectors.Uncertain {
		t.Fatalf("a mutation cut mid-call after a refused listing: %v (%s), want uncertain", err, connectors.ClassOf(err))
	}
}
