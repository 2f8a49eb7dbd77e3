package engine

import (
	"context"
	"testing"
)

// TestPrefetchSkipsClaimed: what a prepare phase starts with is what its
// peek would find — the oldest pending event not claimed by a run in hand.
func TestPrefetchSkipsClaimed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.deploy("held", `
export default Keep.workflow({
  name: "held",
  topics: { item: {}, other: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ["a", "b", "c"]) {
      const inputId = ctx.registerInput({ source: "http", type: "resource", id, title: id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
    }
  } } },
  consumers: { keep: Keep.consumer({
    subscribe: ["item", "other"],
    async prepare(ctx) { return { reservations: [], data: {} }; },
    async mutate(ctx, p) {},
    async next(ctx, p, r) {},
  }) },
});`)
	b.drain()
	ctx := context.Background()
	w, err := b.db.Read().WorkflowByName(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := b.db.Read().Peek(ctx, w.ID, "item", 3)
	if err != nil || len(evs) != 3 {
		t.Fatalf("pending: %d events, %v; want 3", len(evs), err)
	}
	claims := &hand{claims: map[int64]int64{evs[0].ID: 99}}
	for _, tc := range []struct {
		claims *hand
		want   string
	}{{nil, "a"}, {claims, "b"}} {
		h := &host{e: b.e, wf: w, subscribe: []string{"item", "other"}, claims: tc.claims}
		pre, err := h.Prefetch(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := pre["item"]; len(got) != 1 || got[0].MessageID != tc.want {
			t.Errorf("claims %v: prefetched %+v, want %s", tc.claims != nil, got, tc.want)
		}
		if got, ok := pre["other"]; !ok || len(got) != 0 {
			t.Errorf("a topic with nothing pending: %+v (present %v), want present and empty", got, ok)
		}
	}
}
