package engine

import (
	"context"
	"strings"
	"testing"
)

// tickWorkflow publishes one event per input to topic "t"; its consumer's
// prepare is PREPARE and its mutate calls nothing.
func tickWorkflow(name, prepare string) string {
	return strings.NewReplacer("NAME", name, "PREPARE", prepare).Replace(`export default Keep.workflow({
  name: "NAME", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "Tick one" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx, state) { PREPARE },
    async mutate(ctx, prepared) {},
    async next(ctx, prepared, result) { return { saw: result.status, n: (prepared.data.n ?? 0) }; } }) },
});`)
}

func TestConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("next runs on empty reservations and on a mutate that calls nothing, with status none", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("w", tickWorkflow("w", `return { reservations: [], data: { n: 7 } };`))
		b.drain()
		st, _ := b.db.Read().HandlerState(ctx, 1, "c")
		if string(st) != `{"saw":"none","n":7}` {
			t.Fatalf("state after an empty prepare = %s; next must run with {status:'none'}", st)
		}
		b2 := setup(t)
		b2.deploy("w", tickWorkflow("w", `const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: { n: 1 } } : { reservations: [], data: {} };`))
		b2.drain()
		if ev := b2.events("w", "t")[0]; ev.Status != "consumed" {
			t.Fatalf("event %s: a run whose mutate called nothing still consumes what it reserved", ev.Status)
		}
		if ms := b2.mutations("w"); len(ms) != 0 {
			t.Fatalf("mutations = %+v, want none recorded", ms)
		}
	})

	t.Run("reservations are scoped to the workflow: the same topic name elsewhere is not reservable", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// workflow a publishes m1 to its topic t; b's consumer tries to reserve
		// m1 of t without anything of its own
		b.deploy("a", tickWorkflow("a", `return { reservations: [], data: {} };`))
		b.deploy("b", strings.Replace(tickWorkflow("b", `return { reservations: [{ topic: "t", ids: ["m1"] }], data: {} };`),
			`const id = ctx.registerInput`, `return; const id = ctx.registerInput`, 1))
		b.drain()
		if ev := b.events("a", "t")[0]; ev.Status != "pending" || ev.ReservedBy != "" {
			t.Fatalf("a's event was touched by b: %+v", ev)
		}
		var failed bool
		for _, r := range b.runs("b") {
			if r.Handler == "c" && r.Status == "failed:logic" && strings.Contains(r.Error, "does not exist") {
				failed = true
			}
		}
		if !failed {
			t.Fatalf("b's runs = %+v, want its consumer failed:logic on the shortfall", b.runs("b"))
		}
	})

	t.Run("reserving an event that is not pending fails the run before any side effect", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// reserve m1 once it exists; after that (state set) reserve it again
		b.deploy("w", tickWorkflow("w", `const [e] = await ctx.peek("t"); if (!e && !state) return { reservations: [], data: {} }; return { reservations: [{ topic: "t", ids: ["m1"] }], data: {} };`))
		b.drain()
		b.e.state(1).markDirty("c")
		b.drain()
		runs := b.runs("w")
		if runs[0].Status != "failed:logic" || !strings.Contains(runs[0].Error, "not pending") {
			t.Fatalf("newest run = %+v, want failed:logic naming the consumed event", runs[0])
		}
	})

	t.Run("skip event marks it skipped, visible and never reserved again", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
		b.drain()
		ev := b.events("w", "t")[0]
		if err := b.e.SkipEvents(ctx, []string{ev.ID}); err != nil {
			t.Fatal(err)
		}
		if got := b.events("w", "t")[0]; got.Status != "skipped" {
			t.Fatalf("event %s, want skipped", got.Status)
		}
		if err := b.e.SkipEvents(ctx, []string{ev.ID}); err == nil {
			t.Fatal("skipping a skipped event again was accepted")
		}
	})
}
