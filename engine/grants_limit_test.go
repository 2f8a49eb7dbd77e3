package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/config"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// gateConnector is a mutation connector whose calls meet at a gate: the
// scope of a call, worked out before the call's grants are decided, waits
// until n calls have come to it (or a few seconds passed), so that n runs
// of a concurrent consumer decide on their grants at the same moment.
type gateConnector struct {
	n       int
	arrived atomic.Int32
	open    chan struct{}
	once    sync.Once
	calls   atomic.Int32
}

func (g *gateConnector) Name() string { return "gate" }

func (g *gateConnector) Methods() []connectors.Method {
	return []connectors.Method{{
		Name: "post", Kind: connectors.Mutate, Doc: "Posts an item past the gate.",
		Args: []connectors.Arg{{Name: "id", Type: "string", Required: true, Doc: "the item"}},
		Scope: func(map[string]any) string {
			if int(g.arrived.Add(1)) >= g.n {
				g.once.Do(func() { close(g.open) })
			}
			select {
			case <-g.open:
			case <-time.After(5 * time.Second):
			}
			return ""
		},
	}}
}

func (g *gateConnector) Do(ctx context.Context, call connectors.Call) (any, error) {
	g.calls.Add(1)
	return map[string]any{"ok": true}, nil
}

const gateWorkflow = `
export default Keep.workflow({
  name: "gated",
  topics: { item: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (let i = 0; i < 8; i++) {
      const id = "item-" + i;
      const inputId = ctx.registerInput({ source: "http", type: "resource", id, title: "Item " + id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
    }
  } } },
  consumers: { push: Keep.consumer({
    subscribe: ["item"],
    concurrency: 4,
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.payload.id } };
    },
    async mutate(ctx, p) { await ctx.gate.post({ id: p.data.id }); },
    async next() {},
  }) },
});`

// A daily limit holds for runs that decide at the same moment: four runs of
// a concurrent consumer reach their calls together under a limit of two a
// day, and two calls are made; the next asks the person, past its limit.
// Decided on a read before the in_flight row's transaction, each run found
// no call made yet, and all four went out.
func TestDailyLimitUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := storage.Open(ctx, storage.Opts{Path: dir + "/keep.db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &bundle{t: t, clock: kit.NewClock(time.Time{}), db: db, cfg: config.Default()}
	reg, err := Connectors(b.cfg, ConnectorOpts{Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	gate := &gateConnector{n: 4, open: make(chan struct{})}
	reg.Register(gate)
	if b.e, err = New(ctx, Opts{DB: db, Connectors: reg, Policy: PolicyFrom(b.cfg.Policy), Now: b.clock.Now}); err != nil {
		t.Fatal(err)
	}
	b.deploy("gated", gateWorkflow)
	if err := b.e.Grant(ctx, "gated", GrantView{Capability: "gate.post", Mode: "allow", DailyLimit: 2}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := gate.calls.Load(); got != 2 {
		t.Errorf("%d calls made under a daily limit of 2", got)
	}
	att, err := b.e.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asked := false
	for _, a := range att {
		asked = asked || (a.Kind == AttentionApproval && a.Reason != "" && strings.Contains(a.Reason, "past its limit of 2 a day"))
	}
	if !asked {
		t.Errorf("attention = %+v, want an approval past the limit", att)
	}
}
