package engine

import (
	"context"
	"errors"
	"fmt"

	"keep/connectors"
	"keep/engine/api"
	"keep/engine/ledger"
	"keep/storage"
)

// The user's operations (DESIGN.md §7.1). Each is a call into the
// transitions module, accepted only while the thing it answers waits.

func (e *Engine) workflowByName(ctx context.Context, name string) (*storage.Workflow, error) {
	w, err := e.db.Read().WorkflowByName(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notFoundf("no workflow %q", name)
	}
	return w, err
}

// RunNow queues every producer (chapter 16 "Manual Trigger"): each is made
// due now, durably, so the queue survives this process.
func (e *Engine) RunNow(ctx context.Context, name string) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	if w.Status == WorkflowPaused {
		return refusedf("workflow %s is paused, so its producers would not run: resume it first (keep resume %s)", name, name)
	}
	if w.Status != WorkflowActive {
		return refusedf("workflow %s is %s, so its producers would not run", name, w.Status)
	}
	if w.BlockKind != BlockNone {
		// A blocked workflow runs nothing until the block is answered:
		// queuing its producers would claim what will not happen.
		mutation, err := blockingMutation(ctx, e.db.Read(), w)
		if err != nil {
			return err
		}
		if userClearable(w, mutation) {
			return refusedf("workflow %s is blocked (%s), so its producers would not run: retry it first (keep retry %s@%d)", name, blockWords(w), name, standingBlock(w))
		}
		return refusedf("workflow %s is blocked (%s), so its producers would not run: answer what it waits on first (keep attention)", name, blockWords(w))
	}
	ws := e.state(w.ID)
	if ws.isRunning() {
		return refusedf("workflow %s has a run in progress; try again when it finishes", name)
	}
	if _, err := e.db.Read().ActiveRun(ctx, w.ID); err == nil {
		return refusedf("workflow %s has a run in progress; try again when it finishes", name)
	}
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	now := e.now()
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		// compare-and-set on the status checked above: a pause that
		// committed since makes this a conflict, not a queue on a paused workflow
		if err := e.moveWorkflow(ctx, tx, w, ledger.WRunNow); err != nil {
			return err
		}
		for _, p := range sc.Workflow.Producers {
			if err := tx.SetNextRun(ctx, w.ID, p.Name, &now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for _, p := range sc.Workflow.Producers {
			ws.madeDue("run-now", p.Name)
		}
		ws.poke()
	}
	return err
}

// Pause stops scheduling; the run in hand reaches its next checkpoint and a
// mutation in flight completes. It is never a failure.
func (e *Engine) Pause(ctx context.Context, name string) error {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	cur := new(storage.Workflow) // read in the transaction
	_, err = e.apply(ctx, e.db.Write, cur, func(tx *storage.Tx) (ledger.Decision, error) {
		// the check and the move in one transaction
		r, err := tx.WorkflowByID(ctx, w.ID)
		if err != nil {
			return ledger.Decision{}, err
		}
		*cur = *r
		if cur.Status == WorkflowPaused {
			return ledger.Decision{}, refusedf("workflow %s is already paused", name)
		}
		// the person's answer, recorded with the move it causes
		if err := e.recordAnswer(ctx, tx, cur.ID, "workflow", cur.ID, 0, "pause"); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.MoveWorkflow(ctx, tx, cur, ledger.WPause)
	})
	return err
}

// Resume sets the workflow active again and clears a block the user can
// clear (a give-up after retries, a failure waiting for repair, a refused
// credential the user has since fixed). Approvals and uncertain mutations
// are cleared only by answering them. The check and the moves are one
// transaction. A workflow named with its block (WORKFLOW@N) is resumed
// only while that block stands (answersStanding).
func (e *Engine) Resume(ctx context.Context, workflow string) error {
	a, err := parseWorkflowAnswer(workflow)
	if err != nil {
		return err
	}
	name := a.name
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	var clearable bool
	_, err = e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		cur, err := tx.WorkflowByID(ctx, w.ID)
		if err != nil {
			return ledger.Decision{}, err
		}
		mutation, err := blockingMutation(ctx, tx.Q, cur)
		if err != nil {
			return ledger.Decision{}, err
		}
		if err := a.answersStanding(cur, "resume"); err != nil {
			return ledger.Decision{}, err
		}
		clearable = userClearable(cur, mutation)
		if cur.Status == WorkflowActive && !clearable {
			return ledger.Decision{}, refusedf("workflow %s is not paused and has nothing the user can clear", name)
		}
		// the person's answer, recorded with the moves it causes
		if err := e.recordAnswer(ctx, tx, cur.ID, "workflow", cur.ID, int(standingBlock(cur)), "resume"); err != nil {
			return ledger.Decision{}, err
		}
		if cur.Status != WorkflowActive {
			if err := e.moveWorkflow(ctx, tx, cur, ledger.WResume); err != nil {
				return ledger.Decision{}, err
			}
		}
		if clearable {
			return e.led.Unblock(ctx, tx, cur, "retry", true) // the consumers marked once it commits
		}
		return ledger.Decision{}, nil
	})
	if err != nil {
		return err
	}
	ws := e.state(w.ID)
	if clearable {
		e.notify(api.NoteChanged, w.Name, w.Name+": retrying")
	}
	return e.carryOn(ctx, ws)
}

