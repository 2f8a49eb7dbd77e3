package authoring_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
