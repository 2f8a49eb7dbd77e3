package engine_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/mcp/mcptest"
	"keep/engine"
	"keep/engine/config"
	"keep/engine/enginetest"
)

// mcpHost is an engine whose config has [mcp.NAME] servers; the registry
// (and so every server) is closed when the test ends.
func mcpHost(t *testing.T, servers map[string]config.MCP, edits ...func(*config.Config)) *enginetest.Host {
	cache := t.TempDir()
	edits = append(edits, func(c *config.Config) { c.MCP = servers })
	return enginetest.New(t, enginetest.Opts{Config: edits,
		Registry: func(cfg config.Config, clock *enginetest.Clock) (*connectors.Registry, error) {
			reg, err := engine.Connectors(cfg, engine.ConnectorOpts{Now: clock.Now, MCPCacheDir: cache})
			if err == nil {
				t.Cleanup(func() { reg.Close() })
			}
			return reg, err
		}})
}

const peopleWorkflow = `
export default Keep.workflow({
  name: "people",
  topics: { person: {} },
  producers: { list: { publishes: ["person"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const name of ["Ann", "Bob"]) {
      const inputId = ctx.registerInput({ source: "mcp", type: "item", id: name, title: "Person " + name });
      await ctx.publish("person", { messageId: name, inputId, payload: { name } });
    }
  } } },
  consumers: { remember: Keep.consumer({
    subscribe: ["person"],
    async prepare(ctx) {
      const [e] = await ctx.peek("person", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      const found = await ctx.mcp.memory.search_nodes({ query: e.payload.name });
      return { reservations: [{ topic: "person", ids: [e.messageId] }],
        data: { name: e.payload.name, known: found.json.entities.length }, ui: { title: "Remember " + e.payload.name } };
    },
    async mutate(ctx, p) {
      await ctx.mcp.memory.create_entities({
        entities: [{ name: p.data.name, entityType: "person", observations: ["seen " + p.data.known + " before"] }],
        reconcile: { tool: "search_nodes", args: { query: p.data.name }, match: { entities: [{ name: p.data.name }] } } });
    },
    async next(ctx, p, r) {},
  }) },
});`

func TestMCPToolsThroughTheLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := mcpHost(t, map[string]config.MCP{"memory": {Command: mcptest.Bin(t, "mcp-server-memory"),
		Env:   map[string]config.MCPEnv{"MEMORY_FILE_PATH": {Value: t.TempDir() + "/memory.jsonl"}},
		Reads: []string{"read_graph", "search_nodes", "open_nodes"}}})

	res := h.Deploy("people", []byte(peopleWorkflow))
	if len(res.Capabilities) != 1 || res.Capabilities[0].Capability != "mcp.memory.create_entities" {
		t.Fatalf("capabilities = %+v, want the one tool the script calls as a mutation", res.Capabilities)
	}
	h.Drain()
	att := h.Attention()
	if len(att) != 1 || att[0].Kind != "approval" || att[0].Connector != "mcp.memory" || att[0].Method != "create_entities" ||
		!strings.Contains(string(att[0].Params), `"entityType":"person"`) || !strings.Contains(att[0].Reason, "mcp.memory.create_entities") {
		t.Fatalf("attention = %+v, want an approval naming mcp.memory.create_entities with its arguments", att)
	}
	if err := h.E.Approve(ctx, att[0].ID, true); err != nil {
		t.Fatal(err)
	}
	h.DrainUntilQuiet(time.Minute)
	h.Healthy("people")
	ms := h.Mutations("people")
	if len(ms) != 2 {
		t.Fatalf("mutations = %+v", ms)
	}
	for _, m := range ms {
		if m.Status != "applied" || m.Connector != "mcp.memory" || m.Method != "create_entities" || !strings.Contains(string(m.Result), "entities") {
			t.Fatalf("mutation = %+v", m)
		}
	}
	// the server holds each person once: nothing was done twice
	reg, _ := engine.Connectors(h.Cfg, engine.ConnectorOpts{MCPCacheDir: t.TempDir()})
	defer reg.Close()
	c, _ := reg.Get("mcp.memory")
	g, err := c.Do(ctx, connectors.Call{Method: "read_graph"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.(map[string]any)["json"].(map[string]any)["entities"].([]any)); n != 2 {
		t.Fatalf("graph = %v, want Ann and Bob once each", g)
	}
}

// lossyServer is an MCP server over streamable HTTP whose "create" tool
// records the item (or not), then never answers: the test cuts the
// connection, as a server dying mid-call does.
type lossyServer struct {
	mu    sync.Mutex
	items map[string]int
	finds int      // calls of the read
	keys  []string // the idempotency key of each create, from _meta
	// removeTool takes a tool off the server, as a new release may
	removeTool func(name string)
	record     bool // whether a cut call took effect before the cut
	cut        bool // the next create is cut
	entered    chan struct{}
	release    chan struct{}
	ts         *httptest.Server
}

