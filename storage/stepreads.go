package storage

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
)

// The scheduler's step and a call's check each read what they decide on
// in one statement: one row set, tagged by the table each row comes from,
// where separate queries cost a statement (and SQLite's per-statement
// setup) each on every item. The branches of a UNION ALL are read in
// order, in one state of the database; each branch keeps its own index.
// The rows' order is put right in Go: an ORDER BY over the compound would
// sort it in a temporary b-tree.

// StepReads is what the scheduler's step reads to decide what is due: the
// workflow, its handlers' schedules and its active runs.
type StepReads struct {
	Workflow  *Workflow
	Schedules []Schedule     // by handler
	Active    []ActiveRunRef // oldest first
}

// stepReads lines the three up in the workflow's columns: a schedule's
// handler in name, its type in status, next_run_at in block_run_id, unrun
// in version, wake_at in retry_at; an active run's id and handler in id
// and name.
const stepReads = `SELECT 0, ` + workflowCols + ` FROM workflows WHERE id = ?1
	UNION ALL SELECT 1, workflow_id, handler, handler_type, '', '', next_run_at, unrun, 0, wake_at, 0, 0, 0, 0, NULL
		FROM schedules WHERE workflow_id = ?1
	UNION ALL SELECT 2, id, handler, '', '', '', NULL, 0, 0, NULL, 0, 0, 0, 0, NULL FROM runs INDEXED BY runs_open
		WHERE workflow_id = ?1 AND closed_at IS NULL AND status = 'active'`

// StepReads reads the workflow with id, its schedules and its active runs
// in one statement; ErrNotFound when there is no such workflow.
func (q Q) StepReads(ctx context.Context, id int64) (StepReads, error) {
	var out StepReads
	rows, err := q.q.QueryContext(ctx, stepReads, id)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind int
		var w Workflow
		var blockRun, retryAt, blockedAt sql.NullInt64
		var created, updated int64
		if err := rows.Scan(&kind, &w.ID, &w.Name, &w.Status, &w.BlockKind, &w.BlockReason, &blockRun, &w.Version,
			&w.TransientFailures, &retryAt, &w.Repairs, &created, &updated, &w.BlockSeq, &blockedAt); err != nil {
			return out, err
		}
		switch kind {
		case 0:
			w.BlockRunID = blockRun.Int64
			w.BlockedAt = fromNullMS(blockedAt)
			w.RetryAt = fromNullMS(retryAt)
			w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
			out.Workflow = &w
		case 1:
			out.Schedules = append(out.Schedules, Schedule{WorkflowID: w.ID, Handler: w.Name, HandlerType: string(w.Status),
				NextRunAt: fromNullMS(blockRun), WakeAt: fromNullMS(retryAt), Unrun: w.Version != 0})
		case 2:
			out.Active = append(out.Active, ActiveRunRef{ID: w.ID, Handler: w.Name})
		}
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	if out.Workflow == nil {
		return out, ErrNotFound
	}
	slices.SortFunc(out.Schedules, func(a, b Schedule) int { return cmp.Compare(a.Handler, b.Handler) })
	slices.SortFunc(out.Active, func(a, b ActiveRunRef) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CallReads is what a new mutation's call is checked against, read in the
// transaction that writes its in_flight row: the workflow's status and
// block, and its grants.
type CallReads struct {
	Status    WorkflowStatus
	BlockKind BlockKind
	Grants    []Grant // by capability and scope
}

// callReads lines the workflow's status and block kind up in a grant's
// capability and scope.
const callReads = `SELECT 0, 0, status, block_kind, '', 0, 0, 0 FROM workflows WHERE id = ?1
	UNION ALL SELECT 1, id, capability, scope, mode, daily_limit, created_at, updated_at FROM grants WHERE workflow_id = ?1`

// CallReads reads the workflow's status, block and grants in one
// statement; ErrNotFound when there is no such workflow.
func (q Q) CallReads(ctx context.Context, workflowID int64) (CallReads, error) {
	var out CallReads
	rows, err := q.q.QueryContext(ctx, callReads, workflowID)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var kind int
		var g Grant
		var c, u int64
		if err := rows.Scan(&kind, &g.ID, &g.Capability, &g.Scope, &g.Mode, &g.DailyLimit, &c, &u); err != nil {
			return out, err
		}
		if kind == 0 {
			out.Status, out.BlockKind, found = WorkflowStatus(g.Capability), BlockKind(g.Scope), true
			continue
		}
		g.WorkflowID, g.CreatedAt, g.UpdatedAt = workflowID, fromMS(c), fromMS(u)
		out.Grants = append(out.Grants, g)
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	if !found {
		return out, ErrNotFound
	}
	slices.SortFunc(out.Grants, func(a, b Grant) int {
		return cmp.Or(cmp.Compare(a.Capability, b.Capability), cmp.Compare(a.Scope, b.Scope))
	})
	return out, nil
}

// stateAndPeek lines a handler's state up in an event's payload, beside
// Peek's query; the events' LIMIT is their own, in a subquery. Of each
// event it reads what a prepare is handed: every column more is a
// column read (and, in modernc's SQLite, a lock taken) per row.
const stateAndPeek = `SELECT 0, 0, '', state, 0 FROM handler_state WHERE workflow_id = ?1 AND handler = ?2
	UNION ALL SELECT 1, * FROM (SELECT id, message_id, payload, created_at FROM events INDEXED BY events_open
		WHERE workflow_id = ?1 AND topic = ?3 AND status = 'pending' AND reserved_by IS NULL ORDER BY id LIMIT +?4)`

// StateAndPeek reads a consumer's state (nil when it has none), as
// HandlerState does, and what PeekSkipping finds of a topic, in one
// statement: the scheduler's step reads both for the consumer it starts.
// Of each event it reads the id, message id, payload and creation time,
// what the step hands to the prepare; the workflow, topic and status are
// those the query asks for (pending and unreserved), not read.
func (q Q) StateAndPeek(ctx context.Context, workflowID int64, handler, topic string, limit, skipping int, skip func(id int64) bool) ([]byte, []*Event, error) {
	rows, err := q.q.QueryContext(ctx, stateAndPeek, workflowID, handler, topic, limit+skipping)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var state []byte
	var out []*Event
	for rows.Next() {
		var kind int
		var e Event
		var payload sql.NullString
		var created int64
		if err := rows.Scan(&kind, &e.ID, &e.MessageID, &payload, &created); err != nil {
			return nil, nil, err
		}
		if kind == 0 {
			if payload.Valid {
				state = []byte(payload.String)
			}
			continue
		}
		if skip != nil && skip(e.ID) {
			continue
		}
		e.WorkflowID, e.Topic, e.Status = workflowID, topic, EventPending
		e.Payload, e.CreatedAt = json.RawMessage(payload.String), fromMS(created)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b *Event) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return state, out, nil
}
