package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/config"
)

// An MCP tool whose name holds a dot ("items.create", a name MCP allows
// and a script calls as ctx.mcp.svc["items.create"]) is granted and
// limited under the capability approvals name it by,
// mcp.svc.items.create. keep grant cut that name at its last dot and
// refused it (no connector "mcp.svc.items"), and a daily limit counted
// the calls of that connector: none, so the limit never held.
func TestAToolWithADotInItsNameIsGrantedAndLimited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var made atomic.Int32
	srv := sdk.NewServer(&sdk.Implementation{Name: "dotted", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}
	srv.AddTool(&sdk.Tool{Name: "items.create", InputSchema: schema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		made.Add(1)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"ok":true}`}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	h := mcpHost(t, map[string]config.MCP{"svc": {URL: ts.URL}})
	h.Deploy("dots", []byte(`
export default Keep.workflow({
  name: "dots",
  topics: { item: {} },
  producers: { p: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ["a", "b"]) {
      const inputId = ctx.registerInput({ source: "mcp", type: "item", id, title: "Item " + id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
    }
  } } },
  consumers: { c: Keep.consumer({
    subscribe: ["item"],
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.payload.id } };
    },
    async mutate(ctx, p) { await ctx.mcp.svc["items.create"]({ id: p.data.id }); },
    async next(ctx, p, r) {},
  }) },
});`))
	if err := h.E.Grant(ctx, "dots", api.GrantView{Capability: "mcp.svc.items.create", Mode: engine.GrantAllow, DailyLimit: 1}); err != nil {
		t.Fatalf("grant mcp.svc.items.create: %v", err)
	}
	h.Drain()
	if n := made.Load(); n != 1 {
		t.Fatalf("the tool was called %d times, want once: the limit is 1 a day", n)
	}
	att := h.Attention()
	if len(att) != 1 || !strings.Contains(att[0].Reason, "past its limit of 1 a day") {
		t.Fatalf("attention = %+v, want the second call waiting past the limit", att)
	}
}
