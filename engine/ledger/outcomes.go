package ledger

// The outcome map (DESIGN.md §6 "Outcomes"): what a mutation's call did,
// as the class of its error, decides the mutation's move, the run's status,
// the workflow's block, and what else follows — one row per (class, are the
// same call's retries spent), beside the machines' tables in moves.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"keep/connectors"
	"keep/storage"
)

// CallOutcome is a row's key: the class of the call's error ("" for a call
// that succeeded) and whether the same call has been sent as often as the
// policy allows (only a transient failure asks).
type CallOutcome struct {
	Class connectors.Class
	Spent bool
}

// Wait is when the mutation is looked at next.
type Wait int

const (
	WaitNone       Wait = iota // settled, or the user's
	WaitFirstCheck             // the reconciler checks after one back-off step
	WaitResend                 // the same call is sent again after a back-off (or the service's Retry-After)
)

// OutcomeRule is what a row decides.
type OutcomeRule struct {
	Event MutationEvent     // the mutation's move from in_flight
	Run   storage.RunStatus // the run's status after it
	Phase storage.Phase     // the run's phase after it ("": unchanged)
	Block storage.BlockKind // the workflow's block ("": none is set; the run goes on)
	Wait  Wait
	// Release: the run's events go back to the queue (nothing was done:
	// a fresh run prepares again).
	Release bool
	// Journal is the bus event journaled for it ("": none).
	Journal string
	// Class is the failure's class, where it is a failure of the run.
	Class Class
	// Repair: the repairer is asked for a fix once it commits.
	Repair bool
}

// refusal is the row of a definite refusal of class c: nothing was done.
func refusal(c Class) OutcomeRule {
	return OutcomeRule{Event: MFailed, Run: c.RunStatus(), Block: c.BlockKind(), Release: true, Journal: "run.failed",
		Class: c, Repair: c == ClassLogic}
}

// uncertain: it may have reached the other side, so it is never "failed":
// the reconciler asks the connector. The first check waits one back-off
// step: a service may need a moment before what it did shows (mail filed
// late).
var uncertain = OutcomeRule{Event: MUncertain, Run: storage.RunPausedReconciliation, Block: storage.BlockReconciliation,
	Wait: WaitFirstCheck, Journal: "mutation.needs_reconcile"}

// outcomeRules is the outcome map. A class not in it is refused.
var outcomeRules = map[CallOutcome]OutcomeRule{
	// applied: the run goes straight on
	{"", false}:                   {Event: MApplied, Run: storage.RunActive, Phase: storage.PhaseMutated},
	{"", true}:                    {Event: MApplied, Run: storage.RunActive, Phase: storage.PhaseMutated},
	{connectors.Uncertain, false}: uncertain,
	{connectors.Uncertain, true}:  uncertain,
	// a bug of ours mid-call: it may have happened too
	{connectors.Internal, false}: uncertain,
	{connectors.Internal, true}:  uncertain,
	// the service said "not now" (429, 503), or the call never reached it
	// (a refused connection: nothing done): the same call, with the same
	// key, after a back-off — a retry, not a failure. The row stays in
	// flight with its next attempt set, known not sent, so a restart
	// meanwhile sends it again rather than reconciling it.
	{connectors.Transient, false}: {Event: MRetryLater, Run: storage.RunPausedTransient, Block: storage.BlockTransient,
		Wait: WaitResend},
	// until the limit: then it failed, nothing done, and waits for the user
	{connectors.Transient, true}: {Event: MFailed, Run: storage.RunPausedTransient, Block: storage.BlockTransient,
		Release: true},
	{connectors.Logic, false}:      refusal(ClassLogic),
	{connectors.Logic, true}:       refusal(ClassLogic),
	{connectors.Auth, false}:       refusal(ClassAuth),
	{connectors.Auth, true}:        refusal(ClassAuth),
	{connectors.Permission, false}: refusal(ClassPermission),
	{connectors.Permission, true}:  refusal(ClassPermission),
}

// Outcome is the outcome map's row for o.
func Outcome(o CallOutcome) (OutcomeRule, error) {
	r, ok := outcomeRules[o]
	if !ok {
		return OutcomeRule{}, fmt.Errorf("%w: no outcome for a call of class %q", ErrRefused, o.Class)
	}
	return r, nil
}

// Call is what a mutation's call did.
type Call struct {
	Result json.RawMessage // its result, when it succeeded
	Err    error
}

// Retry is the policy's part in an outcome: how often the same call may be
// sent, and the back-offs, computed by the engine's policy for this call.
type Retry struct {
	Limit      int           // sends beyond this many are spent
	FirstCheck time.Duration // before the first check of an uncertain call
	Resend     time.Duration // before the same call is sent again
}

// AppliedResult is what a run's mutate step sees of an applied call.
func AppliedResult(result json.RawMessage) json.RawMessage {
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	return json.RawMessage(`{"status":"applied","result":` + string(result) + `}`)
}

