package engine

import (
	"context"
	"encoding/json"

	"keep/connectors"
	"keep/engine/api"
	"keep/storage"
)

// History reads as outcomes, not attempts: a call refused before it was
// sent, or found not to have happened, did nothing, and when a later run
// made the same call again for the same input, the two are one output
// whose attempts are counted — "applied (after 2 attempts)", not "failed"
// beside "applied". A failure no later attempt followed stays a failure.

// sameCall says whether b is another attempt at a's call: the same
// capability on the same target, as the host reads it from the parameters.
func (e *Engine) sameCall(a, b *storage.Mutation) bool {
	return a.Connector == b.Connector && a.Method == b.Method && e.targetOf(a) == e.targetOf(b)
}

// attempts is how often m's call was sent, at least once.
func attempts(m *storage.Mutation) int { return max(m.Attempts, 1) }

// outputsOf folds an input's mutations, oldest first, into its outputs:
// each failed one with a later attempt at the same call is counted in
// that attempt's output instead of standing beside it.
func (e *Engine) outputsOf(ms []*storage.Mutation) []api.OutputView {
	out := []api.OutputView{}
	carried := make([]int, len(ms)) // attempts folded into ms[i] from before
	for i, m := range ms {
		n := carried[i] + attempts(m)
		if m.Status == MutationFailed {
			if j := e.laterAttempt(ms, i); j > 0 {
				carried[j] += n
				continue
			}
		}
		v := e.outputView(m)
		if n > 1 {
			v.Attempts = n
		}
		out = append(out, v)
	}
	return out
}

// laterAttempt is the index of the next mutation after i making ms[i]'s
// call again, or 0 when none does.
func (e *Engine) laterAttempt(ms []*storage.Mutation, i int) int {
	for j := i + 1; j < len(ms); j++ {
		if e.sameCall(ms[i], ms[j]) {
			return j
		}
	}
	return 0
}

// countOutcomes takes out of the failed counts the failures a later
// attempt at the same call followed: keep status counts outcomes, as the
// inputs' outputs show them (outputsOf), not attempts.
func (e *Engine) countOutcomes(ctx context.Context, q storage.Q, workflowID int64, counts map[string]api.OutputCounters) error {
	failed := 0
	for _, c := range counts {
		failed += c.Failed
	}
	if failed == 0 {
		return nil
	}
	retried, err := q.RetriedFailures(ctx, workflowID)
	if err != nil {
		return err
	}
	seen := map[int64]bool{}
	for _, r := range retried {
		m := r.Failed
		if seen[m.ID] || !e.sameCall(m, &storage.Mutation{Connector: m.Connector, Method: m.Method, Params: r.LaterParams}) {
			continue
		}
		seen[m.ID] = true
		if c := counts[m.Connector]; c.Failed > 0 {
			c.Failed--
			counts[m.Connector] = c
		}
	}
	return nil
}

// RunRetried is how a run reads once closed while paused: it waits on
// nothing any more, a new run took its work over (its events went back to
// the queue). The ledger keeps paused:transient (ledger.Ended), chapter
// 16's status of an attempt a new run follows; a listing saying "paused"
// of a run whose retry has settled reads as if it still waited.
const RunRetried RunStatus = "retried"

func shownRunStatus(r *storage.Run) RunStatus {
	if r.ClosedAt != nil && r.Status == RunPausedTransient {
		return RunRetried
	}
	return r.Status
}

func (e *Engine) outputView(m *storage.Mutation) api.OutputView {
	title := m.UITitle
	if title == "" {
		title = m.Connector + "." + m.Method
	}
	return api.OutputView{MutationID: idString(m.ID), Title: title, Status: m.Status, Connector: m.Connector, Method: m.Method,
		Params: m.Params, Preview: e.previewOf(m), Target: e.targetOf(m), UpdatedAt: m.UpdatedAt}
}

// previewOf is m's preview in its connector's words; a method without
// words of its own (an MCP tool) has none, since the JSON the host made of
// its parameters cut at a length is what hid a second key: its arguments,
// each named, are the preview.
func (e *Engine) previewOf(m *storage.Mutation) string {
	if _, meth, err := e.reg.Lookup(m.Connector, m.Method); err == nil && meth.Preview == nil {
		return ""
	}
	return m.Preview
}

// targetOf is what m's call acts on as the host reads it from the actual
// parameters, with the same Scope its grant is decided by, so the person
// sees it beside the title the script chose. Empty when the method has no
// scope (or is no longer registered).
func (e *Engine) targetOf(m *storage.Mutation) string {
	_, meth, err := e.reg.Lookup(m.Connector, m.Method)
	if err != nil || meth.Scope == nil {
		return ""
	}
	var params map[string]any
	if json.Unmarshal(m.Params, &params) != nil {
		return ""
	}
	return connectors.ShownScope(meth.Scope(params), meth.ScopeKind)
}
