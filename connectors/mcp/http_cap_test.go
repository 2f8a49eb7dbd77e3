package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// Over streamable HTTP too, an answer nested deeper than the SDK's reader
// takes fails its call alone, at once: uncertain for a mutation, and the
// session goes on. Before, the SDK failed the whole connection on it:
// every call in flight with it, and the next call found the server down,
// waiting out a back-off.
func TestADeeplyNestedAnswerOverHTTPFailsItsCallOnly(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{true, false} {
		t.Run(map[bool]string{true: "sse", false: "json"}[sse], func(t *testing.T) {
			t.Parallel()
			srv := sdk.NewServer(&sdk.Implementation{Name: "deep", Version: "1"}, nil)
			obj := map[string]any{"type": "object"}
			srv.AddTool(&sdk.Tool{Name: "deep", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil // never reached: the answer is written by hand below
			})
			srv.AddTool(&sdk.Tool{Name: "small", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
			})
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: !sse})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params struct {
						Name string `json:"name"`
					} `json:"params"`
				}
				if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == "deep" {
					// valid JSON, nested past the SDK's reader (1000 levels)
					deep := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":{"a":%s%s}}}`,
						m.ID, strings.Repeat("[", 1200), strings.Repeat("]", 1200))
					if sse {
						w.Header().Set("Content-Type", "text/event-stream")
						fmt.Fprintf(w, "event: message\ndata: %s\n\n", deep)
					} else {
						w.Header().Set("Content-Type", "application/json")
						io.WriteString(w, deep)
					}
					return
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			c, err := New(Config{Name: "deep", URL: ts.URL, Reads: []string{"small"}, Timeout: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			ctx := context.Background()

			if _, err := c.Do(ctx, connectors.Call{Method: "small", Params: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			_, deepErr := c.Do(ctx, connectors.Call{Method: "deep", Params: map[string]any{}, IdempotencyKey: "k"})
			if connectors.ClassOf(deepErr) != connectors.Uncertain {
				t.Fatalf("a mutation answered with what keep cannot read: %v (%s), want uncertain", deepErr, connectors.ClassOf(deepErr))
			}
			res, err := c.Do(ctx, connectors.Call{Method: "small", Params: map[string]any{}})
			if err != nil || res.(map[string]any)["text"] != "ok" {
				t.Fatalf("the call after it (the deep answer failed with %v): %v, %v", deepErr, res, err)
			}
			if !strings.Contains(deepErr.Error(), "nests deeper") {
				t.Fatalf("the deep answer's failure does not say why: %v", deepErr)
			}
		})
	}
}
