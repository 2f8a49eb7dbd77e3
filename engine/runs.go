package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"keep/connectors"
	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

var (
	resultNone    = json.RawMessage(`{"status":"none"}`)
	resultSkipped = ledger.ResultSkipped
)

func (e *Engine) invocation(handler string, phase sandbox.Phase, h *host, state, prepared, mres json.RawMessage) sandbox.Invocation {
	return sandbox.Invocation{Handler: handler, Phase: phase, State: state, Prepared: prepared, MutationResult: mres,
		Host: h, Limits: e.pol.Limits}
}

func (e *Engine) newRun(w *storage.Workflow, handler, typ, trigger string) *storage.Run {
	now := e.now()
	return &storage.Run{WorkflowID: w.ID, Handler: handler, HandlerType: typ, ScriptVersion: w.Version, Trigger: trigger,
		Phase: PhasePreparing, Status: RunActive, CreatedAt: now, UpdatedAt: now}
}

// runProducer runs one producer. Its run record exists from the start
// (active, preparing), so a crash meanwhile leaves a run recovery marks
// crashed; its inputs, events, state, next_run_at and the committed run go
// in one transaction, or only the failed run is recorded.
func (e *Engine) runProducer(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, p sandbox.Producer, trigger string) error {
	ws.mu.Lock()
	delete(ws.queued, p.Name)
	delete(ws.why, p.Name)
	ws.mu.Unlock()
	e.watching().ran(w.ID, p.Name)
	if trigger == "schedule" && e.neverRan(ctx, w, p.Name) {
		// deployed by a process gone since (keep deploy with no engine
		// running): its first run is the deploy's all the same
		trigger = "deploy"
	}
	run := e.newRun(w, p.Name, "producer", trigger)
	if err := e.tStarted(ctx, run); err != nil {
		return err
	}
	return e.producerPhase(ctx, ws, w, sc, p, run)
}

func (e *Engine) producerPhase(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, p sandbox.Producer, run *storage.Run) error {
	tr := e.newTrace()
	state, err := e.db.Read().HandlerState(ctx, w.ID, p.Name)
	if err != nil {
		return err
	}
	h := &host{e: e, wf: w, phase: sandbox.PhaseProducer, producer: p.Name, publishes: p.Publishes, tr: tr}
	// whatever its outcome: what a listing left out is still to be taken
	defer h.doneListing()
	out, err := sc.Run(ctx, e.invocation(p.Name, sandbox.PhaseProducer, h, state, nil, nil))
	if err != nil {
		return e.failRun(ctx, w, run, err, tr)
	}
	if len(h.inputs) > 0 {
		// new inputs: their consumers run once this commits, in workers
		// started meanwhile
		warmWorkers(e.pol.Limits, workersFor(sc, h.pubs))
	}
	next := p.Schedule.Next(e.now())
	if err := e.tCommitProducer(ctx, w, run, out, h, &next, tr); err != nil {
		return e.failRun(ctx, w, run, err, tr)
	}
	e.markSubscribers(ws, sc, h.pubs)
	return nil
}

// warmWorkers is sandbox.Warm, but in tests.
var warmWorkers = sandbox.Warm

// workersFor is how many workers the consumers of pubs' topics can use at
// once: one each, or as many as a concurrent one has phase slots
// (concurrent.go), up to the slots in all.
func workersFor(sc *sandbox.Script, pubs []storage.Publication) int {
	n := 0
	for _, c := range sc.Workflow.Consumers {
		if slices.ContainsFunc(pubs, func(p storage.Publication) bool { return slices.Contains(c.Subscribe, p.Topic) }) {
			n += min(max(c.Concurrency, 1), phaseSlots())
		}
	}
	return min(n, phaseSlots())
}

// neverRan says whether handler of w has no run yet.
func (e *Engine) neverRan(ctx context.Context, w *storage.Workflow, handler string) bool {
	runs, err := e.db.Read().Runs(ctx, w.ID, 0, 8, handler)
	if err != nil {
		return false
	}
	for _, r := range runs {
		if r.Handler == handler { // Runs matches handler names by substring
			return false
		}
	}
	return true
}

