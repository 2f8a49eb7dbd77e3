package storage

import (
	"context"
	"fmt"
	"time"
)

// Retention says what gc may remove. A zero time keeps that kind forever.
type Retention struct {
	// TracesBefore: trace lines of finished runs last updated before it.
	TracesBefore time.Time
	// RunsBefore: finished run records closed before it that nothing
	// points at (see PruneRuns); those something points at keep their row
	// and lose only their prepare result once committed.
	RunsBefore time.Time
	// CompactBefore: consumed events last updated before it keep only
	// their messageId as payload.
	CompactBefore time.Time
	// Batch is the most rows one write transaction touches (default 500),
	// so a run waiting to commit waits for one small batch at most.
	Batch int
	// RepackAbove: when the space left inside pages by pruning and
	// compaction passes this share of the file (default 0.1), gc rewrites
	// the file with a full VACUUM. Pages only partly emptied are never
	// given back otherwise: ids only grow, so new rows never fill the
	// holes old ones left. The VACUUM holds the writer while it runs (a
	// second or two for tens of MB), so it happens only when it pays.
	// Negative: never.
	RepackAbove float64
}

// GCReport counts what one gc removed.
type GCReport struct {
	Traces         int64 `json:"traces"`
	Runs           int64 `json:"runs"`
	PrepareResults int64 `json:"prepare_results"`
	Payloads       int64 `json:"payloads"`
	PagesFreed     int64 `json:"pages_freed"`
	Repacked       bool  `json:"repacked"`
	BytesBefore    int64 `json:"bytes_before"`
	BytesAfter     int64 `json:"bytes_after"`
}

// A finished run is closed: nothing waits on it and it owns no
// reservation. Runs waiting for the user keep closed_at NULL.
const finishedRun = `r.closed_at IS NOT NULL AND r.status <> 'active'`

// unreferencedRun: no row anywhere names the run, so deleting it loses no
// link — not the input ledger (inputs.created_by), the events it made or
// held, the reservation history (the inputs→outputs view), the mutation
// ledger, a retry chain, or a workflow's block.
const unreferencedRun = `r.mutation_id IS NULL
	AND NOT EXISTS (SELECT 1 FROM reservations x WHERE x.run_id = r.id)
	AND NOT EXISTS (SELECT 1 FROM mutations x WHERE x.run_id = r.id)
	AND NOT EXISTS (SELECT 1 FROM inputs x INDEXED BY inputs_created_by WHERE x.created_by = r.id)
	AND NOT EXISTS (SELECT 1 FROM events x INDEXED BY events_created_by WHERE x.created_by = r.id)
	AND NOT EXISTS (SELECT 1 FROM events x INDEXED BY events_reserved WHERE x.reserved_by = r.id)
	AND NOT EXISTS (SELECT 1 FROM runs x INDEXED BY runs_retry_of WHERE x.retry_of = r.id)
	AND NOT EXISTS (SELECT 1 FROM workflows x WHERE x.block_run_id = r.id)`

