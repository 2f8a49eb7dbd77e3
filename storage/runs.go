package storage

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

const runCols = `id, workflow_id, handler, handler_type, script_version, retry_of, mutation_id, trigger,
	phase, status, prepare_result, mutation_result, error, closed_at, created_at, updated_at, moved_by`

func scanRun(row interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var retryOf, mutationID, closed sql.NullInt64
	var prep, mres sql.NullString
	var created, updated int64
	if err := row.Scan(&r.ID, &r.WorkflowID, &r.Handler, &r.HandlerType, &r.ScriptVersion, &retryOf, &mutationID, &r.Trigger,
		&r.Phase, &r.Status, &prep, &mres, &r.Error, &closed, &created, &updated, &r.MovedBy); err != nil {
		return nil, notFound(err)
	}
	r.RetryOf, r.MutationID = retryOf.Int64, mutationID.Int64
	r.PrepareResult, r.MutationResult = raw(prep), raw(mres)
	r.ClosedAt = fromNullMS(closed)
	r.CreatedAt, r.UpdatedAt = fromMS(created), fromMS(updated)
	r.remember()
	return &r, nil
}

// InsertRun records a run and returns its id: the id it has, given by
// NewRunID, or a new one.
func (tx *Tx) InsertRun(ctx context.Context, r *Run) (int64, error) {
	if r.ID == 0 {
		r.ID = tx.db.NewRunID()
	}
	_, err := tx.exec(ctx, `INSERT INTO runs(id, workflow_id, handler, handler_type, script_version, retry_of, mutation_id, trigger,
		phase, status, prepare_result, mutation_result, error, closed_at, created_at, updated_at, moved_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.WorkflowID, r.Handler, r.HandlerType, r.ScriptVersion, nullID(r.RetryOf), nullID(r.MutationID), r.Trigger,
		r.Phase, r.Status, rawOrNil(r.PrepareResult), rawOrNil(r.MutationResult), r.Error, msPtr(r.ClosedAt),
		ms(r.CreatedAt), ms(r.UpdatedAt), r.MovedBy)
	if err != nil {
		return 0, fmt.Errorf("insert run: %w", err)
	}
	r.remember()
	return r.ID, nil
}

// NewRunID hands out the id of a run not recorded yet. Every run's id comes
// from here, so an engine may know a run's id before its record commits
// (engine/ahead.go) without another insert taking it meanwhile: the
// database has one writing process (Open's lock).
func (db *DB) NewRunID() int64 { return db.runIDs.Add(1) }

// UpdateRun writes a run's mutable fields back, compare-and-set: only
// while the row is still where r.Was says (and its mutation and closing
// are what they were read as). A row that moved meanwhile is ErrConflict.
//
// The indexed columns (status, mutation_id, closed_at) are written only
// when they change: SQLite rewrites every index whose column is named in
// SET, so naming them on each checkpoint would write four index pages to
// the log per commit for nothing.
func (tx *Tx) UpdateRun(ctx context.Context, r *Run) error {
	set := `phase = ?, prepare_result = ?, mutation_result = ?, error = ?, updated_at = ?, moved_by = ?`
	args := []any{r.Phase, rawOrNil(r.PrepareResult), rawOrNil(r.MutationResult), r.Error, ms(r.UpdatedAt), r.MovedBy}
	if r.Status != r.Was.Status {
		set += `, status = ?`
		args = append(args, r.Status)
	}
	if r.MutationID != r.was.mutationID {
		set += `, mutation_id = ?`
		args = append(args, nullID(r.MutationID))
	}
	closed := msPtr(r.ClosedAt)
	if closed != r.was.closedAt {
		set += `, closed_at = ?`
		args = append(args, closed)
	}
	args = append(args, r.ID, r.Was.Status, r.Was.Phase, nullID(r.was.mutationID), r.was.closedAt)
	res, err := tx.exec(ctx, `UPDATE runs SET `+set+` WHERE id = ? AND status = ? AND phase = ? AND mutation_id IS ? AND closed_at IS ?`, args...)
	if err := changedOne(res, err, "run", r.ID); err != nil {
		return err
	}
	r.remember()
	return nil
}

// RecordedAs gives r what rec, a copy of it that was recorded, was left
// with: where the row is, for r's next UpdateRun.
func (r *Run) RecordedAs(rec *Run) { r.Was, r.Via, r.was = rec.Was, rec.Via, rec.was }

// remember notes where the row now is, for the next UpdateRun.
func (r *Run) remember() {
	r.Was, r.Via = RunState{r.Status, r.Phase}, RunState{}
	r.was.mutationID, r.was.closedAt = r.MutationID, msPtr(r.ClosedAt)
}

// RunByID returns a run, or ErrNotFound.
func (q Q) RunByID(ctx context.Context, id int64) (*Run, error) {
	return scanRun(q.q.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
}

// ActiveRun returns the workflow's active run — its oldest, when a
// concurrent consumer holds several — or ErrNotFound.
func (q Q) ActiveRun(ctx context.Context, workflowID int64) (*Run, error) {
	return scanRun(q.q.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs INDEXED BY runs_open
		WHERE workflow_id = ? AND closed_at IS NULL AND status = 'active' ORDER BY id LIMIT 1`, workflowID))
}

