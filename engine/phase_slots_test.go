package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/engine/api"
	"keep/sandbox"
)

// slotsOf sets phaseSlots to n for the test: the bound is then the same on
// a machine of any size.
func slotsOf(t *testing.T, n int) {
	old := phaseSlots
	phaseSlots = func() int { return n }
	t.Cleanup(func() { phaseSlots = old })
}

// spinNext is a consumer of concurrency conc whose mutate posts its item to
// url and whose next spends a while on the CPU: eight of them at once would
// be eight workers busy.
func spinNext(name, url string, n, conc int) string {
	src := fanWorkflow(name, fmt.Sprintf(`Array.from({ length: %d }, (_, i) => "item-" + i)`, n), conc,
		`await ctx.http.request({ method: "POST", url: "`+url+`/items", json: { id: p.data.id }, reconcile: { url: "`+url+`/items/" + p.data.id } });`)
	return strings.Replace(src, "async next(ctx, p, r) {}",
		"async next(ctx, p, r) { let x = 0; for (let i = 0; i < 2e6; i++) x += i; }", 1)
}

// TestConcurrentPhasesBoundedBySlots: a consumer of concurrency 8 has 8 calls
// under way at once (the sink holds the first 8 until all 8 have arrived), so
// 8 next phases become ready together; no more than the slots (2 here) run
// in workers at once, counted by the sandbox's busy workers, and every item
// is still posted once. Not parallel: the count is the whole process's.
func TestConcurrentPhasesBoundedBySlots(t *testing.T) {
	const n, conc, slots = 16, 8, 2
	slotsOf(t, slots)
	b := setup(t, allowMutations)
	s := newCountingSink(t)
	var arrived atomic.Int32
	all := make(chan struct{})
	s.hold = func(string) {
		switch k := arrived.Add(1); {
		case k < conc:
			select {
			case <-all:
			case <-time.After(30 * time.Second):
				t.Errorf("call %d waited 30 s for %d calls at once", k, conc)
			}
		case k == conc:
			close(all)
		}
	}
	b.activeAtMost(s, "fan", conc)
	b.deploy("fan", spinNext("fan", s.srv.URL, n, conc))
	sandbox.BusyPeak() // counts from here
	b.drain()
	if got := sandbox.BusyPeak(); got > slots {
		t.Errorf("%d workers busy at once, want at most the %d slots", got, slots)
	}
	if got := s.maxSeen.Load(); got != conc {
		t.Errorf("at most %d calls at once, want %d: the calls between phases still overlap", got, conc)
	}
	b.consumedOnce(s, "fan", n)
}

// TestPhaseSlotsAreTheWorkflows: one workflow's concurrency-8 consumer (with
// a next phase, so its runs in hand have phases of their own) has
// both its slots taken by phases that do not end (held in the test's hook)
// and more phases waiting for one; another workflow, whose consumer also
// declares concurrency 8, meanwhile runs every item to commit. Once let go,
// the first finishes every item once.
func TestPhaseSlotsAreTheWorkflows(t *testing.T) {
	const n, conc, slots = 16, 8, 2
	slotsOf(t, slots)
	b := setup(t, allowMutations)
	busySink, otherSink := newCountingSink(t), newCountingSink(t)
	b.deploy("busy", spinNext("busy", busySink.srv.URL, n, conc))
	w, err := b.db.Read().WorkflowByName(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	held := make(chan struct{}, 64)
	var entered atomic.Int32
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer letGo()
	phaseEntered = func(wf int64, _ string) {
		// the first phases pass, so runs are under way: the consumer's
		// first run (nothing to reserve yet: prepare, then next), then the
		// prepare of the first run with an item and the one started ahead
		// beside it (ahead.go), in either order; from the fifth on each
		// holds its slot until let go
		if wf != w.ID || entered.Add(1) <= 4 {
			return
		}
		held <- struct{}{}
		<-release
	}
	t.Cleanup(func() { phaseEntered = nil })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, stop := b.e.Subscribe()
	defer stop()
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range slots {
		select {
		case <-held:
		case <-time.After(20 * time.Second):
			t.Fatal("busy never had both its slots held")
		}
	}
	b.deploy("other", strings.Replace(concurrentPush(otherSink.srv.URL, 3, conc), `name: "fan"`, `name: "other"`, 1))
	// the producer's run and the three consumer runs commit
	deadline := time.After(20 * time.Second)
	for committed := 0; committed < 4; {
		select {
		case nt := <-notes:
			if nt.Kind == api.NoteRunCommitted && nt.Workflow == "other" {
				committed++
			}
		case <-deadline:
			t.Fatalf("other's runs did not commit while busy's slots were held: one workflow's slots hold up another")
		}
	}
	if got := entered.Load(); got > 4+slots {
		t.Errorf("%d phases of busy entered, want at most %d while its %d slots were held", got, 4+slots, slots)
	}
	letGo()
	b.settled("busy", n)
	if err := b.e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.consumedOnce(busySink, "busy", n)
	b.consumedOnce(otherSink, "other", 3)
}

// settled waits, with the engine started, until the n events of wf's topic
// item are all consumed and no run of wf is under way (a stop in the
// middle of a call would leave it to a later retry).
func (b *bundle) settled(wf string, n int) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := 0
		for _, ev := range b.events(wf, "item") {
			if ev.Status == EventConsumed {
				done++
			}
		}
		// and no run under way: one the consumer began after the last
		// commit (it finds nothing and commits) would be cut off by the
		// test's Stop and stay active, for recovery, not committed
		active := b.activeRuns(wf)
		if done == n && active == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %d of %d events consumed, %d runs active after 30 s", wf, done, n, active)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// activeRuns is how many runs of wf are active.
func (b *bundle) activeRuns(wf string) int {
	b.t.Helper()
	w, err := b.db.Read().WorkflowByName(context.Background(), wf)
	if err != nil {
		b.t.Fatal(err)
	}
	runs, err := b.db.Read().ActiveRunRefs(context.Background(), w.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	return len(runs)
}