// Retry answers a blocked workflow: the failed run is retried per the
// disposition rules (forward at emitting after its mutation, else afresh).
// The check and the moves are one transaction. A workflow named with its
// block (WORKFLOW@N) is retried only while that block stands.
func (e *Engine) Retry(ctx context.Context, workflow string) error {
	a, err := parseWorkflowAnswer(workflow)
	if err != nil {
		return err
	}
	name := a.name
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return err
	}
	_, err = e.apply(ctx, e.db.Write, w, func(tx *storage.Tx) (ledger.Decision, error) {
		if err := reread(ctx, tx, w); err != nil {
			return ledger.Decision{}, err
		}
		if err := a.answersStanding(w, "retry"); err != nil {
			return ledger.Decision{}, err
		}
		mutation, err := blockingMutation(ctx, tx.Q, w)
		if err != nil {
			return ledger.Decision{}, err
		}
		if !userClearable(w, mutation) {
			if w.BlockKind == BlockNone {
				return ledger.Decision{}, refusedf("workflow %s is not blocked; nothing to retry", name)
			}
			return ledger.Decision{}, refusedf("workflow %s waits on %s: answer that instead (keep attention)", name, w.BlockKind)
		}
		// the person's answer, recorded with the moves it causes
		if err := e.recordAnswer(ctx, tx, w.ID, "workflow", w.ID, int(standingBlock(w)), "retry"); err != nil {
			return ledger.Decision{}, err
		}
		return e.led.Unblock(ctx, tx, w, "retry", true) // the consumers marked once it commits
	})
	if err != nil {
		return err
	}
	ws := e.state(w.ID)
	e.notify(api.NoteChanged, w.Name, w.Name+": retrying")
	return e.carryOn(ctx, ws)
}

// Approve performs a mutation waiting for approval: the host makes the
// captured call; mutate is not run again. Without always it covers this
// call only; always also allows, from now on, calls in the scope the
// approval showed (AttentionItem.Scope), and releases the calls already
// waiting that this allows.
func (e *Engine) Approve(ctx context.Context, id string, always bool) error {
	answer := "approve"
	if always {
		answer = "approve-always"
	}
	return e.answered(ctx, id, answer, func(tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) error {
		return e.tApprove(ctx, tx, w, m, always, false)
	})
}

// ApproveWide is Approve with always, asked wider: from now on it allows
// what the grant that decided the call covers, or the whole capability
// when no grant did, not only the call's scope.
func (e *Engine) ApproveWide(ctx context.Context, id string) error {
	return e.answered(ctx, id, "approve-always-wide", func(tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) error {
		return e.tApprove(ctx, tx, w, m, true, true)
	})
}

// Reject skips a mutation waiting for approval: next gets {status:'skipped'}
// and the run's events become skipped.
func (e *Engine) Reject(ctx context.Context, id string) error {
	return e.answered(ctx, id, "reject", func(tx *storage.Tx, w *storage.Workflow, m *storage.Mutation) error {
		return e.tReject(ctx, tx, w, m)
	})
}

func (e *Engine) answered(ctx context.Context, id, answer string, fn func(*storage.Tx, *storage.Workflow, *storage.Mutation) error) error {
	mid, attempt, err := parseAnswerID(id)
	if err != nil {
		return err
	}
	w, err := e.tAnswerApproval(ctx, mid, attempt, answer, fn)
	if err != nil {
		return err
	}
	return e.carryOn(ctx, e.state(w.ID))
}

// Resolve answers an uncertain mutation (needs_reconcile or indeterminate).
func (e *Engine) Resolve(ctx context.Context, id string, answer api.Answer) error {
	mid, attempt, err := parseAnswerID(id)
	if err != nil {
		return err
	}
	switch answer {
	case api.TryAgain, api.Happened, api.NotHappened, api.SkipIt:
	default:
		return fmt.Errorf("unknown answer %q: use try-again, happened, not-happened or skip", answer)
	}
	w, err := e.tResolve(ctx, mid, attempt, answer)
	if err != nil {
		return err
	}
	return e.carryOn(ctx, e.state(w.ID)) // a resend's consumers marked (ledger.Recheck)
}

// SkipEvents marks pending, unreserved events skipped.
func (e *Engine) SkipEvents(ctx context.Context, ids []string) error {
	var evIDs []int64
	wfs := map[int64]*wfState{}
	for _, s := range ids {
		id, err := parseID("event", s)
		if err != nil {
			return err
		}
		evIDs = append(evIDs, id)
		ev, err := e.db.Read().EventByID(ctx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return notFoundf("no event %d", id)
		}
		if err != nil {
			return err
		}
		wfs[ev.WorkflowID] = e.state(ev.WorkflowID)
	}
	var names []string
	err := whileIdle(wfs, func() error {
		var err error
		names, err = e.tSkipEvents(ctx, evIDs)
		return err
	})
	for _, n := range names {
		e.notify(api.NoteChanged, n, "events skipped")
	}
	return err
}