func newLossyServer(t *testing.T, record bool) *lossyServer {
	s := &lossyServer{items: map[string]int{}, record: record, cut: true, entered: make(chan struct{}, 1), release: make(chan struct{})}
	srv := mcpServerForTest(s)
	s.ts = httptest.NewServer(srv)
	t.Cleanup(s.ts.Close)
	t.Cleanup(func() { close(s.release) })
	return s
}

func (s *lossyServer) count(id string) int { s.mu.Lock(); defer s.mu.Unlock(); return s.items[id] }

const lossyWorkflow = `
export default Keep.workflow({
  name: "lossy",
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
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.messageId } };
    },
    async mutate(ctx, p) {
      await ctx.mcp.svc.create({ id: p.data.id, reconcile: { tool: "find", args: { id: p.data.id }, match: { id: p.data.id } } });
    },
    async next(ctx, p, r) {},
  }) },
});`

func TestMCPServerLostMidCallIsReconciledNeverRepeated(t *testing.T) {
	t.Parallel()
	for _, record := range []bool{true, false} {
		name := map[bool]string{true: "the call had taken effect: the read finds it, applied",
			false: "the call had not taken effect: the read finds nothing, and the same call is sent again under the same key"}[record]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newLossyServer(t, record)
			h := mcpHost(t, map[string]config.MCP{"svc": {URL: s.ts.URL, Reads: []string{"find"}}}, enginetest.AllowMutations)
			go func() {
				<-s.entered
				s.ts.CloseClientConnections()
			}()
			h.Deploy("lossy", []byte(lossyWorkflow))
			h.Drain()
			ms := h.Mutations("lossy")
			if len(ms) != 1 || ms[0].Status != "needs_reconcile" {
				t.Fatalf("after the cut: %+v, want one mutation needing reconciliation", ms)
			}
			h.DrainUntilQuiet(time.Hour)
			if n := s.count("a"); n != 1 {
				t.Fatalf("the item exists %d times, want once", n)
			}
			ms = h.Mutations("lossy")
			if len(ms) != 1 || ms[0].Status != "applied" {
				t.Fatalf("mutations = %+v, want the one call applied (issue 42: retried, not failed and made anew)", ms)
			}
			s.mu.Lock()
			keys := slices.Clone(s.keys)
			s.mu.Unlock()
			want := map[bool]int{true: 1, false: 2}[record]
			if len(keys) != want || keys[0] == "" || keys[0] == "<nil>" || len(slices.Compact(slices.Clone(keys))) != 1 {
				t.Fatalf("create was called with keys %q, want %d calls under one idempotency key", keys, want)
			}
			for _, r := range h.Runs("lossy") {
				if strings.HasPrefix(string(r.Status), "failed") {
					t.Fatalf("run %+v failed: the history shows a failure, not one call retried", r)
				}
			}
		})
	}
}

// issue 39: a read that answers, but not with what reconcile.match looks
// for, is no "it happened": the person is asked at once, with the read's
// answer in the question.
func TestMCPReconcileWithoutTheMatchAsksThePerson(t *testing.T) {
	t.Parallel()
	s := newLossyServer(t, true)
	h := mcpHost(t, map[string]config.MCP{"svc": {URL: s.ts.URL, Reads: []string{"find"}}}, enginetest.AllowMutations)
	go func() {
		<-s.entered
		s.ts.CloseClientConnections()
	}()
	h.Deploy("lossy", []byte(strings.Replace(lossyWorkflow, `match: { id: p.data.id }`, `match: { id: "someone else" }`, 1)))
	h.DrainUntilQuiet(time.Hour)
	ms := h.Mutations("lossy")
	if len(ms) != 1 || ms[0].Status == "applied" {
		t.Fatalf("mutations = %+v, want the one call not settled as applied", ms)
	}
	att := h.Attention()
	if len(att) != 1 || att[0].Kind != "reconciliation" || !strings.Contains(att[0].Reason, "does not hold reconcile.match") {
		t.Fatalf("attention = %+v, want the person asked, told what the read answered", att)
	}
	if n := s.count("a"); n != 1 {
		t.Fatalf("the item exists %d times, want once", n)
	}
	s.mu.Lock()
	finds := s.finds
	s.mu.Unlock()
	if finds != 1 {
		t.Fatalf("the read was called %d times: an answer without the match is asked at once, not checked again", finds)
	}
}
