package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// restartWorkflow: sleeper only waits for its clock; holder reads a topic
// whose event it never reserves (waiting for a correlation that never
// comes), so its event stays pending; p publishes that event once.
const restartWorkflow = `export default Keep.workflow({ name: "rs", topics: { t: {}, u: {}, v: {} },
  producers: { p: { publishes: ["u"], schedule: { interval: "1d" }, handler: async (ctx, state) => {
    if (state?.done) return state;
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "x", title: "Tick x" });
    await ctx.publish("u", { messageId: "m1", inputId: id, payload: {} });
    return { done: true };
  } } },
  consumers: {
    sleeper: Keep.consumer({ subscribe: ["t"],
      async prepare() { return { reservations: [], data: {}, wakeAt: "2026-11-02T11:00:00Z" }; },
      async mutate() {}, async next() {} }),
    late: Keep.consumer({ subscribe: ["v"],
      async prepare() { return { reservations: [], data: {}, wakeAt: "2027-01-01T00:00:00Z" }; },
      async mutate() {}, async next() {} }),
    holder: Keep.consumer({ subscribe: ["u"],
      async prepare() { return { reservations: [], data: {} }; },
      async mutate() {}, async next() {} }),
  } });`

func (b *bundle) runsBy(wf string) map[string]int {
	b.t.Helper()
	n := map[string]int{}
	for _, r := range b.runs(wf) {
		n[r.Handler]++
	}
	return n
}

func TestRestartRecovery(t *testing.T) {
	t.Parallel()

	t.Run("a consumer deployed and not run before a restart runs after it", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("rs", restartWorkflow)
		b.reopen()
		b.drain()
		if n := b.runsBy("rs"); n["sleeper"] != 1 || n["late"] != 1 || n["holder"] == 0 || n["p"] != 1 {
			t.Fatalf("runs after deploy, restart, drain: %v; every handler runs once (holder again after p)", n)
		}
	})

	t.Run("a restart runs only consumers with pending events; a wakeAt ahead is waited for, one passed is honoured", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("rs", restartWorkflow)
		b.drain()
		before := b.runsBy("rs")
		b.reopen()
		b.drain()
		after := b.runsBy("rs")
		if after["sleeper"] != before["sleeper"] || after["late"] != before["late"] || after["p"] != before["p"] {
			t.Fatalf("a restart ran handlers with nothing due: before %v, after %v", before, after)
		}
		if after["holder"] != before["holder"]+1 {
			t.Fatalf("holder ran %d times after the restart, want once more (its event is pending): before %v", after["holder"]-before["holder"], before)
		}
		// a second restart and drain in a row: still nothing for sleeper
		b.reopen()
		b.drain()
		if n := b.runsBy("rs"); n["sleeper"] != before["sleeper"] {
			t.Fatalf("sleeper ran again on a second restart with its wakeAt ahead: %v", n)
		}
		b.reopen()
		b.clock.Advance(2*time.Hour + time.Second) // past 11:00
		b.drain()
		if n := b.runsBy("rs"); n["sleeper"] != before["sleeper"]+1 || n["late"] != before["late"] {
			t.Fatalf("after its persisted wakeAt passed across a restart: runs %v, want sleeper once more and late not", n)
		}
	})

	t.Run("a persisted wakeAt beyond the policy's latest is clamped on start", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("rs", restartWorkflow)
		b.drain()
		if w := b.handler("rs", "late").WakeAt; w == nil || !w.Equal(b.clock.Now().Add(24*time.Hour)) {
			t.Fatalf("late's wakeAt %v, want now+24h", w)
		}
		b.cfg.Policy.MaxWake.Duration = time.Hour
		b.reopen()
		if w := b.handler("rs", "late").WakeAt; w == nil || !w.Equal(b.clock.Now().Add(time.Hour)) {
			t.Fatalf("late's wakeAt %v after a restart with max_wake 1h, want now+1h", w)
		}
		if w := b.handler("rs", "sleeper").WakeAt; w == nil || !w.Equal(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)) {
			t.Fatalf("sleeper's wakeAt %v, want clamped to 10:00", w)
		}
	})
}

// TestSettledRunsEnd: a run whose uncertain mutation is settled does not
// keep saying it waits, and the ledger shows the outcome, not the error of
// the call that left it uncertain.
func TestSettledRunsEnd(t *testing.T) {
	t.Parallel()

	t.Run("found not to have happened: the run ends retried, the row failed with why", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("502", 1) // ambiguous, nothing applied
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		if m := b.mutationsBy(""); len(m) != 1 || m[0].Status != MutationNeedsReconcile {
			t.Fatalf("mutations %+v, want one needs_reconcile", m)
		}
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 2 || ms[0].Status != MutationFailed || !strings.Contains(ms[0].Error, "did not happen") || ms[1].Status != MutationApplied {
			t.Fatalf("mutations %+v, want the first failed (did not happen), the fresh attempt applied", ms)
		}
		for _, r := range b.runs("push") {
			if r.Status == RunPausedReconciliation || r.Status == RunPausedApproval {
				t.Errorf("run %s (%s) still says %s", r.ID, r.Handler, r.Status)
			}
			if r.ID == ms[0].RunID && r.Status != RunRetried {
				t.Errorf("the run of the failed mutation is %s, want retried (a new run took it over)", r.Status)
			}
		}
	})

	t.Run("found to have happened: the row is applied with no error left on it", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("500-after-apply", 1)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != MutationApplied || ms[0].Error != "" {
			t.Fatalf("mutations %+v, want one applied, its error cleared", ms)
		}
	})
}

// TestNotHappenedResendsSameKey: "it did not happen" sends the same call
// again under the same idempotency key, so a receiver that did get it
// (the person was wrong) drops the copy: one ledger row, one key, applied
// once.
func TestNotHappenedResendsSameKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	s := newSink(t)
	s.Set("abort-after-apply", 1) // it arrived, the answer was lost
	s.ReconcileStatus(500)        // and no check can tell
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain()
	ms := b.mutationsBy("")
	if len(ms) != 1 || ms[0].Status != MutationNeedsReconcile {
		t.Fatalf("mutations %+v, want one needs_reconcile", ms)
	}
	if err := b.e.Resolve(ctx, ms[0].ID, api.NotHappened); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Hour)
	keys := s.Keys()
	if len(keys) != 1 {
		t.Fatalf("keys the receiver saw: %v, want the one key twice", keys)
	}
	for k, n := range keys {
		if n != 2 || !strings.HasSuffix(k, "-"+ms[0].ID) {
			t.Fatalf("key %s arrived %d times, want the mutation's own key twice", k, n)
		}
	}
	ms = b.mutationsBy("")
	if len(ms) != 1 || ms[0].Status != MutationApplied || ms[0].Error != "" {
		t.Fatalf("mutations %+v, want the one row applied, no error left", ms)
	}
	for _, r := range b.runs("push") {
		if r.Handler == "push" && r.Status != RunCommitted && r.Status != RunPausedTransient {
			t.Errorf("run %s is %s", r.ID, r.Status)
		}
	}
	if err := b.e.Resolve(ctx, ms[0].ID, api.NotHappened); err == nil {
		t.Error("a second answer to the settled mutation was accepted")
	}
}
