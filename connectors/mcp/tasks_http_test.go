package mcp

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskOnlyWriter gives the tool "research" execution.taskSupport
// "required" in the tools/list answer as it is written, the way
// server-everything declares simulate-research-query (the SDK's server
// cannot say it).
type taskOnlyWriter struct{ http.ResponseWriter }

func (w taskOnlyWriter) Write(b []byte) (int, error) {
	out := bytes.ReplaceAll(b, []byte(`"name":"research"`), []byte(`"execution":{"taskSupport":"required"},"name":"research"`))
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w taskOnlyWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// issue 42: a tool that runs only as a task, on a server over streamable
// HTTP (answering tools/list as an SSE event or as one JSON body), is
// known as one keep cannot call: its method says so and a call is refused
// before anything is sent.
func TestTaskOnlyToolOverHTTPCannotBeCalled(t *testing.T) {
	t.Parallel()
	for _, jsonBody := range []bool{false, true} {
		name := map[bool]string{false: "sse", true: "json"}[jsonBody]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := sdk.NewServer(&sdk.Implementation{Name: "tasks", Version: "1"}, nil)
			obj := map[string]any{"type": "object"}
			var called atomic.Int32
			for _, n := range []string{"research", "echo"} {
				srv.AddTool(&sdk.Tool{Name: n, InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					called.Add(1)
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
				})
			}
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: jsonBody})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(taskOnlyWriter{w}, r)
			}))
			t.Cleanup(ts.Close)
			c, err := New(Config{Name: "tasks", URL: ts.URL, TrustHints: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })

			tools, err := c.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			why := map[string]string{}
			for _, tool := range tools {
				why[tool.Name] = c.Method(tool).Uncallable
			}
			if why["research"] != taskOnlyWhy || why["echo"] != "" {
				t.Fatalf("uncallable = %q", why)
			}
			_, err = c.Do(ctx, connectors.Call{Method: "research", Params: map[string]any{}})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "mcp.tasks.research cannot be called: the tool runs only as an MCP task") {
				t.Fatalf("call research: %v", err)
			}
			if _, err := c.Do(ctx, connectors.Call{Method: "echo", Params: map[string]any{}}); err != nil || called.Load() != 1 {
				t.Fatalf("call echo: %v (calls made: %d, want only echo's)", err, called.Load())
			}
		})
	}
}
