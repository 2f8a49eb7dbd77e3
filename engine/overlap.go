package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"keep/sandbox"
	"keep/storage"
)

// earlyPrepare is a consumer's prepare phase, started while the run's
// start record commits: prepare only reads, and the engine is the one
// writer of its workflow, so what it reads is what it would read after.
type earlyPrepare struct {
	done chan struct{}
	out  *sandbox.Outcome
	err  error
	// mutate is the mutate phase the prepare's worker went on to, in the
	// same job, once prepare reserved something (sandbox.RunThen); nil
	// when it did not. Set before done closes.
	mutate *earlyMutate
	// pending: the ids of the events the prepare was handed (knownState)
	pending pendingIDs
}

// errReadState: the handler's state could not be read; the run is not
// failed for it, the error is keep's.
var errReadState = errors.New("reading the handler's state")

// knownState is a handler's state read before its run starts, in the
// scheduler step's snapshot; its state is nil when the handler has none.
// prefetch, for a consumer, is what its prepare's peeks find in the same
// snapshot (host.Prefetch); nil when it could not be read.
type knownState struct {
	state    []byte
	prefetch map[string][]sandbox.Event
	// pending are the prefetched events' ids: what the prepare reserves of
	// them needs no read of its own (resolveReservations)
	pending pendingIDs
	// following, of a concurrent consumer of one topic: the events after
	// those prefetched, what the next run's prepare is offered if this one
	// reserves what it is (ahead.go); of followingTopic
	following      []*storage.Event
	followingTopic string
}

// startPrepare starts c's prepare phase with the handler's state given, or
// read first when st is nil; its log lines go to tr.
func (e *Engine) startPrepare(ctx context.Context, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, st *knownState, tr *trace, claims *hand) *earlyPrepare {
	p, _ := e.startPrepareWith(ctx, w, sc, c, st, tr, claims, nil)
	return p
}

// startPrepareWith is startPrepare that also returns the prepare's host
// (what it read), and calls ended, if not nil, once the job is over,
// mutate included.
func (e *Engine) startPrepareWith(ctx context.Context, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, st *knownState, tr *trace, claims *hand, ended func()) (*earlyPrepare, *host) {
	p := &earlyPrepare{done: make(chan struct{})}
	if st != nil {
		p.pending = st.pending
	}
	h := &host{e: e, wf: w, phase: sandbox.PhasePrepare, subscribe: c.Subscribe, tr: tr, claims: claims}
	sandbox.Go(func() {
		if ended != nil {
			defer ended()
		}
		if st == nil {
			state, err := e.db.Read().HandlerState(ctx, w.ID, c.Name)
			if err != nil {
				p.err = fmt.Errorf("%w: %w", errReadState, err)
				close(p.done)
				return
			}
			st = &knownState{state: state}
		}
		h.prefetched = st.prefetch
		m := &earlyMutate{done: make(chan struct{}), tr: e.newTrace()}
		mh := &host{e: e, wf: w, phase: sandbox.PhaseMutate, tr: m.tr}
		defer close(m.done)
		defer e.phaseSlot(ctx, w.ID, c)() // prepare and the mutate it goes on to: one worker
		m.out, _, m.err = sc.RunThen(ctx, e.invocation(c.Name, sandbox.PhasePrepare, h, st.state, nil, nil),
			e.invocation(c.Name, sandbox.PhaseMutate, mh, nil, nil, nil),
			func(out *sandbox.Outcome, err error, then bool) {
				p.out, p.err = out, err
				if then {
					p.mutate = m // the worker runs it now
				}
				close(p.done)
			})
	})
	return p, h
}

func (p *earlyPrepare) wait() { <-p.done }

// earlyMutate is a consumer's mutate phase started as soon as prepare has
// returned, before its prepared checkpoint is written: the checkpoint goes
// into the same transaction as the in_flight row the phase leads to.
// Nothing of the phase is seen before then: mutate reads nothing and its
// one mutation call is only captured (the call is made after the in_flight
// commit, as ever), and its log lines go to a trace of its own that joins
// the run's. A failed checkpoint drops it, and mutate runs again when the
// run goes on.
type earlyMutate struct {
	done chan struct{}
	tr   *trace
	out  *sandbox.Outcome
	err  error
}

