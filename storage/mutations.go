package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

const mutationCols = `id, run_id, workflow_id, connector, method, params, preview, ui_title, idempotency_key, status,
	result, error, resolved_by, attempts, reconcile_attempts, next_attempt_at, reminder_id, created_at, updated_at`

func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// scanMutationWith scans a mutation row preceded by the given extra columns.
func scanMutationWith(row interface{ Scan(...any) error }, extra ...any) (*Mutation, error) {
	var m Mutation
	var params string
	var result sql.NullString
	var next sql.NullInt64
	var created, updated int64
	dest := append(extra, &m.ID, &m.RunID, &m.WorkflowID, &m.Connector, &m.Method, &params, &m.Preview, &m.UITitle,
		&m.IdempotencyKey, &m.Status, &result, &m.Error, &m.ResolvedBy, &m.Attempts, &m.ReconcileAttempts, &next, &m.ReminderID,
		&created, &updated)
	if err := row.Scan(dest...); err != nil {
		return nil, notFound(err)
	}
	m.Params, m.Result = []byte(params), raw(result)
	m.NextAttemptAt = fromNullMS(next)
	m.CreatedAt, m.UpdatedAt = fromMS(created), fromMS(updated)
	m.WasStatus = m.Status
	return &m, nil
}

func (q Q) mutations(ctx context.Context, query string, args ...any) ([]*Mutation, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Mutation
	for rows.Next() {
		m, err := scanMutationWith(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// InsertMutation records a mutation; the idempotency key is derived from the
// id, so it is written in the same statement's transaction right after.
func (tx *Tx) InsertMutation(ctx context.Context, m *Mutation, keyPrefix string) error {
	// The row takes the id SQLite would give it (one past the largest; the
	// writer is alone), so its key, named after the id, is written with it.
	res, err := tx.exec(ctx, `INSERT INTO mutations(id, run_id, workflow_id, connector, method, params, preview, ui_title,
		idempotency_key, status, attempts, created_at, updated_at)
		SELECT n, ?, ?, ?, ?, ?, ?, ?, ? || '-' || n, ?, ?, ?, ? FROM (SELECT COALESCE(MAX(id), 0) + 1 AS n FROM mutations)`,
		m.RunID, m.WorkflowID, m.Connector, m.Method, string(m.Params), m.Preview, m.UITitle, keyPrefix, m.Status, m.Attempts,
		ms(m.CreatedAt), ms(m.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert mutation: %w", err)
	}
	if m.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	m.IdempotencyKey = fmt.Sprintf("%s-%d", keyPrefix, m.ID)
	m.WasStatus = m.Status
	return nil
}

// UpdateMutation writes a mutation's mutable fields back, compare-and-set:
// only while the row is still at m.WasStatus. A row that moved meanwhile is
// ErrConflict.
func (tx *Tx) UpdateMutation(ctx context.Context, m *Mutation) error {
	res, err := tx.exec(ctx, `UPDATE mutations SET status = ?, result = ?, error = ?, resolved_by = ?, attempts = ?,
		reconcile_attempts = ?, next_attempt_at = ?, reminder_id = ?, updated_at = ? WHERE id = ? AND status = ?`,
		m.Status, rawOrNil(m.Result), m.Error, m.ResolvedBy, m.Attempts, m.ReconcileAttempts, msPtr(m.NextAttemptAt),
		m.ReminderID, ms(m.UpdatedAt), m.ID, m.WasStatus)
	if err := changedOne(res, err, "mutation", m.ID); err != nil {
		return err
	}
	m.WasStatus = m.Status
	return nil
}

// MutationByID returns one mutation, or ErrNotFound.
func (q Q) MutationByID(ctx context.Context, id int64) (*Mutation, error) {
	return scanMutationWith(q.q.QueryRowContext(ctx, `SELECT `+mutationCols+` FROM mutations WHERE id = ?`, id))
}

// Mutations lists a workflow's mutations oldest first, optionally by status.
func (q Q) Mutations(ctx context.Context, workflowID int64, status string) ([]*Mutation, error) {
	if status != "" {
		return q.mutations(ctx, `SELECT `+mutationCols+` FROM mutations WHERE workflow_id = ? AND status = ? ORDER BY id`, workflowID, status)
	}
	return q.mutations(ctx, `SELECT `+mutationCols+` FROM mutations WHERE workflow_id = ? ORDER BY id`, workflowID)
}

// OpenMutations lists every mutation still waiting on someone (approval,
// in flight, reconciliation), oldest first. They are read through two
// partial indexes, mutations_open and mutations_approved (migration 16),
// each named with its condition in the same words, so the cost is the
// open mutations, not the ledger.
func (q Q) OpenMutations(ctx context.Context) ([]*Mutation, error) {
	return q.mutations(ctx, openMutations)
}

const openMutations = `SELECT ` + mutationCols + ` FROM mutations INDEXED BY mutations_open
		WHERE (status = 'awaiting_approval' OR status = 'in_flight' OR status = 'needs_reconcile' OR status = 'indeterminate')
	UNION ALL
	SELECT ` + mutationCols + ` FROM mutations INDEXED BY mutations_approved WHERE status = 'approved'
	ORDER BY id`

// performedSince selects a workflow's mutations of one capability that were
// performed (not refused or skipped) since a time, by the index
// mutations_by_capability: a day's calls, not the workflow's history.
const performedSince = ` FROM mutations WHERE workflow_id = ? AND connector = ? AND method = ?
		AND created_at >= ? AND status IN ('in_flight', 'applied', 'needs_reconcile', 'indeterminate')`

const (
	countMutationsSince = `SELECT COUNT(*)` + performedSince
	mutationParamsSince = `SELECT params` + performedSince
)

// CountMutationsSince counts a workflow's mutations of one capability that
// were performed since a time (daily limits).
func (q Q) CountMutationsSince(ctx context.Context, workflowID int64, connector, method string, since time.Time) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, countMutationsSince, workflowID, connector, method, ms(since)).Scan(&n)
	return n, err
}

// MutationParamsSince is the parameters of the mutations CountMutationsSince
// counts: a limit on a grant narrowed to a scope counts only the calls in
// that scope, which the connector works out from each call's parameters.
func (q Q) MutationParamsSince(ctx context.Context, workflowID int64, connector, method string, since time.Time) ([]json.RawMessage, error) {
	rows, err := q.q.QueryContext(ctx, mutationParamsSince, workflowID, connector, method, ms(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var p []byte
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Grants lists a workflow's grants.
func (q Q) Grants(ctx context.Context, workflowID int64) ([]Grant, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, workflow_id, capability, scope, mode, daily_limit, created_at, updated_at
		FROM grants WHERE workflow_id = ? ORDER BY capability, scope`, workflowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Grant
	for rows.Next() {
		var g Grant
		var c, u int64
		if err := rows.Scan(&g.ID, &g.WorkflowID, &g.Capability, &g.Scope, &g.Mode, &g.DailyLimit, &c, &u); err != nil {
			return nil, err
		}
		g.CreatedAt, g.UpdatedAt = fromMS(c), fromMS(u)
		out = append(out, g)
	}
	return out, rows.Err()
}

// PutGrant creates or replaces the grant for (workflow, capability, scope).
func (tx *Tx) PutGrant(ctx context.Context, g Grant, now time.Time) error {
	_, err := tx.exec(ctx, `INSERT INTO grants(workflow_id, capability, scope, mode, daily_limit, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(workflow_id, capability, scope) DO UPDATE SET mode = excluded.mode, daily_limit = excluded.daily_limit,
		updated_at = excluded.updated_at`, g.WorkflowID, g.Capability, g.Scope, g.Mode, g.DailyLimit, ms(now), ms(now))
	return err
}

// EnsureGrant creates a grant only if none exists for (workflow, capability, scope).
func (tx *Tx) EnsureGrant(ctx context.Context, g Grant, now time.Time) error {
	_, err := tx.exec(ctx, `INSERT INTO grants(workflow_id, capability, scope, mode, daily_limit, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, g.WorkflowID, g.Capability, g.Scope, g.Mode, g.DailyLimit, ms(now), ms(now))
	return err
}