// SkipInput skips an input and the work it caused (DESIGN.md §7.1): its
// pending events become skipped; a run holding one that has not mutated is
// abandoned and its other events released; work past its mutation completes.
func (e *Engine) SkipInput(ctx context.Context, id string) error {
	iid, err := parseID("input", id)
	if err != nil {
		return err
	}
	in, err := e.db.Read().InputByID(ctx, iid)
	if errors.Is(err, storage.ErrNotFound) {
		return notFoundf("no input %s", id)
	}
	if err != nil {
		return err
	}
	if in.SkippedAt != nil {
		return refusedf("input %s is already skipped", id)
	}
	ws := e.state(in.WorkflowID)
	var w *storage.Workflow
	err = whileIdle(map[int64]*wfState{in.WorkflowID: ws}, func() error {
		var err error
		w, err = e.tSkipInput(ctx, in) // the consumers marked once it commits
		return err
	})
	if err != nil {
		return err
	}
	e.notify(api.NoteChanged, w.Name, "input skipped: "+in.Title)
	ws.poke()
	return nil
}

// whileIdle runs fn while no run of these workflows is under way, holding
// their steps so that none starts meanwhile; while one is, it refuses. A
// skip changes what a prepare may have read: landing under one, it would
// make that prepare reserve what the person skipped, and fail as if the
// script were wrong (a logic failure, a repair asked for).
func whileIdle(wfs map[int64]*wfState, fn func() error) error {
	for _, ws := range wfs {
		if !ws.stepMu.TryLock() {
			return errInProgress
		}
		defer ws.stepMu.Unlock()
		if ws.hand.count() > 0 {
			return errInProgress
		}
	}
	return fn()
}

var errInProgress = refusedf("a run of this workflow is in progress; try again in a moment")

// Grant sets a workflow's grant for a capability (DESIGN.md §7.4), and
// releases the calls already waiting for approval that it allows.
func (e *Engine) Grant(ctx context.Context, name string, g api.GrantView) error {
	_, err := e.GrantReleasing(ctx, name, g)
	return err
}

// GrantReleasing is Grant saying how many waiting approvals the grant
// released (performed as if approved).
func (e *Engine) GrantReleasing(ctx context.Context, name string, g api.GrantView) (released int, err error) {
	w, err := e.workflowByName(ctx, name)
	if err != nil {
		return 0, err
	}
	// an MCP tool's capability is mcp.NAME.TOOL, of connector mcp.NAME,
	// and TOOL may hold dots
	conn, meth, ok := e.reg.Capability(g.Capability)
	if !ok {
		return 0, fmt.Errorf("capability %q: write it as connector.method, e.g. files.write", g.Capability)
	}
	_, m, err := e.reg.Lookup(conn, meth)
	if err != nil {
		return 0, fmt.Errorf("capability %q: %v", g.Capability, err)
	}
	if m.Kind != connectors.Mutate {
		return 0, fmt.Errorf("capability %q is a read; reads of configured accounts are allowed by default", g.Capability)
	}
	if g.Mode == "" {
		g.Mode = GrantAllow
	}
	switch g.Mode {
	case GrantAllow, GrantAsk, GrantDeny:
	default:
		return 0, fmt.Errorf("mode %q: use allow, ask or deny", g.Mode)
	}
	if g.DailyLimit < 0 {
		return 0, fmt.Errorf("daily limit %d may not be negative", g.DailyLimit)
	}
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		if err := tx.PutGrant(ctx, storage.Grant{WorkflowID: w.ID, Capability: g.Capability, Scope: g.Scope, Mode: g.Mode, DailyLimit: g.DailyLimit}, e.now()); err != nil {
			return err
		}
		// the block the released runs held may have moved: read w afresh
		wt, err := tx.WorkflowByID(ctx, w.ID)
		if err != nil {
			return err
		}
		released, err = e.releaseAllowed(ctx, tx, wt)
		return err
	})
	if err != nil {
		return 0, err
	}
	text := "grant " + g.Capability + " " + string(g.Mode)
	if released > 0 {
		text += "; " + ReleasedWords(released)
	}
	e.notify(api.NoteChanged, name, text)
	if released > 0 {
		return released, e.carryOn(ctx, e.state(w.ID))
	}
	return 0, nil
}

// Say tells every front end something about keep itself (a config
// reloaded or refused): the TUI shows it in its status line.
func (e *Engine) Say(text string) { e.notify(api.NoteChanged, "", text) }

// ReleasedWords says how many waiting approvals a grant released.
func ReleasedWords(n int) string {
	if n == 1 {
		return "released 1 waiting approval"
	}
	return fmt.Sprintf("released %d waiting approvals", n)
}

// blockWords is a block as a refusal names it: its kind and reason.
func blockWords(w *storage.Workflow) string {
	if w.BlockReason == "" {
		return string(w.BlockKind)
	}
	return string(w.BlockKind) + ": " + w.BlockReason
}
