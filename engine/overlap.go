package engine

import (
	"context"

	"keep/sandbox"
	"keep/storage"
)

// earlyMutate is a consumer's mutate phase started while its prepared
// checkpoint commits, so the phase runs on one core while the commit waits
// for the disk. Nothing of it is seen before the checkpoint is durable:
// mutate reads nothing and its one mutation call is only captured (the call
// is made after the in_flight commit, as ever), and its log lines go to a
// trace of its own that joins the run's after the checkpoint. A failed
// checkpoint or a parked run drops it, and mutate runs again when the run
// goes on.
type earlyMutate struct {
	done chan struct{}
	tr   *trace
	out  *sandbox.Outcome
	err  error
}

// startMutate starts the mutate phase of run, prepared but not yet recorded.
// Its caller waits for it (wait) before returning, whatever happens.
func (e *Engine) startMutate(ctx context.Context, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run) *earlyMutate {
	m := &earlyMutate{done: make(chan struct{}), tr: &trace{now: e.now}}
	h := &host{e: e, wf: w, phase: sandbox.PhaseMutate, tr: m.tr}
	inv := e.invocation(c.Name, sandbox.PhaseMutate, h, nil, run.PrepareResult, nil)
	go func() {
		defer close(m.done)
		m.out, m.err = sc.Run(ctx, inv)
	}()
	return m
}

// wait blocks until the phase is over; nil waits for nothing.
func (m *earlyMutate) wait() {
	if m != nil {
		<-m.done
	}
}

// mutateEarly takes the outcome of a mutate phase started earlier and goes
// on from it: fail, next, or the mutation.
func (e *Engine) mutateEarly(ctx context.Context, ws *wfState, w *storage.Workflow, sc *sandbox.Script, c sandbox.Consumer, run *storage.Run, tr *trace, m *earlyMutate) error {
	m.wait()
	tr.entries = append(tr.entries, m.tr.entries...)
	if m.err != nil {
		return e.failRun(ctx, w, run, m.err, tr)
	}
	if m.out.Mutation == nil {
		run.MutationResult = resultNone
		return e.nextPhase(ctx, ws, w, sc, c, run, tr)
	}
	return e.startMutation(ctx, ws, w, run, m.out.Mutation, tr)
}