// RecordOutcome records what mut's call did (its row of the outcome map),
// in tx: the block, the release of the run's events and the journal first
// (a block's meaning is read from the mutation as it was before the call's
// outcome), then the mutation's move and the run's. w must have been read
// in tx when the call failed (a block follows). The decision asks for the
// repairer where the row says so.
func (l *Ledger) RecordOutcome(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, call Call, p Retry) (Decision, error) {
	return l.recordOutcome(ctx, tx, w, run, mut, call, p, true)
}

// RecordOutcomeUnwritten is RecordOutcome for a caller that moves the run
// again in the same transaction (the engine's applied-and-committed
// commit): a move of the run that changes only its phase is checked and
// made in memory, run.Via remembers it, and the caller's next move
// (MoveRun) writes both in one update of the row. A move that changes the
// run's status (a block, a failure: announced) is written here, as
// RecordOutcome writes it.
func (l *Ledger) RecordOutcomeUnwritten(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, call Call, p Retry) (Decision, error) {
	return l.recordOutcome(ctx, tx, w, run, mut, call, p, false)
}

func (l *Ledger) recordOutcome(ctx context.Context, tx *storage.Tx, w *storage.Workflow, run *storage.Run, mut *storage.Mutation, call Call, p Retry, writeRun bool) (Decision, error) {
	var d Decision
	now := l.now()
	behind := false // waitsBehind: the refusal cannot take the block now
	cls := connectors.ClassOf(call.Err)
	rule, err := Outcome(CallOutcome{Class: cls, Spent: cls != "" && mut.Attempts > p.Limit})
	if err != nil {
		return d, fmt.Errorf("mutation %d: %w", mut.ID, err)
	}
	block := func(reason string, retryAt *time.Time) error {
		b, err := l.MoveBlock(ctx, tx, w, rule.Block, reason, run.ID, retryAt)
		d.add(b)
		return err
	}
	if cls == "" {
		mut.Error, mut.Result = "", call.Result
	} else {
		mut.Error = call.Err.Error()
	}
	mut.NextAttemptAt = nil
	if rule.Release {
		if _, err := tx.Release(ctx, run.ID, now); err != nil {
			return d, err
		}
	}
	switch {
	case rule.Event == MApplied:
		run.MutationResult = AppliedResult(mut.Result)
	case rule.Wait == WaitFirstCheck:
		first := now.Add(p.FirstCheck)
		mut.NextAttemptAt = &first
		if err := block("checking whether "+Title(mut)+" happened", nil); err != nil {
			return d, err
		}
	case rule.Wait == WaitResend:
		delay := p.Resend
		var ce *connectors.Error
		if errors.As(call.Err, &ce) && ce.RetryAfter > delay {
			delay = ce.RetryAfter
		}
		t := now.Add(delay)
		mut.NextAttemptAt = &t
		run.Error = mut.Error
		if err := block("will send "+Title(mut)+" again: "+mut.Error, &t); err != nil {
			return d, err
		}
	case cls == connectors.Transient: // the same call's retries spent
		mut.Error = fmt.Sprintf("gave up after %d attempts: %s", mut.Attempts, mut.Error)
		run.Error = mut.Error
		if err := block(run.Handler+": "+mut.Error, nil); err != nil {
			return d, err
		}
	default: // a definite refusal, nothing done
		if behind, err = waitsBehind(ctx, tx, w, run, rule.Class); err != nil {
			return d, err
		}
		run.Error = fmt.Sprintf("%s.%s refused: %s", mut.Connector, mut.Method, call.Err)
		if err := block(run.Handler+": "+run.Error, nil); err != nil {
			return d, err
		}
	}
	switch rule.Journal {
	case "mutation.needs_reconcile":
		d.journal(rule.Journal, map[string]any{"run": run.ID, "mutation": mut.ID, "error": mut.Error})
	case "run.failed":
		d.journal(rule.Journal, map[string]any{"run": run.ID, "mutation": mut.ID, "error": run.Error, "class": string(rule.Class)})
	}
	m, err := l.MoveMutation(ctx, tx, w, mut, rule.Event, "host")
	d.add(m)
	if err != nil {
		return d, err
	}
	run.Status = rule.Run
	if rule.Phase != "" {
		run.Phase = rule.Phase
	}
	if behind {
		run.ClosedAt = &now
		Ended(run)
	}
	if !writeRun && run.Status == run.Was.Status && run.Via == (storage.RunState{}) && !rule.Repair {
		if err := CheckRunMove(run.Was.Status, run.Was.Phase, run.Status, run.Phase); err != nil {
			return d, fmt.Errorf("run %d: %w", run.ID, err)
		}
		run.UpdatedAt, run.MovedBy = l.now(), ByScheduler
		run.Via = storage.RunState{Status: run.Status, Phase: run.Phase}
		return d, nil
	}
	r, err := l.MoveRun(ctx, tx, w, run, ByScheduler, "")
	d.add(r)
	if rule.Repair {
		d.Repair = run
	}
	return d, err
}