// markSubscribers marks dirty the consumers of the topics a run published
// news to: an event published again as it was is nothing new, and waking
// the consumer for it would add an empty run per producer tick.
func (e *Engine) markSubscribers(ws *wfState, sc *sandbox.Script, pubs []storage.Publication) {
	for _, c := range sc.Workflow.Consumers {
		for _, p := range pubs {
			if p.News && slices.Contains(c.Subscribe, p.Topic) {
				ws.markDirty(c.Name)
				ws.ranFor(c.Name) // it runs for the events now
				break
			}
		}
	}
}

// runConsumer runs one consumer from prepare. Its run record exists from
// the start (active, preparing): a crash during prepare leaves a run that
// recovery marks crashed, unless the record had not committed yet (a
// concurrent consumer's step does not wait for it, ahead.go; unsynced, a
// power cut may take it anyway: it records no effect). Prepare reads only,
// so it starts while that record commits (overlap.go), from the state st
// the scheduler read.
func (e *Engine) runConsumer(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, trigger string, st *knownState) error {
	ws.clearDirty(c.Name)
	ws.ranFor(c.Name)
	run := e.newRun(w, c.Name, "consumer", trigger)
	var tr *trace
	var p *earlyPrepare
	a := e.takeAhead(ws, sc, c, st)
	if a != nil {
		// its prepare started in the step before (ahead.go): so did the run
		tr, p = a.tr, a.p
		run.CreatedAt, run.UpdatedAt = a.at, a.at
	} else {
		tr = e.newTrace()
		p = e.startPrepare(ctx, w, sc, c, st, tr, claimsOf(ws, c))
	}
	if c.Concurrency > 1 {
		e.startAhead(ctx, ws, w, sc, c, st)
	}
	// Prepare takes longer than the record's commit: it gets this core now,
	// and the commit the next one free, rather than prepare waiting for a
	// core to wake and take it (tens of µs on a VM, every run). A prepare
	// started ahead is under way already.
	if a == nil {
		runtime.Gosched()
	}
	// Prepare is under way: its record is written even if the engine is
	// stopping meanwhile, so the stop leaves a run that recovery finds. A
	// concurrent consumer's step goes on meanwhile (ahead.go).
	var start *startRecord
	if c.Concurrency > 1 {
		start = e.recordStart(ctx, ws, run)
	} else if err := e.tStarted(context.WithoutCancel(ctx), run); err != nil {
		p.wait()
		return err
	}
	if a != nil {
		if a.read() {
			ws.aheadTaken(c.Name)
		} else {
			// it read past what it was offered, at another time than now:
			// prepare again, as it would have started here
			ws.aheadMissed(c.Name)
			tr = e.newTrace()
			p = e.startPrepare(ctx, w, sc, c, st, tr, claimsOf(ws, c))
		}
	}
	return e.prepared(ctx, ws, w, sc, c, run, tr, p, start)
}

func (e *Engine) preparePhase(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, tr *trace) error {
	return e.prepared(ctx, ws, w, sc, c, run, tr, e.startPrepare(ctx, w, sc, c, nil, tr, claimsOf(ws, c)), nil)
}

// claimsOf is what a consumer's prepare must not take: the events of its
// runs in hand, when it may have several.
func claimsOf(ws *wfState, c sandbox.Consumer) *hand {
	if c.Concurrency > 1 {
		return &ws.hand
	}
	return nil
}