// GC applies a retention policy in batches of short write transactions,
// then gives the freed pages back to the file system (auto_vacuum is
// incremental since migration 3). The mutation ledger, the reservation
// history, inputs and events are never deleted.
func (db *DB) GC(ctx context.Context, p Retention) (GCReport, error) {
	if p.Batch <= 0 {
		p.Batch = 500
	}
	var rep GCReport
	var err error
	if rep.BytesBefore, err = db.size(ctx); err != nil {
		return rep, err
	}
	steps := []struct {
		on    time.Time
		count *int64
		step  func(ctx context.Context, tx *Tx, cutoff int64, after int64, limit int) (last int64, n int64, err error)
	}{
		{p.TracesBefore, &rep.Traces, pruneTraces},
		{p.RunsBefore, &rep.Runs, pruneRuns},
		{p.RunsBefore, &rep.PrepareResults, compactRuns},
		{p.CompactBefore, &rep.Payloads, compactPayloads},
	}
	for _, s := range steps {
		if s.on.IsZero() {
			continue
		}
		// each batch resumes after the last row it looked at, so rows that
		// must stay are read once, not once per batch
		var after int64
		for {
			var last, n int64
			if err := db.Write(ctx, func(tx *Tx) error {
				var err error
				last, n, err = s.step(ctx, tx, ms(s.on), after, p.Batch)
				return err
			}); err != nil {
				return rep, fmt.Errorf("storage: gc: %w", err)
			}
			*s.count += n
			if last == 0 {
				break
			}
			after = last
		}
	}
	if rep.PagesFreed, err = db.vacuum(ctx); err != nil {
		return rep, err
	}
	if p.RepackAbove == 0 {
		p.RepackAbove = 0.1
	}
	if p.RepackAbove > 0 && rep.Traces+rep.Runs+rep.PrepareResults+rep.Payloads > 0 {
		if rep.Repacked, err = db.repack(ctx, p.RepackAbove); err != nil {
			return rep, err
		}
	}
	rep.BytesAfter, err = db.size(ctx)
	return rep, err
}

// batchIDs reads the ids a step looks at in this batch; the last one is
// where the next batch resumes (0: nothing left).
func batchIDs(ctx context.Context, tx *Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func lastOf(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[len(ids)-1]
}

func deleteIDs(ctx context.Context, tx *Tx, table, col string, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	res, err := tx.exec(ctx, `DELETE FROM `+table+` WHERE `+col+` IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// pruneTraces deletes the trace lines of finished runs last updated before
// cutoff: the batch is a page of such runs, oldest first.
func pruneTraces(ctx context.Context, tx *Tx, cutoff, after int64, limit int) (int64, int64, error) {
	// walked through the traces' own index: the runs that still have
	// traces are the recent ones, not the whole history
	ids, err := batchIDs(ctx, tx, `SELECT r.id FROM (SELECT DISTINCT run_id AS id FROM run_traces WHERE run_id > ? ORDER BY run_id) t
		JOIN runs r ON r.id = t.id
		WHERE r.closed_at < ? AND `+finishedRun+` AND r.updated_at < ? ORDER BY r.id LIMIT ?`, after, cutoff, cutoff, limit)
	if err != nil {
		return 0, 0, err
	}
	n, err := deleteIDs(ctx, tx, "run_traces", "run_id", ids)
	return lastOf(ids), n, err
}

// pruneRuns deletes finished runs closed before cutoff that nothing points
// at (with their traces): in a year these are mostly producer polls that
// found nothing new and consumer wake-ups with nothing to reserve.
func pruneRuns(ctx context.Context, tx *Tx, cutoff, after int64, limit int) (int64, int64, error) {
	seen, err := batchIDs(ctx, tx, `SELECT r.id FROM runs r
		WHERE r.id > ? AND r.closed_at < ? AND `+finishedRun+` AND r.updated_at < ? ORDER BY r.id LIMIT ?`,
		after, cutoff, cutoff, limit)
	if err != nil || len(seen) == 0 {
		return 0, 0, err
	}
	args := make([]any, len(seen))
	for i, id := range seen {
		args[i] = id
	}
	ids, err := batchIDs(ctx, tx, `SELECT r.id FROM runs r WHERE r.id IN (`+placeholders(len(seen))+`) AND `+unreferencedRun, args...)
	if err != nil {
		return 0, 0, err
	}
	if _, err := deleteIDs(ctx, tx, "run_traces", "run_id", ids); err != nil {
		return 0, 0, err
	}
	n, err := deleteIDs(ctx, tx, "runs", "id", ids)
	return lastOf(seen), n, err
}

// compactRuns drops the prepare result of committed runs that must keep
// their row: nothing reads it once the run has committed (a retry copies
// it only from a run that did not).
func compactRuns(ctx context.Context, tx *Tx, cutoff, after int64, limit int) (int64, int64, error) {
	ids, err := batchIDs(ctx, tx, `SELECT r.id FROM runs r
		WHERE r.id > ? AND r.closed_at < ? AND r.status = 'committed' AND r.updated_at < ? ORDER BY r.id LIMIT ?`,
		after, cutoff, cutoff, limit)
	if err != nil || len(ids) == 0 {
		return 0, 0, err
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	res, err := tx.exec(ctx, `UPDATE runs SET prepare_result = NULL WHERE prepare_result IS NOT NULL AND id IN (`+
		placeholders(len(ids))+`)`, args...)
	if err != nil {
		return 0, 0, err
	}
	n, err := res.RowsAffected()
	return lastOf(ids), n, err
}

// compactPayloads replaces the payload of consumed events last updated
// before cutoff with {"messageId": …}. Pending and skipped events keep
// theirs (skipped ones may still be looked at by the user).
func compactPayloads(ctx context.Context, tx *Tx, cutoff, after int64, limit int) (int64, int64, error) {
	ids, err := batchIDs(ctx, tx, `SELECT id FROM events WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil || len(ids) == 0 {
		return 0, 0, err
	}
	res, err := tx.exec(ctx, `UPDATE events SET payload = json_object('messageId', message_id)
		WHERE id BETWEEN ? AND ? AND status = 'consumed' AND updated_at < ? AND payload <> json_object('messageId', message_id)`,
		ids[0], lastOf(ids), cutoff)
	if err != nil {
		return 0, 0, err
	}
	n, err := res.RowsAffected()
	return lastOf(ids), n, err
}

// vacuum gives free pages back to the file system a slice at a time, each
// slice a short hold of the writer.
func (db *DB) vacuum(ctx context.Context) (int64, error) {
	var freed int64
	for {
		var free int64
		if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
			return freed, fmt.Errorf("storage: gc: %w", err)
		}
		if free == 0 {
			break
		}
		if _, err := db.w.ExecContext(ctx, `PRAGMA incremental_vacuum(2000)`); err != nil {
			return freed, fmt.Errorf("storage: gc: incremental vacuum: %w", err)
		}
		var after int64
		if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&after); err != nil {
			return freed, fmt.Errorf("storage: gc: %w", err)
		}
		if after >= free {
			break // auto_vacuum is off (an old file that was never upgraded)
		}
		freed += free - after
	}
	// the WAL holds a copy of every page written; a checkpoint that
	// truncates it lets the file system have that space back too
	if _, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return freed, fmt.Errorf("storage: gc: checkpoint: %w", err)
	}
	return freed, nil
}