// ActiveRunRef is an active run as the scheduler first looks at it.
type ActiveRunRef struct {
	ID      int64
	Handler string
}

const activeRunRefs = `SELECT id, handler FROM runs INDEXED BY runs_open
	WHERE workflow_id = ? AND closed_at IS NULL AND status = 'active' ORDER BY id`

// ActiveRunRefs returns the ids and handlers of a workflow's active runs,
// oldest first. runs_open holds all it reads, so no run row is read:
// a concurrent consumer's runs under way carry their prepare results, and
// the scheduler looks at them on every step only to count them.
func (q Q) ActiveRunRefs(ctx context.Context, workflowID int64) ([]ActiveRunRef, error) {
	rows, err := q.q.QueryContext(ctx, activeRunRefs, workflowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ActiveRunRef
	for rows.Next() {
		var r ActiveRunRef
		if err := rows.Scan(&r.ID, &r.Handler); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ActiveRuns returns every active run of every workflow (restart recovery),
// through the index of open runs: an active run is never closed.
func (q Q) ActiveRuns(ctx context.Context) ([]*Run, error) {
	return q.runs(ctx, activeRuns)
}

const activeRuns = `SELECT ` + runCols + ` FROM runs INDEXED BY runs_open WHERE closed_at IS NULL AND status = 'active' ORDER BY id`

// OpenRuns returns the runs of a workflow that are still an open matter
// (paused or failed, nothing has taken them over yet), oldest first.
func (q Q) OpenRuns(ctx context.Context, workflowID int64) ([]*Run, error) {
	return q.runs(ctx, `SELECT `+runCols+` FROM runs WHERE workflow_id = ? AND closed_at IS NULL ORDER BY id`, workflowID)
}

// AllOpenRuns returns every open run of every workflow, oldest first: read
// through the index of open runs (they are few), never the history.
func (q Q) AllOpenRuns(ctx context.Context) ([]*Run, error) {
	return q.runs(ctx, allOpenRuns)
}

const allOpenRuns = `SELECT ` + runCols + ` FROM runs INDEXED BY runs_open WHERE closed_at IS NULL AND status <> 'active' ORDER BY id`

// Runs pages a workflow's runs newest first: ids below before (0: from the
// newest), at most limit, optionally only one handler.
func (q Q) Runs(ctx context.Context, workflowID int64, before int64, limit int, handler string) ([]*Run, error) {
	query, args := runsPage.before(workflowID, before, limit, handler)
	return q.runs(ctx, query, args...)
}

// RunsAfter pages a workflow's runs from the oldest end: the limit runs
// with the lowest ids above after (0: the oldest), below before (0: no
// bound), optionally only one handler; returned newest first, like Runs.
func (q Q) RunsAfter(ctx context.Context, workflowID int64, after, before int64, limit int, handler string) ([]*Run, error) {
	query, args := runsPage.after(workflowID, after, before, limit, handler)
	runs, err := q.runs(ctx, query, args...)
	slices.Reverse(runs)
	return runs, err
}

// LastRun returns a workflow's newest run, or ErrNotFound.
func (q Q) LastRun(ctx context.Context, workflowID int64) (*Run, error) {
	return scanRun(q.q.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE workflow_id = ? ORDER BY id DESC LIMIT 1`, workflowID))
}

// RunsCarrying returns the runs that carry a mutation, oldest first.
func (q Q) RunsCarrying(ctx context.Context, mutationID int64) ([]*Run, error) {
	return q.runs(ctx, `SELECT `+runCols+` FROM runs WHERE mutation_id = ? ORDER BY id`, mutationID)
}

func (q Q) runs(ctx context.Context, query string, args ...any) ([]*Run, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AddTrace appends trace entries of a run.
func (tx *Tx) AddTrace(ctx context.Context, entries []TraceEntry) error {
	for _, e := range entries {
		if _, err := tx.exec(ctx, `INSERT INTO run_traces(run_id, at, phase, kind, connector, method, args, result, duration_ms, error)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.RunID, ms(e.At), e.Phase, e.Kind, e.Connector, e.Method, e.Args, e.Result,
			e.DurationMS, e.Error); err != nil {
			return fmt.Errorf("add trace: %w", err)
		}
	}
	return nil
}

// Trace returns a run's trace in order.
func (q Q) Trace(ctx context.Context, runID int64) ([]TraceEntry, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, run_id, at, phase, kind, connector, method, args, result, duration_ms, error
		FROM run_traces WHERE run_id = ? ORDER BY id`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TraceEntry
	for rows.Next() {
		var e TraceEntry
		var at int64
		if err := rows.Scan(&e.ID, &e.RunID, &at, &e.Phase, &e.Kind, &e.Connector, &e.Method, &e.Args, &e.Result, &e.DurationMS, &e.Error); err != nil {
			return nil, err
		}
		e.At = fromMS(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// AddAnswer records a user's answer.
func (tx *Tx) AddAnswer(ctx context.Context, a AnswerRecord) error {
	_, err := tx.exec(ctx, `INSERT INTO answers(workflow_id, subject, subject_id, answer, answered_by, attempt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.WorkflowID, a.Subject, a.SubjectID, a.Answer, a.AnsweredBy, a.Attempt, ms(a.CreatedAt))
	return err
}

// AnswersOfWorkflow returns the answers given about one kind of subject
// (mutation, event, input) in a workflow, oldest first: one query for a
// whole listing.
func (q Q) AnswersOfWorkflow(ctx context.Context, workflowID int64, subject string) ([]AnswerRecord, error) {
	return q.answers(ctx, `WHERE subject = ? AND workflow_id = ? ORDER BY id`, subject, workflowID)
}

// Answers returns the answers given about one subject, oldest first.
func (q Q) Answers(ctx context.Context, subject string, subjectID int64) ([]AnswerRecord, error) {
	return q.answers(ctx, `WHERE subject = ? AND subject_id = ? ORDER BY id`, subject, subjectID)
}

// answersPerQuery bounds the ids of one AnswersOfEach query, well under
// SQLite's limit on bound parameters, so a long Attention list is read in
// a few queries rather than refused.
const answersPerQuery = 500

// AnswersOfEach returns the answers given about each of several subjects
// of one kind, oldest first, by subject id: the Attention view reads the
// history of all its calls at once, not one query a card.
func (q Q) AnswersOfEach(ctx context.Context, subject string, ids []int64) (map[int64][]AnswerRecord, error) {
	out := map[int64][]AnswerRecord{}
	for len(ids) > 0 {
		n := min(len(ids), answersPerQuery)
		args := []any{subject}
		for _, id := range ids[:n] {
			args = append(args, id)
		}
		as, err := q.answers(ctx, `WHERE subject = ? AND subject_id IN (`+placeholders(n)+`) ORDER BY id`, args...)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			out[a.SubjectID] = append(out[a.SubjectID], a)
		}
		ids = ids[n:]
	}
	return out, nil
}

// answers reads the answers the clause picks.
func (q Q) answers(ctx context.Context, where string, args ...any) ([]AnswerRecord, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, workflow_id, subject, subject_id, answer, answered_by, attempt, created_at
		FROM answers `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AnswerRecord
	for rows.Next() {
		var a AnswerRecord
		var at int64
		if err := rows.Scan(&a.ID, &a.WorkflowID, &a.Subject, &a.SubjectID, &a.Answer, &a.AnsweredBy, &a.Attempt, &at); err != nil {
			return nil, err
		}
		a.CreatedAt = fromMS(at)
		out = append(out, a)
	}
	return out, rows.Err()
}
