package engine

import (
	"context"
	"testing"

	"keep/sandbox"
	"keep/storage"
)

// prefetchWorkflow has three events pending on "item" (a, b, c), three on
// "solo", none on "other"; its consumers reserve nothing, so they stay
// pending.
const prefetchWorkflow = `
export default Keep.workflow({
  name: "prefetched",
  topics: { item: {}, other: {}, solo: {} },
  producers: { feed: { publishes: ["item", "solo"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ["a", "b", "c"]) {
      const inputId = ctx.registerInput({ source: "http", type: "resource", id, title: id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
      await ctx.publish("solo", { messageId: "solo-" + id, inputId, payload: { id } });
    }
  } } },
  consumers: {
    many: Keep.consumer({
      subscribe: ["item", "other"],
      concurrency: 2,
      async prepare(ctx) { return { reservations: [], data: {} }; },
      async mutate(ctx, p) {},
      async next(ctx, p, r) {},
    }),
    one: Keep.consumer({
      subscribe: ["solo"],
      async prepare(ctx) { return { reservations: [], data: {} }; },
      async mutate(ctx, p) {},
      async next(ctx, p, r) {},
    }),
  },
});`

// pendingItems deploys prefetchWorkflow and returns it with the events
// pending on "item".
func pendingItems(t *testing.T) (*bundle, *storage.Workflow, []*storage.Event) {
	t.Helper()
	b := setup(t)
	b.deploy("prefetched", prefetchWorkflow)
	b.drain()
	ctx := context.Background()
	w, err := b.db.Read().WorkflowByName(ctx, "prefetched")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := b.db.Read().Peek(ctx, w.ID, "item", 3)
	if err != nil || len(evs) != 3 {
		t.Fatalf("pending: %d events, %v; want 3", len(evs), err)
	}
	return b, w, evs
}

// TestPrefetchSkipsClaimed: what a prepare phase starts with is what its
// peek would find — the oldest pending event not claimed by a run in hand.
func TestPrefetchSkipsClaimed(t *testing.T) {
	t.Parallel()
	b, w, evs := pendingItems(t)
	ctx := context.Background()
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

// TestStepPrefetches: the scheduler step reads what the picked consumer's
// prepare peeks will find in the same snapshot as the rest of its decision,
// so the prepare starts without a read of its own; a concurrent consumer's
// skips what runs in hand chose.
func TestStepPrefetches(t *testing.T) {
	t.Parallel()
	b, w, evs := pendingItems(t)
	ctx := context.Background()
	ws := b.e.state(w.ID)
	ws.hand.mu.Lock()
	ws.hand.claims = map[int64]int64{evs[0].ID: 99} // a run in hand chose "a"
	ws.hand.mu.Unlock()
	for _, tc := range []struct {
		consumer, topic, want string
		topics                int
	}{{"many", "item", "b", 2}, {"one", "solo", "solo-a", 1}} {
		ws.markDirty(tc.consumer)
		_, wk, _, err := b.e.snapshot(ctx, ws)
		ws.clearDirty(tc.consumer)
		if err != nil {
			t.Fatal(err)
		}
		if wk == nil || wk.kind != workConsumer || wk.handler != tc.consumer {
			t.Fatalf("%s: the step picked %+v, want consumer %s", tc.consumer, wk, tc.consumer)
		}
		pre := wk.state.prefetch
		if len(pre) != tc.topics {
			t.Errorf("%s: prefetched %d topics (%v), want %d", tc.consumer, len(pre), pre, tc.topics)
		}
		if got := pre[tc.topic]; len(got) != 1 || got[0].MessageID != tc.want {
			t.Errorf("%s: prefetched %+v, want %s", tc.consumer, got, tc.want)
		}
		if tc.topics == 2 {
			if got, ok := pre["other"]; !ok || len(got) != 0 {
				t.Errorf("%s: a topic with nothing pending: %+v (present %v), want present and empty", tc.consumer, got, ok)
			}
		}
		// and the prepare's host answers from it, not from a read of its own
		h := &host{e: b.e, wf: w, subscribe: []string{tc.topic}, prefetched: pre}
		got, err := h.Prefetch(ctx, sandbox.PrefetchDepth)
		if err != nil || len(got[tc.topic]) != 1 || got[tc.topic][0].MessageID != tc.want {
			t.Errorf("%s: the host's prefetch %+v, %v; want the step's", tc.consumer, got, err)
		}
	}
}

// TestReservationsFromTheSnapshot: the step's snapshot keeps the ids of the
// events it handed the prepare, and what the prepare reserves of them is
// resolved from those, with no read of its own; an event it was not
// handed is read, and a claimed one is refused either way.
func TestReservationsFromTheSnapshot(t *testing.T) {
	t.Parallel()
	b, w, evs := pendingItems(t)
	ctx := context.Background()
	ws := b.e.state(w.ID)
	ws.markDirty("one")
	_, wk, _, err := b.e.snapshot(ctx, ws)
	ws.clearDirty("one")
	if err != nil || wk == nil || wk.handler != "one" {
		t.Fatalf("the step picked %+v, %v; want consumer one", wk, err)
	}
	solo, err := b.db.Read().Peek(ctx, w.ID, "solo", 1)
	if err != nil || len(solo) != 1 {
		t.Fatalf("solo: %v, %v", solo, err)
	}
	if got := wk.state.pending["solo"]["solo-a"]; got != solo[0].ID {
		t.Fatalf("the snapshot's id of solo-a: %d, want %d", got, solo[0].ID)
	}
	c := sandbox.Consumer{Name: "one", Subscribe: []string{"solo", "item"}}
	resolve := func(known pendingIDs, claimed map[int64]int64, rs ...sandbox.Reservation) ([]int64, error) {
		return b.e.resolveReservations(ctx, w, c, &sandbox.PrepareResult{Reservations: rs}, claimed, known)
	}
	// an id only the snapshot knows: used as it is, so nothing was read
	known := pendingIDs{"solo": {"solo-a": 424242}}
	if ids, err := resolve(known, nil, sandbox.Reservation{Topic: "solo", IDs: []string{"solo-a"}}); err != nil || len(ids) != 1 || ids[0] != 424242 {
		t.Errorf("from the snapshot: %v, %v; want [424242]", ids, err)
	}
	// an event the prepare was not handed: read
	if ids, err := resolve(known, nil, sandbox.Reservation{Topic: "item", IDs: []string{"b"}}); err != nil || len(ids) != 1 || ids[0] != evs[1].ID {
		t.Errorf("read: %v, %v; want [%d]", ids, err, evs[1].ID)
	}
	if _, err := resolve(known, map[int64]int64{424242: 7}, sandbox.Reservation{Topic: "solo", IDs: []string{"solo-a"}}); err == nil {
		t.Error("a claimed event resolved from the snapshot")
	}
}