// prepared takes the outcome of prepare and goes on from it: fail, or
// reserve and mutate, or next. start, when not nil, is the run's start
// record still committing: what writes the run waits for it first.
func (e *Engine) prepared(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, tr *trace, p *earlyPrepare, start *startRecord) error {
	p.wait()
	// the mutate phase prepare's worker went on to, if it did: taken below,
	// or left; either way it has ended when this returns
	early := p.mutate
	defer func() { early.wait() }()
	out, err := p.out, p.err
	if errors.Is(err, errReadState) {
		return errors.Join(err, start.wait(run))
	}
	if err != nil {
		if err := start.wait(run); err != nil {
			return err
		}
		return e.failRun(ctx, w, run, err, tr)
	}
	var claimed map[int64]int64
	if h := claimsOf(ws, c); h != nil {
		claimed = h.claimed() // before resolveReservations reads the events
	}
	ids, err := e.resolveReservations(ctx, w, c, out.Prepare, claimed, p.pending)
	if err != nil {
		if err := start.wait(run); err != nil {
			return err
		}
		return e.failRun(ctx, w, run, err, tr)
	}
	run.PrepareResult = out.Prepare.Raw
	// prepared → mutating as mutate starts (chapter 06b): the same
	// transaction unless a pause parks the run at prepared
	parked := len(ids) > 0 && e.parked(ctx, w)
	if len(ids) > 0 && !parked {
		// more may wait: a consumer that reserved something stays due
		ws.markDirty(c.Name)
		if c.Concurrency > 1 && !ws.hand.inHand(run.ID) {
			// concurrent.go: the rest of the run goes on beside the next
			m := early
			early = nil // the rest of the run takes it
			e.handOff(ctx, ws, w, run, ids, func(ctx context.Context, w *storage.Workflow) error {
				if err := start.wait(run); err != nil {
					m.wait()
					return err
				}
				if m == nil {
					m = e.startMutate(ctx, w, sc, c, run)
					defer m.wait()
				}
				return e.mutateEarly(ctx, ws, w, sc, c, run, tr, m, &held{ids: ids})
			})
			return nil
		}
		if err := start.wait(run); err != nil {
			return err
		}
		// overlap.go: mutate runs now — in prepare's worker already, as a
		// rule — and the checkpoint is written with what follows it: the
		// in_flight row when mutate calls a mutator
		if early == nil {
			early = e.startMutate(ctx, w, sc, c, run)
		}
		return e.mutateEarly(ctx, ws, w, sc, c, run, tr, early, &held{ids: ids})
	}
	if err := start.wait(run); err != nil {
		return err
	}
	if done, err := e.checkpoint(ctx, w, run, &held{ids: ids}, tr, false); done || err != nil {
		return err
	}
	if parked {
		ws.markDirty(c.Name)
		return nil // prepared is a checkpoint: resumed from here later
	}
	run.MutationResult = resultNone
	return e.nextPhase(ctx, ws, w, sc, c, run, tr)
}

// held is a consumer run's prepared checkpoint not written yet: its
// reservations. The transition that follows prepare writes it in its own
// transaction (the in_flight row), or checkpoint writes it first. Until
// then a crash leaves the run at preparing, and prepare runs again
// (chapter 16), having reserved nothing.
type held struct{ ids []int64 }

// checkpoint writes the prepared checkpoint h, if any, moving the run on to
// mutating when mutating. A reservation that is no longer possible fails
// the run (done).
func (e *Engine) checkpoint(ctx context.Context, w *storage.Workflow, run *storage.Run, h *held, tr *trace, mutating bool) (done bool, err error) {
	if h == nil {
		return false, nil
	}
	err = e.tPrepared(ctx, w, run, h.ids, mutating, tr)
	if errors.Is(err, storage.ErrNotReservable) {
		return true, e.notReservable(ctx, w, run, err, tr)
	}
	return err != nil, err
}

// notReservable fails a run whose prepared checkpoint could not reserve
// what prepare asked for.
func (e *Engine) notReservable(ctx context.Context, w *storage.Workflow, run *storage.Run, err error, tr *trace) error {
	return e.failRun(ctx, w, run, connectors.Errorf(connectors.Logic, "prepare reserved an event that is not pending: %v", err), tr)
}

