package storage

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"
)

const workflowCols = `id, name, status, block_kind, block_reason, block_run_id, version,
	transient_failures, retry_at, repairs, created_at, updated_at, block_seq, blocked_at`

func scanWorkflow(row interface{ Scan(...any) error }) (*Workflow, error) {
	var w Workflow
	var blockRun, retryAt, blockedAt sql.NullInt64
	var created, updated int64
	if err := row.Scan(&w.ID, &w.Name, &w.Status, &w.BlockKind, &w.BlockReason, &blockRun, &w.Version,
		&w.TransientFailures, &retryAt, &w.Repairs, &created, &updated, &w.BlockSeq, &blockedAt); err != nil {
		return nil, notFound(err)
	}
	w.BlockRunID = blockRun.Int64
	w.BlockedAt = fromNullMS(blockedAt)
	w.RetryAt = fromNullMS(retryAt)
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return &w, nil
}

// WorkflowByName returns the workflow called name, or ErrNotFound.
func (q Q) WorkflowByName(ctx context.Context, name string) (*Workflow, error) {
	return scanWorkflow(q.q.QueryRowContext(ctx, `SELECT `+workflowCols+` FROM workflows WHERE name = ?`, name))
}

// WorkflowByID returns the workflow with id, or ErrNotFound.
func (q Q) WorkflowByID(ctx context.Context, id int64) (*Workflow, error) {
	return scanWorkflow(q.q.QueryRowContext(ctx, `SELECT `+workflowCols+` FROM workflows WHERE id = ?`, id))
}

// Workflows lists every workflow by name.
func (q Q) Workflows(ctx context.Context) ([]*Workflow, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+workflowCols+` FROM workflows ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Workflow
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// CreateWorkflow inserts a new active workflow and returns its id.
func (tx *Tx) CreateWorkflow(ctx context.Context, name string, now time.Time) (int64, error) {
	res, err := tx.exec(ctx, `INSERT INTO workflows(name, created_at, updated_at) VALUES (?, ?, ?)`, name, ms(now), ms(now))
	if err != nil {
		return 0, fmt.Errorf("create workflow %q: %w", name, err)
	}
	return res.LastInsertId()
}

// SetWorkflowStatus sets the user's status, compare-and-set: only while it
// is still from (ErrConflict otherwise).
func (tx *Tx) SetWorkflowStatus(ctx context.Context, id int64, from, to WorkflowStatus, now time.Time) error {
	res, err := tx.exec(ctx, `UPDATE workflows SET status = ?, updated_at = ? WHERE id = ? AND status = ?`, to, ms(now), id, from)
	return changedOne(res, err, "workflow", id)
}

// SetWorkflowVersion makes version the active script version.
func (tx *Tx) SetWorkflowVersion(ctx context.Context, id int64, version int, now time.Time) error {
	_, err := tx.exec(ctx, `UPDATE workflows SET version = ?, updated_at = ? WHERE id = ?`, version, ms(now), id)
	return err
}

// Block is the engine's block on a workflow: why it holds it (kind, in
// words), the run it holds it for, and when it lifts by itself.
type Block struct {
	Kind    BlockKind
	Reason  string
	RunID   int64
	RetryAt *time.Time
}

// SetBlock sets (or, with kind "", clears) the engine's block on a
// workflow, compare-and-set: only while the row still holds the block the
// caller read (its kind and run), else ErrConflict. Every block set is a
// new question to the person, numbered on (block_seq, migration 20), so
// an answer to an earlier one is never taken for an answer to it.
func (tx *Tx) SetBlock(ctx context.Context, id int64, fromKind BlockKind, fromRunID int64, to Block, now time.Time) error {
	var blockedAt *time.Time
	if to.Kind != BlockNone {
		blockedAt = &now
	}
	res, err := tx.exec(ctx, `UPDATE workflows SET block_kind = ?1, block_reason = ?2, block_run_id = ?3, retry_at = ?4, updated_at = ?5,
		block_seq = block_seq + (?1 <> ''), blocked_at = ?6
		WHERE id = ?7 AND block_kind = ?8 AND block_run_id IS ?9`,
		to.Kind, to.Reason, nullID(to.RunID), msPtr(to.RetryAt), ms(now), msPtr(blockedAt), id, fromKind, nullID(fromRunID))
	return changedOne(res, err, "workflow block", id)
}

// SetCounters stores the persisted retry counters of a workflow.
func (tx *Tx) SetCounters(ctx context.Context, id int64, transientFailures, repairs int) error {
	_, err := tx.exec(ctx, `UPDATE workflows SET transient_failures = ?, repairs = ? WHERE id = ?`, transientFailures, repairs, id)
	return err
}

// AddScriptVersion stores a script version.
func (tx *Tx) AddScriptVersion(ctx context.Context, v ScriptVersion) error {
	_, err := tx.exec(ctx, `INSERT INTO script_versions(workflow_id, version, label, origin, file_name, source, declaration, manifest, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.WorkflowID, v.Version, v.Label, v.Origin, v.FileName, v.Source, string(v.Declaration), string(v.Manifest), ms(v.CreatedAt))
	return err
}

