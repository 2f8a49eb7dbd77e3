package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// aheadScoreOf is how the prepares started ahead for wf's consumer push
// went.
func (b *bundle) aheadScoreOf(wf string) aheadScore {
	b.t.Helper()
	w, err := b.db.Read().WorkflowByName(context.Background(), wf)
	if err != nil {
		b.t.Fatal(err)
	}
	ws := b.e.state(w.ID)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.aheadScore["push"]
}

// noRunFailed: every run of wf committed.
func (b *bundle) noRunFailed(wf string) {
	b.t.Helper()
	w, err := b.db.Read().WorkflowByName(context.Background(), wf)
	if err != nil {
		b.t.Fatal(err)
	}
	runs, err := b.db.Read().Runs(context.Background(), w.ID, 0, 1000, "")
	if err != nil {
		b.t.Fatal(err)
	}
	for _, r := range runs {
		if r.Status != RunCommitted {
			b.t.Errorf("run %d (%s) is %s: %s", r.ID, r.Handler, r.Status, r.Error)
		}
	}
}

// fanAhead runs concurrentPush, its source edited by edit, to the end: every
// item posted once, each run consuming the one event it reserved, none
// failed; it returns how the prepares started ahead went.
func fanAhead(t *testing.T, edit func(src string) string) aheadScore {
	const n, conc = 12, 4
	b := setup(t, allowMutations)
	s := newCountingSink(t)
	b.activeAtMost(s, "fan", conc)
	b.deploy("fan", edit(concurrentPush(s.srv.URL, n, conc)))
	b.drain()
	b.consumedOnce(s, "fan", n)
	b.noRunFailed("fan")
	return b.aheadScoreOf("fan")
}

// TestPrepareAheadIsTaken: a concurrent consumer whose prepare takes the
// first event it is offered has the next run's prepare started ahead, and
// the next step takes it.
func TestPrepareAheadIsTaken(t *testing.T) {
	got := fanAhead(t, func(src string) string { return src })
	if got.taken == 0 || got.missed != 0 {
		t.Errorf("prepares ahead: %d taken, %d dropped; want some taken, none dropped", got.taken, got.missed)
	}
}

// TestPrepareAheadThatReadPastItsOfferIsDropped: a prepare that peeks two
// events reads the queue itself; started ahead, it would read it before
// the run before it chose, and reserve that run's event. Such a prepare is
// dropped and run again from the step, so no run reserves another's event
// (or fails for it), and after a few the consumer has none started ahead.
func TestPrepareAheadThatReadPastItsOfferIsDropped(t *testing.T) {
	got := fanAhead(t, func(src string) string {
		edited := strings.Replace(src, `ctx.peek("item", { limit: 1 })`, `ctx.peek("item", { limit: 2 })`, 1)
		if edited == src {
			t.Fatal("the workflow's peek was not found")
		}
		return edited
	})
	// three dropped stop them, and one more may be under way by then
	if got.taken != 0 || got.missed == 0 || got.missed > 4 {
		t.Errorf("prepares ahead: %d taken, %d dropped; want none taken, 1 to 4 dropped (then none started)", got.taken, got.missed)
	}
}

// TestStartingRunsCountTowardConcurrency: a concurrent consumer's step
// goes on while its run's start record commits; until it has, the run
// counts among the consumer's active runs, so no more than concurrency
// runs are under way however long the records take.
func TestStartingRunsCountTowardConcurrency(t *testing.T) {
	const n, conc = 8, 2
	b := setup(t, allowMutations)
	s := newCountingSink(t)
	b.activeAtMost(s, "fan", conc)
	release := make(chan struct{})
	var calls, waiting atomic.Int32
	startRecording = func() {
		if calls.Add(1) == 1 {
			return // the consumer's first run, before the producer's: nothing to reserve
		}
		waiting.Add(1)
		<-release
	}
	t.Cleanup(func() { startRecording = nil })
	b.deploy("fan", concurrentPush(s.srv.URL, n, conc))
	w, err := b.db.Read().WorkflowByName(context.Background(), "fan")
	if err != nil {
		t.Fatal(err)
	}
	ws := b.e.state(w.ID)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for waiting.Load() < conc && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := waiting.Load(); got != conc {
		t.Fatalf("%d start records waiting, want %d", got, conc)
	}
	// the steps meanwhile: given the time to start more, they start none
	for range 200 {
		if got := ws.hand.count(); got > conc {
			t.Fatalf("%d runs in hand while their start records wait, more than the concurrency %d", got, conc)
		}
		time.Sleep(time.Millisecond)
	}
	if got := waiting.Load(); got != conc {
		t.Errorf("%d start records waiting, want %d: a step started a run the concurrency had no room for", got, conc)
	}
	close(release)
	b.settled("fan", n)
	if err := b.e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.consumedOnce(s, "fan", n)
	b.noRunFailed("fan")
}
