package authoring_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/authoring"
	"keep/engine/enginetest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// issue 42: keep mcp serve says which database it serves and whether an
// engine runs it; offers the reference and keep.d.ts as resources, and
// prompts built from keep's own reference and state.
func TestMCPServeResourcesPromptsAndWhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := enginetest.New(t, enginetest.Opts{})
	h.Deploy("notes", []byte(mcpServeNotes))
	h.Drain()
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	o := authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy), DB: h.DBPath}
	cs := mcpSession(t, o)

	t.Run("without an engine, status and workflows say so, and which database", func(t *testing.T) {
		text, isErr := mcpCall(t, cs, "status", map[string]any{})
		if isErr || !strings.Contains(text, `"db": "`+h.DBPath+`"`) || !strings.Contains(text, `"engine_running": false`) ||
			!strings.Contains(text, "no keep engine is running on it") {
			t.Fatalf("status = %s", text)
		}
		text, _ = mcpCall(t, cs, "workflows", nil)
		if !strings.Contains(text, `"name": "notes"`) || !strings.Contains(text, "serving "+h.DBPath+"; no keep engine is running on it") {
			t.Fatalf("workflows = %s", text)
		}
		if where := authoring.MCPServeWhere(o); !strings.HasPrefix(where, "keep mcp serve: serving "+h.DBPath+"; no keep engine") {
			t.Fatalf("stderr line = %q", where)
		}
	})

	t.Run("with an engine, nothing more is said", func(t *testing.T) {
		o2 := o
		o2.EngineRuns = true
		cs2 := mcpSession(t, o2)
		text, _ := mcpCall(t, cs2, "workflows", nil)
		if strings.Contains(text, "no keep engine") {
			t.Fatalf("workflows = %s", text)
		}
		if where := authoring.MCPServeWhere(o2); !strings.Contains(where, "through the keep engine running it") {
			t.Fatalf("stderr line = %q", where)
		}
	})

	t.Run("the reference and keep.d.ts are resources", func(t *testing.T) {
		list, err := cs.ListResources(ctx, nil)
		if err != nil || len(list.Resources) != 2 {
			t.Fatalf("resources = %+v, %v", list, err)
		}
		ref, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "keep://reference"})
		if err != nil || !strings.Contains(ref.Contents[0].Text, "ctx.files.append(") {
			t.Fatalf("reference: %v", err)
		}
		dts, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "keep://keep.d.ts"})
		if err != nil || !strings.Contains(dts.Contents[0].Text, "declare") {
			t.Fatalf("keep.d.ts: %v", err)
		}
	})

	t.Run("the prompts start from keep's reference and its state", func(t *testing.T) {
		p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "write-workflow", Arguments: map[string]string{"task": "files each new note"}})
		if err != nil {
			t.Fatal(err)
		}
		text := p.Messages[0].Content.(*sdk.TextContent).Text
		if !strings.Contains(text, "Write a keep workflow that files each new note.") || !strings.Contains(text, "ctx.files.append(") {
			t.Fatalf("write-workflow = %.300s", text)
		}
		p, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "explain-wait", Arguments: map[string]string{"workflow": "notes"}})
		if err != nil {
			t.Fatal(err)
		}
		text = p.Messages[0].Content.(*sdk.TextContent).Text
		if !strings.Contains(text, `why the keep workflow "notes" waits`) || !strings.Contains(text, "Waiting for the person (approval):\n<untrusted-data name=\"title\">\n\"File a note\"") {
			t.Fatalf("explain-wait = %s", text)
		}
	})
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// issue 42: keep mcp serve --http: the same tools over streamable HTTP,
// only to a client bearing the token, on loopback unless told otherwise.
func TestMCPServeOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := enginetest.New(t, enginetest.Opts{})
	h.Deploy("notes", []byte(mcpServeNotes))
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(authoring.MCPHTTPHandler(authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: engine.PolicyFrom(h.Cfg.Policy), DB: h.DBPath}, "t0ken"))
	t.Cleanup(ts.Close)

	connect := func(token string) (*sdk.ClientSession, error) {
		tr := &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}
		return sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	}
	if _, err := connect("wrong"); err == nil {
		t.Fatal("a client with the wrong token connected")
	}
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %v, %v", resp, err)
	}
	resp.Body.Close()
	cs, err := connect("t0ken")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := slices.Clone(authoring.MCPServeTools)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools over HTTP = %v, want the stdio ones %v (none approves)", names, want)
	}

	for addr, ok := range map[string]bool{"127.0.0.1:8765": true, "[::1]:8765": true, "localhost:8765": true, "0.0.0.0:8765": false, "192.168.1.5:80": false} {
		if err := authoring.CheckServeAddr(addr, false); (err == nil) != ok {
			t.Errorf("CheckServeAddr(%s) = %v", addr, err)
		}
	}
	if err := authoring.CheckServeAddr("0.0.0.0:8765", true); err != nil {
		t.Errorf("--public: %v", err)
	}
}
