package authoring_test

import (
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
