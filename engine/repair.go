package engine

import (
	"context"
	"fmt"

	"keep/engine/api"
	"keep/storage"
)

// repairTraceLines is how much of the failing run's trace a repairer sees.
const repairTraceLines = 40

// triggerRepair is the trigger of a run retried after a repair, and the
// origin of the script version the repair made.
const triggerRepair = "repair"

// maybeRepair hands a logic failure to the repairer, within its budget of
// repairs in a row; past it, or without a repairer, the failure stays with
// the user (the block set by the failure says so). What the repairer
// answers is only a proposal: the workflow stays blocked on the failed run
// until the person accepts it (proposal.go) or answers the run.
func (e *Engine) maybeRepair(ctx context.Context, w *storage.Workflow, run *storage.Run) {
	if e.repair == nil {
		return
	}
	fresh, err := e.db.Read().WorkflowByID(ctx, w.ID)
	if err != nil || fresh.BlockKind != BlockRepair || fresh.BlockRunID != run.ID {
		return
	}
	w = fresh
	if w.Repairs >= e.pol.Repairs {
		e.repairFailed(ctx, w, fmt.Sprintf("%d repairs in a row did not fix it", w.Repairs))
		return
	}
	if err := e.repairRun(ctx, w, run); err != nil {
		e.log.Warn("repair failed", "workflow", w.Name, "run", run.ID, "err", err)
		e.repairFailed(ctx, w, "repair failed: "+err.Error())
	}
}

func (e *Engine) repairFailed(ctx context.Context, w *storage.Workflow, why string) {
	if err := e.tRepairFailed(ctx, w, why); err != nil {
		e.log.Error("recording a failed repair", "workflow", w.Name, "err", err)
	}
	e.notify(api.NoteNeedsAttention, w.Name, w.Name+": "+why)
}

// tRepairFailed leaves the failure with the user, saying why no repair came.
// w is the workflow as the repair found it: a block the user has answered
// meanwhile is left as it is now.
func (e *Engine) tRepairFailed(ctx context.Context, w *storage.Workflow, why string) error {
	kind, runID := w.BlockKind, w.BlockRunID
	return e.db.Write(ctx, func(tx *storage.Tx) error {
		if err := reread(ctx, tx, w); err != nil {
			return err
		}
		if w.BlockKind != kind || w.BlockRunID != runID {
			return nil
		}
		return e.setBlock(ctx, tx, w, BlockRepair, w.BlockReason+" ("+why+")", w.BlockRunID, nil)
	})
}

func (e *Engine) repairRun(ctx context.Context, w *storage.Workflow, run *storage.Run) error {
	q := e.db.Read()
	cur, err := q.ScriptVersion(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	entries, err := q.Trace(ctx, run.ID)
	if err != nil {
		return err
	}
	f := FailedRun{RunID: run.ID, Workflow: w.Name, FileName: cur.FileName, Script: cur.Source, Error: run.Error,
		Handler: run.Handler, Phase: phaseOfFailure(run, entries)}
	for _, t := range entries[max(0, len(entries)-repairTraceLines):] {
		f.Trace = append(f.Trace, traceText(t))
	}
	view, err := e.repair.Repair(ctx, e, f)
	if err != nil {
		return err
	}
	if view.Status == api.ProposalRefused {
		e.repairFailed(ctx, w, "a repair was refused: "+view.Why)
		return nil
	}
	e.repairFailed(ctx, w, fmt.Sprintf("a repair is proposed: keep approve %s, or keep reject %s", view.ID, view.ID))
	return nil
}

// phaseOfFailure names the handler phase that failed, from the trace's last
// entry (the failure note) or the run's phase.
func phaseOfFailure(run *storage.Run, entries []storage.TraceEntry) string {
	if n := len(entries); n > 0 && entries[n-1].Phase != "" {
		return entries[n-1].Phase
	}
	if run.HandlerType == "producer" {
		return "producer"
	}
	return string(run.Phase)
}

func traceText(t storage.TraceEntry) string {
	switch t.Kind {
	case "call":
		s := fmt.Sprintf("[%s] %s.%s(%s) → %s", t.Phase, t.Connector, t.Method, t.Args, t.Result)
		if t.Error != "" {
			s += " error: " + t.Error
		}
		return s
	case "log":
		return fmt.Sprintf("[%s] console.%s: %s", t.Phase, t.Method, t.Result)
	}
	return fmt.Sprintf("[%s] %s", t.Phase, t.Result)
}
