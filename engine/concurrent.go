package engine

// A consumer that declares concurrency: N (DESIGN.md §15) has up to N runs
// under way at once. Its prepares still run one at a time, in the
// workflow's scheduler step: each reads the queue as the runs before it
// left it, and the events it chose are claimed (in memory, then by its
// checkpoint) before the next one peeks, so reservations are disjoint.
// From mutate on, each run is handed to a goroutine of its own, with its
// own ledger rows; the step goes on to the next. The database still holds
// no more than N active runs of the consumer: due counts them.

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"sync"

	"keep/sandbox"
	"keep/storage"
)

// hand is what a workflow's concurrent consumers have under way.
type hand struct {
	mu     sync.Mutex
	runs   map[int64]bool  // runs handed off, not yet returned
	claims map[int64]int64 // event id → the run in hand whose prepare chose it
	wg     sync.WaitGroup
	// slots: per consumer, its phases running now (phaseSlot)
	slots map[string]chan struct{}
	// unstarted: runs, by id, whose start record is committing (their
	// consumer's name), which the database does not show active yet
	unstarted map[int64]string
}

func (h *hand) starting(runID int64, consumer string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.unstarted == nil {
		h.unstarted = map[int64]string{}
	}
	h.unstarted[runID] = consumer
}

func (h *hand) started(runID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.unstarted, runID)
}

// withStarting is active, read after this call's snapshot of the runs
// starting, with those of them it does not show yet: a run whose record
// committed in between is in active and counted once.
func (h *hand) withStarting() func(active []storage.ActiveRunRef) []storage.ActiveRunRef {
	h.mu.Lock()
	var starting map[int64]string
	if len(h.unstarted) > 0 {
		starting = maps.Clone(h.unstarted)
	}
	h.mu.Unlock()
	return func(active []storage.ActiveRunRef) []storage.ActiveRunRef {
		for id, consumer := range starting {
			if !slices.ContainsFunc(active, func(r storage.ActiveRunRef) bool { return r.ID == id }) {
				active = append(active, storage.ActiveRunRef{ID: id, Handler: consumer})
			}
		}
		return active
	}
}

func (h *hand) inHand(runID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[runID]
}

// now is the runs in hand. Taken before the database is read, it is never
// behind it: a run leaves the hand only once its last write has committed,
// so a run read as active and not in it is not under way.
func (h *hand) now() map[int64]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.runs) == 0 {
		return nil
	}
	out := make(map[int64]bool, len(h.runs))
	for k := range h.runs {
		out[k] = true
	}
	return out
}

func (h *hand) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.runs)
}

// claimed is a copy of the claims. Taken before the database is read, it
// is never behind it: a run drops its claims only once what it did to its
// events (consumed, released, reserved) has committed.
func (h *hand) claimed() map[int64]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.claims) == 0 {
		return nil
	}
	out := make(map[int64]int64, len(h.claims))
	for k, v := range h.claims {
		out[k] = v
	}
	return out
}

func (h *hand) take(runID int64, events []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runs == nil {
		h.runs, h.claims = map[int64]bool{}, map[int64]int64{}
	}
	h.runs[runID] = true
	for _, id := range events {
		h.claims[id] = runID
	}
	h.wg.Add(1)
}

func (h *hand) drop(runID int64) {
	h.mu.Lock()
	delete(h.runs, runID)
	for id, r := range h.claims {
		if r == runID {
			delete(h.claims, id)
		}
	}
	h.mu.Unlock()
	h.wg.Done()
}

// wait blocks until every run handed off has returned.
func (h *hand) wait() { h.wg.Wait() }

// concurrencyOf is the declared concurrency of a consumer of sc; 1 for
// anything else (a producer, a handler the version lacks).
func concurrencyOf(sc *sandbox.Script, handler string) int {
	if c, ok := consumerNamed(sc, handler); ok {
		return max(c.Concurrency, 1)
	}
	return 1
}

// consumerNamed is sc's consumer called name, if it has one.
func consumerNamed(sc *sandbox.Script, name string) (sandbox.Consumer, bool) {
	i := slices.IndexFunc(sc.Workflow.Consumers, func(c sandbox.Consumer) bool { return c.Name == name })
	if i < 0 {
		return sandbox.Consumer{}, false
	}
	return sc.Workflow.Consumers[i], true
}

// handOff goes on with run in a goroutine of its own, events claimed for
// it, and returns at once. The run works on its own copy of the workflow
// row (transitions reread it). Its end wakes the scheduler, which may then
// start another; an error of keep's blocks the workflow, as a step's does.
func (e *Engine) handOff(ctx context.Context, ws *wfState, w *storage.Workflow, run *storage.Run, events []int64,
	fn func(ctx context.Context, w *storage.Workflow) error) {
	own := *w
	ws.hand.take(run.ID, events)
	sandbox.Go(func() {
		defer ws.poke()
		defer ws.hand.drop(run.ID)
		if err := fn(ctx, &own); err != nil && ctx.Err() == nil {
			e.log.Error("concurrent run failed", "workflow", ws.id, "run", run.ID, "err", err)
			e.internalBlock(ctx, ws.id, err)
		}
	})
}

// activeOf counts the active runs of a handler.
func activeOf(runs []storage.ActiveRunRef, handler string) int {
	n := 0
	for _, r := range runs {
		if r.Handler == handler {
			n++
		}
	}
	return n
}

// phaseSlots is how many phases of one concurrent consumer run at once: the
// cores, at least 2 (DESIGN.md §16). Its runs may be N at once, but a phase
// is a worker process busy on a core; more of them than cores only fight
// over the cores and hold their memory. The calls between the phases (the
// mutation's) still overlap N at once. The cores are the machine's, not
// this process's GOMAXPROCS: keep runs its own Go code on one (main.go).
var phaseSlots = func() int { return max(runtime.NumCPU(), 2) }

// phaseEntered, when set (tests), is called once a phase of a consumer with
// more runs than phaseSlots has its slot, before it runs.
var phaseEntered func(wfID int64, handler string)

// phaseSlot waits for one of consumer c's phase slots and returns what gives
// it back. It is taken just before a phase runs, by a caller that holds
// nothing else (no read connection, no transaction, no worker): every
// holder of a slot runs a phase that can end without a slot of its own, so
// waiting here cannot close a circle. The slots are the workflow's own: one
// workflow's runs never wait for another's. A consumer that cannot have
// more runs than slots takes none.
func (e *Engine) phaseSlot(ctx context.Context, wfID int64, c sandbox.Consumer) (release func()) {
	n := phaseSlots()
	if c.Concurrency <= n {
		return func() {}
	}
	slot := e.state(wfID).hand.slot(c.Name, n)
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return func() {} // the phase sees ctx ended and stops at once
	}
	if phaseEntered != nil {
		phaseEntered(wfID, c.Name)
	}
	return func() { <-slot }
}

// slot is the channel of handler's phase slots, n of them.
func (h *hand) slot(handler string, n int) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.slots == nil {
		h.slots = map[string]chan struct{}{}
	}
	s := h.slots[handler]
	if s == nil {
		s = make(chan struct{}, n)
		h.slots[handler] = s
	}
	return s
}