// resolveReservations turns PrepareResult.reservations into event ids,
// checking each against the workflow: subscribed topic, existing event,
// pending and unreserved, and not chosen by another run in hand (claimed,
// read before the events). A shortfall fails the run before any side effect.
func (e *Engine) resolveReservations(ctx context.Context, w *storage.Workflow, c sandbox.Consumer, pr *sandbox.PrepareResult, claimed map[int64]int64, known pendingIDs) ([]int64, error) {
	var ids []int64
	seen := map[int64]bool{}
	for _, r := range pr.Reservations {
		if !slices.Contains(c.Subscribe, r.Topic) {
			return nil, connectors.Errorf(connectors.Logic, "prepare reserved events of topic %q, which consumer %q does not subscribe to", r.Topic, c.Name)
		}
		found, err := e.reservable(ctx, w, r, known[r.Topic])
		if err != nil {
			return nil, err
		}
		for _, mid := range r.IDs {
			ev, ok := found[mid]
			switch {
			case !ok:
				return nil, connectors.Errorf(connectors.Logic, "prepare reserved %s/%s, which does not exist", r.Topic, mid)
			case ev.Status != EventPending:
				return nil, connectors.Errorf(connectors.Logic, "prepare reserved %s/%s, which is %s, not pending", r.Topic, mid, ev.Status)
			case ev.ReservedBy != 0:
				return nil, connectors.Errorf(connectors.Logic, "prepare reserved %s/%s, which run %d already holds", r.Topic, mid, ev.ReservedBy)
			case claimed[ev.ID] != 0:
				return nil, connectors.Errorf(connectors.Logic, "prepare reserved %s/%s, which run %d already holds", r.Topic, mid, claimed[ev.ID])
			}
			if !seen[ev.ID] {
				seen[ev.ID] = true
				ids = append(ids, ev.ID)
			}
		}
	}
	return ids, nil
}

// reservable finds the events r names, by message id. Those the step's
// snapshot found pending and unreserved, and handed to prepare (known),
// need no read of their own: the engine is the one writer of its
// workflow's events, and the prepared checkpoint's reservation checks them
// again in its transaction (storage.ErrNotReservable).
func (e *Engine) reservable(ctx context.Context, w *storage.Workflow, r sandbox.Reservation, known map[string]int64) (map[string]*storage.Event, error) {
	found := make(map[string]*storage.Event, len(r.IDs))
	for _, mid := range r.IDs {
		id, ok := known[mid]
		if !ok {
			found = nil
			break
		}
		found[mid] = &storage.Event{ID: id, MessageID: mid, Status: EventPending}
	}
	if found != nil {
		return found, nil
	}
	evs, err := e.db.Read().EventsByMessageIDs(ctx, w.ID, r.Topic, r.IDs)
	if err != nil {
		return nil, err
	}
	found = make(map[string]*storage.Event, len(evs))
	for _, ev := range evs {
		found[ev.MessageID] = ev
	}
	return found, nil
}

// mutatePhase runs mutate; the run is in phase mutating from here on.
func (e *Engine) mutatePhase(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, tr *trace) error {
	if run.Phase == PhasePrepared {
		// resumed from the prepared checkpoint
		if err := e.tMutating(ctx, run); err != nil {
			return err
		}
	}
	return e.mutateEarly(ctx, ws, w, sc, c, run, tr, e.startMutate(ctx, w, sc, c, run), nil)
}

// nextPhase runs next and commits the run.
func (e *Engine) nextPhase(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, tr *trace) error {
	mres := run.MutationResult
	if len(mres) == 0 {
		mres = resultNone
	}
	h, out, err := e.runNext(ctx, w, sc, c, run, mres, tr) // overlap.go: started early, or now
	if err != nil {
		// the run was emitting when next failed (prepared → emitting on empty
		// reservations or no mutation call; mutated → emitting after one)
		if run.Phase == PhasePrepared || run.Phase == PhaseMutating || run.Phase == PhaseMutated {
			run.Phase = PhaseEmitting
		}
		return e.failRun(ctx, w, run, err, tr)
	}
	wake := e.wakeFrom(run.PrepareResult, tr)
	if err := e.tCommitConsumer(ctx, w, run, out, h.pubs, wake, tr); err != nil {
		return err
	}
	e.markSubscribers(ws, sc, h.pubs)
	return nil
}

// wakeFrom reads wakeAt from a prepare result and clamps it to policy; an
// unparsable value is ignored with a warning in the trace.
func (e *Engine) wakeFrom(prepared json.RawMessage, tr *trace) *time.Time {
	var pr struct {
		WakeAt string `json:"wakeAt"`
	}
	if json.Unmarshal(prepared, &pr) != nil || pr.WakeAt == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, pr.WakeAt)
	if err != nil {
		tr.note("prepare", fmt.Sprintf("warning: wakeAt %q is not an ISO 8601 time; ignored", pr.WakeAt))
		return nil
	}
	now := e.now()
	lo, hi := now.Add(e.pol.MinWake), now.Add(e.pol.MaxWake)
	if t.Before(lo) {
		t = lo
	}
	if t.After(hi) {
		t = hi
	}
	return &t
}

