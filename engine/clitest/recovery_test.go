package clitest

import (
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/enginetest/kit"
)

// sleeperWorkflow's one consumer has nothing to read and asks to be woken
// far ahead (clamped to now + max_wake); nothing else is ever due.
const sleeperWorkflow = `
export default Keep.workflow({
  name: "sleeper",
  topics: { t: {} },
  consumers: {
    nap: Keep.consumer({
      subscribe: ["t"],
      async prepare() { return { reservations: [], data: {}, wakeAt: "2099-01-01T00:00:00Z" }; },
      async mutate() {},
      async next() {},
    }),
  },
});
`

// TestDrainTwice: chapter 16 "Restart Recovery" seen from the CLI, where
// every command is a restart. The consumer runs once after its deploy; a
// second drain finds its wakeAt ahead and nothing pending, and runs nothing.
func TestDrainTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.ok("deploy", e.file(e.dir, "sleeper.js", sleeperWorkflow))
	e.ok("drain")
	runs := jsonOf[[]api.RunView](e, "runs", "sleeper")
	if len(runs) != 1 || runs[0].Status != engine.RunCommitted {
		t.Fatalf("after deploy and a drain: runs %+v, want one committed", runs)
	}
	e.ok("drain")
	e.ok("drain")
	if again := jsonOf[[]api.RunView](e, "runs", "sleeper"); len(again) != 1 {
		t.Fatalf("two more drains with the wakeAt ahead ran the consumer again: %d runs", len(again))
	}
	st := jsonOf[api.WorkflowDetail](e, "status", "sleeper")
	var woke bool
	for _, h := range st.Handlers {
		woke = woke || (h.Name == "nap" && h.WakeAt != nil)
	}
	if !woke {
		t.Fatalf("status shows no persisted wakeAt for nap: %+v", st.Handlers)
	}
}

// TestMutationStatusFlag: --status offers every ledger state, approved
// included (an approval given while the workflow is paused waits there).
func TestMutationStatusFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.deployLines()
	e.ok("drain")
	a := attentionOf(e, api.AttentionApproval)
	if len(a) != 1 {
		t.Fatalf("attention %+v, want one approval", a)
	}
	e.ok("pause", "lines")
	e.ok("approve", a[0].ID)
	got := jsonOf[[]api.MutationView](e, "mutations", "lines", "--status", string(engine.MutationApproved))
	if len(got) != 1 || got[0].Status != engine.MutationApproved {
		t.Fatalf("mutations --status approved: %+v, want the approved one", got)
	}
	r := e.expect(2, "mutations", "lines", "--status", "nope")
	for _, s := range engine.MutationStatuses() {
		if !strings.Contains(r.stderr, string(s)) {
			t.Errorf("a bad --status does not list %q: %s", s, r.stderr)
		}
	}
}

// postWorkflow posts one item to SINK with a reconcile URL.
const postWorkflow = `
export default Keep.workflow({
  name: "post",
  topics: { item: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "http", type: "resource", id: "a", title: "Item a" });
    await ctx.publish("item", { messageId: "a", inputId, payload: { id: "a" } });
  } } },
  consumers: { push: Keep.consumer({
    subscribe: ["item"],
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: {}, ui: { title: "Post a" } };
    },
    async mutate(ctx) {
      await ctx.http.request({ method: "POST", url: SINK + "/items", json: { id: "a" }, reconcile: { url: SINK + "/items/a" } });
    },
    async next() {},
  }) },
});
`

// TestResolveAnswersMeanOneThing: keep resolve takes the four answers by
// name; a y/n shorthand is refused with the list, and check-again (the
// same as try-again) checks without sending anything.
func TestResolveAnswersMeanOneThing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	s := kit.NewSink(t)
	s.Set("500", 1) // nothing applied, the outcome uncertain
	e.ok("deploy", e.file(e.dir, "post.js", strings.ReplaceAll(postWorkflow, "SINK", `"`+s.URL+`"`)))
	e.ok("drain")
	ms := jsonOf[[]api.MutationView](e, "mutations", "post")
	if len(ms) != 1 || ms[0].Status != engine.MutationNeedsReconcile {
		t.Fatalf("mutations %+v, want one needs_reconcile", ms)
	}
	for _, short := range []string{"n", "y", "no"} {
		r := e.expect(2, "resolve", ms[0].ID, short)
		for _, a := range []api.Answer{api.TryAgain, api.Happened, api.NotHappened, api.SkipIt} {
			if !strings.Contains(r.stderr, string(a)) {
				t.Errorf("resolve %s: the refusal does not name %s: %s", short, a, r.stderr)
			}
		}
	}
	e.ok("resolve", ms[0].ID, "check-again")
	if s.Posts() != 1 {
		t.Fatalf("check again sent the call: %d posts", s.Posts())
	}
	if got := jsonOf[[]api.MutationView](e, "mutations", "post"); got[0].Status != engine.MutationNeedsReconcile {
		t.Fatalf("after check-again the row is %s, want still needs_reconcile (checked when due)", got[0].Status)
	}
}
