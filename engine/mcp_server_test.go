package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerForTest serves s's tools: create (cut while s.cut, after
// recording when s.record) and find (a read: the item, or nothing).
func mcpServerForTest(s *lossyServer) http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "lossy", Version: "1"}, nil)
	s.removeTool = func(name string) { srv.RemoveTools(name) }
	schema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}}
	id := func(req *sdk.CallToolRequest) string {
		var a struct{ ID string }
		_ = jsonUnmarshal(req.Params.Arguments, &a)
		return a.ID
	}
	srv.AddTool(&sdk.Tool{Name: "create", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.mu.Lock()
		s.keys = append(s.keys, fmt.Sprint(req.Params.Meta["keep/idempotency-key"]))
		cut := s.cut
		s.cut = false
		if !cut || s.record {
			s.items[id(req)]++
		}
		s.mu.Unlock()
		if cut {
			s.entered <- struct{}{}
			select {
			case <-ctx.Done():
			case <-s.release:
			}
			return nil, fmt.Errorf("cut")
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"created":"` + id(req) + `"}`}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "find", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.mu.Lock()
		n := s.items[id(req)]
		s.finds++
		s.mu.Unlock()
		if n == 0 {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `[]`}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `[{"id":"` + id(req) + `"}]`}}}, nil
	})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

func jsonUnmarshal(raw any, v any) error {
	b, ok := raw.([]byte)
	if !ok {
		if r, ok2 := raw.(interface{ MarshalJSON() ([]byte, error) }); ok2 {
			var err error
			if b, err = r.MarshalJSON(); err != nil {
				return err
			}
		}
	}
	return json.Unmarshal(b, v)
}