// repackFloor: below this much slack a rewrite is not worth its pause.
const repackFloor = 1 << 20

// repack runs a full VACUUM when the unused space inside pages is more
// than share of the file (dbstat reads every page: on the read pool, so
// the writer waits only for the VACUUM itself).
func (db *DB) repack(ctx context.Context, share float64) (bool, error) {
	var unused, size int64
	if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(unused), 0), COALESCE(SUM(pgsize), 0) FROM dbstat`).Scan(&unused, &size); err != nil {
		return false, fmt.Errorf("storage: gc: measuring slack: %w", err)
	}
	if unused < repackFloor || float64(unused) < share*float64(size) {
		return false, nil
	}
	if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
		return false, fmt.Errorf("storage: gc: vacuum: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return true, fmt.Errorf("storage: gc: checkpoint: %w", err)
	}
	return true, nil
}

// size is the database file's size in bytes (pages in use and free).
func (db *DB) size(ctx context.Context) (int64, error) {
	var pages, size int64
	if err := db.r.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return 0, fmt.Errorf("storage: size: %w", err)
	}
	if err := db.r.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return 0, fmt.Errorf("storage: size: %w", err)
	}
	return pages * size, nil
}

// Size is the database's size in bytes.
func (db *DB) Size(ctx context.Context) (int64, error) { return db.size(ctx) }
