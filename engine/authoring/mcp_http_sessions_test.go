package authoring_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/engine"
	"keep/engine/authoring"
	"keep/engine/enginetest"
)

// Each initialize over HTTP opened a session the server kept until the
// client said DELETE, which many clients never do: a client holding the
// token (or one that reconnects at every start) grew keep mcp serve
// without bound. Sessions are bounded; one that ends makes room.
func TestMCPServeOverHTTPBoundsItsSessions(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(authoring.MCPHTTPHandler(authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy), DB: h.DBPath}, "t0ken"))
	t.Cleanup(ts.Close)

	initialize := func() (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Authorization", "Bearer t0ken")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	var ids []string
	for i := 0; i < authoring.MCPHTTPSessions; i++ {
		resp, body := initialize()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("session %d: %d %s", i+1, resp.StatusCode, body)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	resp, body := initialize()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, fmt.Sprintf("%d sessions are open", authoring.MCPHTTPSessions)) {
		t.Fatalf("one session over the bound: %d %s", resp.StatusCode, body)
	}

	req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	req.Header.Set("Authorization", "Bearer t0ken")
	req.Header.Set("Mcp-Session-Id", ids[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("DELETE a session: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, body := initialize(); resp.StatusCode != http.StatusOK {
		t.Fatalf("a session after one ended: %d %s", resp.StatusCode, body)
	}
}

// The token account's help asks for a long random token, yet keep mcp
// serve --http served behind any, one character included: with no bound
// on attempts, anything that reaches the port (another user of the
// machine; the network, with --public) could guess it.
func TestMCPServeOverHTTPRefusesAShortToken(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	o := authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy), DB: h.DBPath}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a server that starts ends at once
	err = authoring.ServeMCPHTTP(ctx, o, "127.0.0.1:0", "a")
	if err == nil || !strings.Contains(err.Error(), "the token is 1 characters long") || !strings.Contains(err.Error(), "keep auth login") {
		t.Fatalf("a one-character token: %v", err)
	}
	if err := authoring.ServeMCPHTTP(ctx, o, "127.0.0.1:0", strings.Repeat("k7", 12)); err != nil {
		t.Fatalf("a 24-character token: %v", err)
	}
}

// The bound counted the open sessions before the SDK made the new one, so
// initializes arriving at once could each see room and all be kept: a
// client holding the token grew the server past MCPHTTPSessions by asking
// in parallel. Whether one burst slips past depends on how its requests
// interleave, so the test sends several, each to a fresh server.
func TestMCPServeOverHTTPBoundsSessionsOpenedAtOnce(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{})
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 10 && !t.Failed(); round++ {
		ts := httptest.NewServer(authoring.MCPHTTPHandler(authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy), DB: h.DBPath}, "t0ken"))
		if ok := initializeAtOnce(t, ts.URL, 16*authoring.MCPHTTPSessions); ok > authoring.MCPHTTPSessions || ok == 0 {
			t.Errorf("round %d: %d sessions were opened at once, the bound is %d", round, ok, authoring.MCPHTTPSessions)
		}
		ts.Close()
	}
}

// initializeAtOnce sends n initializes together and says how many opened
// a session.
func initializeAtOnce(t *testing.T, url string, n int) int {
	start := make(chan struct{})
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
			req.Header.Set("Authorization", "Bearer t0ken")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("an initialize answered %d", c)
		}
	}
	return ok
}