// ScriptVersion returns one stored version of a workflow's script.
func (q Q) ScriptVersion(ctx context.Context, workflowID int64, version int) (*ScriptVersion, error) {
	var v ScriptVersion
	var decl, man string
	var created int64
	err := q.q.QueryRowContext(ctx, `SELECT workflow_id, version, label, origin, file_name, source, declaration, manifest, created_at
		FROM script_versions WHERE workflow_id = ? AND version = ?`, workflowID, version).
		Scan(&v.WorkflowID, &v.Version, &v.Label, &v.Origin, &v.FileName, &v.Source, &decl, &man, &created)
	if err != nil {
		return nil, notFound(err)
	}
	v.Declaration, v.CreatedAt = []byte(decl), fromMS(created)
	if man != "" {
		v.Manifest = []byte(man)
	}
	return &v, nil
}

// LatestScriptVersion returns the highest version number stored for a workflow (0 if none).
func (q Q) LatestScriptVersion(ctx context.Context, workflowID int64) (int, error) {
	var v int
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM script_versions WHERE workflow_id = ?`, workflowID).Scan(&v)
	return v, err
}

// EnsureTopic declares a topic of a workflow (idempotent).
func (tx *Tx) EnsureTopic(ctx context.Context, workflowID int64, name string) error {
	_, err := tx.exec(ctx, `INSERT INTO topics(workflow_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING`, workflowID, name)
	return err
}

// Topics returns the names of every topic a workflow has declared, in any
// of its versions (a topic's events outlive the version that declared it),
// sorted.
func (q Q) Topics(ctx context.Context, workflowID int64) ([]string, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT name FROM topics WHERE workflow_id = ? ORDER BY name`, workflowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// InstallID is a random id made once per database; idempotency keys carry it
// so that keys from two databases (a reset, a second machine) never collide
// at the same service.
func (tx *Tx) InstallID(ctx context.Context) (string, error) {
	var id string
	err := tx.q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'install_id'`).Scan(&id)
	if err == nil {
		return id, nil
	}
	if err != sql.ErrNoRows {
		return "", err
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id = hex.EncodeToString(b)
	_, err = tx.exec(ctx, `INSERT INTO meta(key, value) VALUES ('install_id', ?)`, id)
	return id, err
}

// HostSecret is a random secret made once per database, for what the host
// derives from its idempotency keys where a name made from the key alone
// could be forged (connectors.Keyed). It lives with the ledger whose keys
// it keys, so a backup restored keeps finding the sends it recorded.
func (tx *Tx) HostSecret(ctx context.Context) ([]byte, error) {
	var s string
	err := tx.q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'host_secret'`).Scan(&s)
	if err == nil {
		return hex.DecodeString(s)
	}
	if err != sql.ErrNoRows {
		return nil, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	_, err = tx.exec(ctx, `INSERT INTO meta(key, value) VALUES ('host_secret', ?)`, hex.EncodeToString(b))
	return b, err
}

// MaxInputID is the highest input id used so far; the engine allocates new
// input ids above it (a producer hands ids to its script before it commits).
func (q Q) MaxInputID(ctx context.Context) (int64, error) {
	var id int64
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM inputs`).Scan(&id)
	return id, err
}
