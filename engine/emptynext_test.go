package engine

import (
	"context"
	"testing"

	"keep/engine/api"
)

// emptyNextWorkflow reserves one event, appends a line for it, and has
// NEXT as its consumer's next.
func emptyNextWorkflow(next string) string {
	return `export default Keep.workflow({
  name: "w", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "one", title: "Tick one" });
    await ctx.publish("t", { messageId: "m1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      const [e] = await ctx.peek("t");
      return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} };
    },
    async mutate(ctx, prepared) { await ctx.files.append({ path: "out.txt", content: "x\n" }); },
    ` + next + ` }) },
});`
}

// A consumer whose next is empty is not run (sandbox/noop.go): the run
// commits as it would have (its event consumed, no state, its mutation
// applied). The engine honours the flag: forced on a next that is not
// empty, what that next returns never arrives.
func TestEmptyNextIsNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, next string
		force      bool   // mark next empty, whatever it says
		state      string // the handler's state after the run
	}{
		{name: "empty", next: `async next() {}`},
		{name: "empty, with a comment and parameters", next: `async next(ctx, prepared, result) { /* nothing to publish */ }`},
		{name: "not empty", next: `async next() { return { ran: true }; }`, state: `{"ran":true}`},
		{name: "not empty, marked empty", next: `async next() { return { ran: true }; }`, force: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.deploy("w", emptyNextWorkflow(tc.next))
			if err := b.e.Grant(ctx, "w", api.GrantView{Capability: "files.append", Mode: "allow"}); err != nil {
				t.Fatal(err)
			}
			if tc.force {
				w, err := b.db.Read().WorkflowByName(ctx, "w")
				if err != nil {
					t.Fatal(err)
				}
				sc, err := b.e.script(ctx, w.ID, w.Version)
				if err != nil {
					t.Fatal(err)
				}
				sc.Workflow.Consumers[0].EmptyNext = true
			}
			b.drain()
			if ev := b.events("w", "t")[0]; ev.Status != "consumed" {
				t.Fatalf("event %s, want consumed; runs %+v; mutations %+v", ev.Status, b.runs("w"), b.mutations("w"))
			}
			if ms := b.mutations("w"); len(ms) != 1 || ms[0].Status != "applied" {
				t.Fatalf("mutations %+v, want one applied", ms)
			}
			if got := b.read("out.txt"); got != "x\n" {
				t.Fatalf("out.txt = %q", got)
			}
			st, err := b.db.Read().HandlerState(ctx, 1, "c")
			if err != nil {
				t.Fatal(err)
			}
			if string(st) != tc.state {
				t.Fatalf("state %s, want %q", st, tc.state)
			}
		})
	}
}

// With an empty next, the applied call's outcome and the run's commit are
// one transaction (tAppliedCommitted): the same work commits once less.
func TestEmptyNextCommitsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	commits := func(next string) int64 {
		b := setup(t)
		b.deploy("w", emptyNextWorkflow(next))
		if err := b.e.Grant(ctx, "w", api.GrantView{Capability: "files.append", Mode: "allow"}); err != nil {
			t.Fatal(err)
		}
		s0, u0 := b.db.Commits()
		b.drain()
		s1, u1 := b.db.Commits()
		if ms := b.mutations("w"); len(ms) != 1 || ms[0].Status != "applied" {
			t.Fatalf("mutations %+v, want one applied", ms)
		}
		return s1 + u1 - s0 - u0
	}
	empty, full := commits(`async next() {}`), commits(`async next() { return undefined; }`)
	if empty != full-1 {
		t.Errorf("a drain with an empty next committed %d times, with a next that runs %d: want one fewer", empty, full)
	}
}