// failRun records a failed phase with its class and disposition.
func (e *Engine) failRun(ctx context.Context, w *storage.Workflow, run *storage.Run, cause error, tr *trace) error {
	cl := classify(cause)
	if cl == classParked {
		// shutting down: the run stays active at its phase and is
		// recovered (crashed, then retried) on the next start
		return nil
	}
	run.Error = e.reg.Held().Redact(describe(cause)) // a script's error may carry what it was sent
	if workerDied(cause) {
		cl = e.crashLoop(ctx, w, run)
	}
	tr.note(traceLabel(run), "failed ("+string(cl)+"): "+run.Error)
	return e.tFail(ctx, w, run, cl, tr) // a logic failure's repair follows (ledger.Fail)
}

// traceLabel is the phase a failure is noted under: a producer has one
// phase, "producer", as its calls' trace lines say; the ledger's
// "preparing" of its run is not something it did.
func traceLabel(run *storage.Run) string {
	if run.HandlerType == "producer" {
		return string(sandbox.PhaseProducer)
	}
	return string(run.Phase)
}

// workerDiedText begins the error of a run whose worker process died under
// it (sandbox's worker.death): the one failure crash_limit counts.
const workerDiedText = "the script's worker process died"

// workerDied: cause is the death of the run's own worker. A script runs
// only in a worker, so this, not keep stopping under a run (a restart, a
// kill, a laptop that sleeps: recovery's matter, never counted), is a
// script that may be what kills its process.
func workerDied(cause error) bool {
	var se *sandbox.Error
	return errors.As(cause, &se) && se.Kind == sandbox.ErrResource && strings.HasPrefix(se.Message, workerDiedText)
}

// crashLoop is the class of a run whose worker died: tried again after a
// back-off (a transient failure) until its handler's worker has died
// crash_limit times in a row, then the script's to fix. With crash_limit
// 0 it is the script's at once, as any resource failure.
func (e *Engine) crashLoop(ctx context.Context, w *storage.Workflow, run *storage.Run) class {
	limit := e.pol.CrashLimit
	if limit <= 0 {
		return classLogic
	}
	recent, err := e.db.Read().Runs(ctx, w.ID, 0, 4*limit, run.Handler)
	if err != nil {
		return classLogic
	}
	died := 1 // this run
	for _, r := range recent {
		if r.ID == run.ID || r.Handler != run.Handler { // Runs matches handler names by substring
			continue
		}
		if !strings.Contains(r.Error, workerDiedText) {
			break
		}
		died++
	}
	if died < limit {
		return classTransient
	}
	run.Error = fmt.Sprintf("%s; its worker died the last %d times it ran (the script may be what kills it): fix the script, then keep retry %s",
		run.Error, died, w.Name)
	return classLogic
}

func (e *Engine) backoff(n int) time.Duration {
	d := e.pol.BackoffBase
	for i := 1; i < n && d < e.pol.BackoffMax; i++ {
		d *= 2
	}
	if d > e.pol.BackoffMax {
		d = e.pol.BackoffMax
	}
	// up to 10% jitter, derived from the clock so tests stay deterministic
	// under an injected one
	if j := int64(d / 10); j > 0 {
		d += time.Duration(e.now().UnixNano() % j)
	}
	return d
}

// parked reports whether the run in hand should stop at the checkpoint it
// just reached: the user paused the workflow, or the engine is stopping. The
// run stays active at its phase; resume (or recovery after a stop) carries
// it on from there. Pausing is never a failure.
func (e *Engine) parked(ctx context.Context, w *storage.Workflow) bool {
	if ctx.Err() != nil {
		return true
	}
	if st, ok := e.statuses.Load(w.ID); ok {
		return st.(WorkflowStatus) != WorkflowActive
	}
	cur, err := e.db.Read().WorkflowByID(ctx, w.ID)
	if err != nil {
		return false
	}
	// a move that committed meanwhile has stored the newer status: keep it
	st, _ := e.statuses.LoadOrStore(w.ID, cur.Status)
	return st.(WorkflowStatus) != WorkflowActive
}
