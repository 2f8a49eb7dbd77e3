package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/engine/api"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// slowSvc is an MCP server over streamable HTTP whose create tool takes
// effect and then never answers, so keep can be killed during the call.
type slowSvc struct {
	mu      sync.Mutex
	creates int
	items   map[string]bool
	entered chan struct{}
	release chan struct{}
}

func newSlowSvc(t *testing.T) (*slowSvc, string) {
	s := &slowSvc{items: map[string]bool{}, entered: make(chan struct{}, 4), release: make(chan struct{})}
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}
	id := func(req *sdk.CallToolRequest) string {
		var a struct{ ID string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a.ID
	}
	srv.AddTool(&sdk.Tool{Name: "create", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.mu.Lock()
		s.creates++
		s.items[id(req)] = true
		s.mu.Unlock()
		s.entered <- struct{}{}
		select {
		case <-ctx.Done():
		case <-s.release:
		}
		return nil, fmt.Errorf("never answered")
	})
	srv.AddTool(&sdk.Tool{Name: "find", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.mu.Lock()
		found := s.items[id(req)]
		s.mu.Unlock()
		text := "[]"
		if found {
			text = `[{"id":"` + id(req) + `"}]`
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(s.release) })
	return s, ts.URL
}

func slowWorkflow(reconcile bool) string {
	rec := ""
	if reconcile {
		rec = `, reconcile: { tool: "find", args: { id: p.data.id }, match: { id: p.data.id } }`
	}
	return `
export default Keep.workflow({
  name: "slow",
  topics: { item: {} },
  producers: { p: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "mcp", type: "item", id: "a", title: "Item a" });
    await ctx.publish("item", { messageId: "a", inputId, payload: {} });
  } } },
  consumers: { c: Keep.consumer({
    subscribe: ["item"],
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.messageId }, ui: { title: "Create a" } };
    },
    async mutate(ctx, p) { await ctx.mcp.svc.create({ id: p.data.id` + rec + ` }); },
    async next() {},
  }) },
});`
}

// TestMCPKeepKilledDuringAToolCall SIGKILLs the daemon while a tool call is
// in flight: the next keep settles it through the script's read, or asks;
// it never calls the tool again.
func TestMCPKeepKilledDuringAToolCall(t *testing.T) {
	t.Parallel()
	for _, reconcile := range []bool{true, false} {
		t.Run(map[bool]string{true: "reconciled through the read", false: "asked, without a read"}[reconcile], func(t *testing.T) {
			t.Parallel()
			svc, url := newSlowSvc(t)
			e := newEnv(t, "allow")
			e.writeConfig(fmt.Sprintf("[policy]\ndefault_mutation_mode = \"allow\"\nbackoff_base = \"1s\"\n\n[connectors.files]\nroots = [%q]\n\n[mcp.svc]\nurl = %q\nreads = [\"find\"]\n", e.root, url))
			e.ok("deploy", e.file(e.dir, "slow.js", slowWorkflow(reconcile)))
			d := startDaemon(t, e)
			select {
			case <-svc.entered:
			case <-time.After(2 * time.Minute):
				d.kill(t)
				t.Fatalf("the tool was never called; daemon stderr: %s", d.errb.String())
			}
			if running, _ := d.kill(t); !running {
				t.Fatalf("the daemon had exited before the kill: %s", d.errb.String())
			}
			// the next keep finds the call in flight and settles it
			e.ok("drain")
			ms := jsonOf[[]api.MutationView](e, "mutations", "slow")
			svc.mu.Lock()
			creates := svc.creates
			svc.mu.Unlock()
			if creates != 1 {
				t.Fatalf("create was called %d times, want once", creates)
			}
			if reconcile {
				if len(ms) != 1 || ms[0].Status != "applied" {
					t.Fatalf("mutations = %+v, want the one call applied", ms)
				}
				return
			}
			att := jsonOf[[]api.AttentionItem](e, "attention")
			if len(ms) != 1 || len(att) != 1 || att[0].Kind != "reconciliation" || !strings.Contains(att[0].Reason, "no way to check") {
				t.Fatalf("mutations = %+v, attention = %+v, want the person asked", ms, att)
			}
		})
	}
}
