package engine

import (
	"context"
	"testing"
	"time"

	"keep/engine/api"
)

// TestResumeAfterSuspendRunsWhatCameDue: a loop's timer runs on the
// monotonic clock, which stops while the machine is suspended. A producer
// due an hour after its run, on a machine suspended for a week, runs when
// the machine wakes (the wall clock has jumped a week) — once, not for
// every tick it missed — not an hour of awake time later.
func TestResumeAfterSuspendRunsWhatCameDue(t *testing.T) {
	t.Parallel()
	// where the system gives no notice of the clock being set, the two
	// clocks are compared once a clockCheck
	resumeAfterSuspend(t, func(b *bundle) { b.e.clockCheck = 5 * time.Millisecond }, func() {})
}

// resumeAfterSuspend runs the week's suspend with the engine set up by
// prepare, and woke called once the fake clock has jumped.
func resumeAfterSuspend(t *testing.T, prepare func(*bundle), woke func()) {
	b := setup(t)
	prepare(b)
	asleep := make(chan time.Duration, 16)
	b.e.armed = func(_ *wfState, d time.Duration) {
		select {
		case asleep <- d:
		default:
		}
	}
	b.deploy("hourly", `export default Keep.workflow({ name: "hourly", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async () => {} } },
  consumers: {} });`)
	notes, stop := b.e.Subscribe()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	committed := func(what string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case n := <-notes:
				if n.Kind == api.NoteRunCommitted && n.Workflow == "hourly" {
					return
				}
			case <-deadline:
				t.Fatalf("no run committed: %s", what)
			}
		}
	}
	committed("the first, at deploy")
	for d := time.Duration(0); d < time.Hour; {
		select {
		case d = <-asleep:
		case <-time.After(10 * time.Second):
			t.Fatal("the loop never armed its timer for the next run")
		}
	}
	// the loop sleeps an hour on its timer; the machine sleeps a week
	b.clock.Advance(7 * 24 * time.Hour)
	woke()
	committed("the producer due six days ago did not run when the machine woke")
	if err := b.e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if runs := b.runs("hourly"); len(runs) != 2 {
		t.Fatalf("%d runs, want 2: the one at deploy and one for the week's missed ticks", len(runs))
	}
}