// startMutate starts the mutate phase of run, prepared but not yet recorded.
// Its caller waits for it (wait) before returning, whatever happens.
func (e *Engine) startMutate(ctx context.Context, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run) *earlyMutate {
	m := &earlyMutate{done: make(chan struct{}), tr: e.newTrace()}
	h := &host{e: e, wf: w, phase: sandbox.PhaseMutate, tr: m.tr}
	inv := e.invocation(c.Name, sandbox.PhaseMutate, h, nil, run.PrepareResult, nil)
	sandbox.Go(func() {
		defer close(m.done)
		defer e.phaseSlot(ctx, w.ID, c)()
		m.out, m.err = sc.Run(ctx, inv)
	})
	return m
}

// wait blocks until the phase is over; nil waits for nothing.
func (m *earlyMutate) wait() {
	if m != nil {
		<-m.done
	}
}

// mutateEarly takes the outcome of a mutate phase started earlier and goes
// on from it: fail, next, or the mutation. h is the prepared checkpoint
// still held (nil when the run resumed from it): the mutation's in_flight
// row takes it along; anything else writes it first.
func (e *Engine) mutateEarly(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, tr *trace, m *earlyMutate, h *held) error {
	m.wait()
	tr.merge(m.tr)
	if m.err == nil && m.out.Mutation != nil {
		return e.startMutation(ctx, ws, w, run, m.out.Mutation, tr, h)
	}
	if done, err := e.checkpoint(ctx, w, run, h, tr, true); done || err != nil {
		return err
	}
	if m.err != nil {
		return e.failRun(ctx, w, run, m.err, tr)
	}
	run.MutationResult = resultNone
	return e.nextPhase(ctx, ws, w, sc, c, run, tr)
}

// earlyNext is a consumer's next phase started, once the mutation applied,
// while the outcome commits: next depends on the prepared data and the
// mutation result only, and what it publishes is buffered until the run
// commits, after the outcome. nextPhase takes it when it was started for the
// same run and the same mutation result; otherwise it is dropped.
type earlyNext struct {
	done chan struct{}
	h    *host
	mres json.RawMessage
	out  *sandbox.Outcome
	err  error
}

// earlyNexts holds the next phase started for a run (its *storage.Run) until
// nextPhase takes it or perform returns.
var earlyNexts sync.Map

// startNext starts run's next phase with mres as the mutation result, if
// the run's script and consumer are at hand. The returned function waits
// for the phase and forgets it; the caller defers it.
func (e *Engine) startNext(ctx context.Context, w *storage.Workflow, run *storage.Run, mres json.RawMessage) func() {
	sc, err := e.script(ctx, w.ID, run.ScriptVersion)
	if err != nil {
		return func() {}
	}
	c, ok := consumerNamed(sc, run.Handler)
	if !ok || c.EmptyNext {
		return func() {} // an empty next is not run (runNext)
	}
	n := &earlyNext{done: make(chan struct{}), mres: mres,
		h: &host{e: e, wf: w, phase: sandbox.PhaseNext, publishes: c.Publishes, tr: e.newTrace()}}
	inv := e.invocation(c.Name, sandbox.PhaseNext, n.h, nil, run.PrepareResult, mres)
	earlyNexts.Store(run, n)
	sandbox.Go(func() {
		defer close(n.done)
		defer e.phaseSlot(ctx, w.ID, c)()
		n.out, n.err = sc.Run(ctx, inv)
	})
	return func() {
		<-n.done
		earlyNexts.CompareAndDelete(run, n)
	}
}

// runNext runs run's next phase, or takes the one started early when it ran
// with the same mutation result; its trace joins tr.
func (e *Engine) runNext(ctx context.Context, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, mres json.RawMessage, tr *trace) (*host, *sandbox.Outcome, error) {
	if v, ok := earlyNexts.LoadAndDelete(run); ok {
		n := v.(*earlyNext)
		<-n.done
		if bytes.Equal(n.mres, mres) {
			tr.merge(n.h.tr)
			n.h.tr = tr
			return n.h, n.out, n.err
		}
	}
	h := &host{e: e, wf: w, phase: sandbox.PhaseNext, publishes: c.Publishes, tr: tr}
	if c.EmptyNext {
		// sandbox/noop.go: what it would return without running it
		return h, &sandbox.Outcome{}, nil
	}
	defer e.phaseSlot(ctx, w.ID, c)()
	out, err := sc.Run(ctx, e.invocation(c.Name, sandbox.PhaseNext, h, nil, run.PrepareResult, mres))
	return h, out, err
}
