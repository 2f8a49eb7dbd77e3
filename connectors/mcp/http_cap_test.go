package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// issue 42: over streamable HTTP too (an SSE event or one JSON body), one
// answer over keep's size limit fails that call only, as a logic failure
// naming the limit; the session and the calls after it go on.
func TestOversizedAnswerOverHTTPFailsItsCallOnly(t *testing.T) {
	t.Parallel()
	for _, jsonBody := range []bool{false, true} {
		name := map[bool]string{false: "sse", true: "json"}[jsonBody]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
			obj := map[string]any{"type": "object"}
			srv.AddTool(&sdk.Tool{Name: "big", InputSchema: obj}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 1<<20)}}}, nil
			})
			srv.AddTool(&sdk.Tool{Name: "small", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
			})
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: jsonBody})
			ts := httptest.NewServer(h)
			t.Cleanup(ts.Close)
			c, err := New(Config{Name: "big", URL: ts.URL, Reads: []string{"big", "small"}, MaxMessage: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })

			_, err = c.Do(ctx, connectors.Call{Method: "big", Params: map[string]any{}})
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "over keep's limit") {
				t.Fatalf("the oversized answer: %v (%s), want a logic failure naming the limit", err, connectors.ClassOf(err))
			}
			res, err := c.Do(ctx, connectors.Call{Method: "small", Params: map[string]any{}})
			if err != nil || res.(map[string]any)["text"] != "ok" {
				t.Fatalf("the call after it: %v, %v", res, err)
			}
		})
	}
}
