package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"modernc.org/sqlite"
)

// Retention says what gc may remove. A zero time keeps that kind forever.
type Retention struct {
	// TracesBefore: trace lines of finished runs last updated before it.
	TracesBefore time.Time
	// RunsBefore: finished run records closed before it that nothing
	// points at (see pruneRuns); those something points at keep their row
	// and lose only their prepare result once committed.
	RunsBefore time.Time
	// CompactBefore: consumed events last updated before it keep only
	// their messageId as payload.
	CompactBefore time.Time
	// Batch is the most rows (runs, events, or the runs whose trace lines
	// it prunes) one write transaction looks at (default 500), so a run
	// waiting to commit waits for one small batch at most.
	Batch int
}

// GCReport counts what one gc removed.
type GCReport struct {
	Traces         int64 `json:"traces"`
	Runs           int64 `json:"runs"`
	PrepareResults int64 `json:"prepare_results"`
	Payloads       int64 `json:"payloads"`
	PagesFreed     int64 `json:"pages_freed"`
	BytesBefore    int64 `json:"bytes_before"`
	BytesAfter     int64 `json:"bytes_after"`
	// Transactions: the write transactions gc took; LargestTx: the most
	// rows one of them changed (temporary copies included); LargestTxPages:
	// the most pages one of them read (cached or not), what it looked at
	// beyond what it changed; LongestTxMS: how long the longest held the
	// writer.
	Transactions   int     `json:"transactions"`
	LargestTx      int64   `json:"largest_tx_rows"`
	LargestTxPages int64   `json:"largest_tx_pages"`
	LongestTxMS    float64 `json:"longest_tx_ms"`
}

// A finished run is closed: nothing waits on it and it owns no
// reservation. Runs waiting for the user keep closed_at NULL.
const finishedRun = `r.closed_at IS NOT NULL AND r.status <> 'active'`

// unreferencedRun: no row anywhere names the run, so deleting it loses no
// link — not the input ledger (inputs.created_by), the events it made or
// held, the reservation history (the inputs→outputs view), the mutation
// ledger, a retry chain, a workflow's block, or a proposal (the repair
// made for it: proposals are history, so such a run is kept for good).
// Every foreign key into runs is one of these (TestUnreferencedRunNamesEveryLink).
const unreferencedRun = `r.mutation_id IS NULL
	AND NOT EXISTS (SELECT 1 FROM reservations x WHERE x.run_id = r.id)
	AND NOT EXISTS (SELECT 1 FROM mutations x WHERE x.run_id = r.id)
	AND NOT EXISTS (SELECT 1 FROM inputs x INDEXED BY inputs_created_by WHERE x.created_by = r.id)
	AND NOT EXISTS (SELECT 1 FROM events x INDEXED BY events_created_by WHERE x.created_by = r.id)
	AND NOT EXISTS (SELECT 1 FROM events x INDEXED BY events_reserved WHERE x.reserved_by = r.id)
	AND NOT EXISTS (SELECT 1 FROM runs x INDEXED BY runs_retry_of WHERE x.retry_of = r.id)
	AND NOT EXISTS (SELECT 1 FROM workflows x WHERE x.block_run_id = r.id)
	AND NOT EXISTS (SELECT 1 FROM proposals x INDEXED BY proposals_by_run WHERE x.run_id = r.id)`

// oldFinishedRun: the runs r a retention cutoff applies to.
const oldFinishedRun = `r.closed_at < ? AND ` + finishedRun + ` AND r.updated_at < ?`

// vacuumSlice is the most pages one incremental vacuum transaction gives
// back (2 MB of 4 KB pages).
const vacuumSlice = 512

// GC applies a retention policy in batches of short write transactions,
// then gives the freed pages back to the file system, again a slice per
// transaction (auto_vacuum is incremental since migration 4). The mutation
// ledger, inputs, events and the history tables (reservations, answers,
// event causes, proposals and their decisions) are never deleted, and the
// database refuses to delete or change the history (migrations 1 and 18).
//
// It never runs a full VACUUM, which holds the writer for as long as
// rewriting the whole file takes. Incremental vacuum gives back only
// whole free pages, and deleting every other run or shrinking payloads
// leaves pages partly empty that later rows never fill (ids only grow). So
// a batch that removes or shrinks rows also moves the rows around them it
// keeps: deleted and inserted again, same ids and values, in id order, in
// the same transaction. SQLite packs them into as few pages as their
// neighbours allow, and the pages they leave become free pages.
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
		on   time.Time
		step gcStep
	}{
		{p.TracesBefore, pruneTraces},
		{p.RunsBefore, pruneRuns},
		{p.CompactBefore, compactPayloads},
	}
	for _, s := range steps {
		if s.on.IsZero() {
			continue
		}
		b := gcBatch{cutoff: ms(s.on), limit: p.Batch}
		for more := true; more; {
			if err := db.gcTx(ctx, &rep, func(tx *Tx) error {
				var err error
				more, err = s.step(ctx, tx, &b, &rep)
				return err
			}); err != nil {
				return rep, fmt.Errorf("storage: gc: %w", err)
			}
		}
	}
	if rep.PagesFreed, err = db.vacuum(ctx, &rep); err != nil {
		return rep, err
	}
	rep.BytesAfter, err = db.size(ctx)
	return rep, err
}

// gcBatch is where a step's walk stands. Each batch resumes after the last
// row it finished with, so rows that must stay are read once, not once per
// batch.
type gcBatch struct {
	cutoff int64
	after  int64
	limit  int
}

// A gcStep does one batch in tx and says whether there is more to do.
type gcStep func(ctx context.Context, tx *Tx, b *gcBatch, rep *GCReport) (more bool, err error)

// gcTx runs one batch as its own write transaction and notes its size.
func (db *DB) gcTx(ctx context.Context, rep *GCReport, fn func(tx *Tx) error) error {
	var start time.Time // once the writer is ours: waiting for it is not holding it
	var changed, read int64
	if err := db.Write(ctx, func(tx *Tx) error {
		start = time.Now()
		before, err := totalChanges(ctx, tx)
		if err != nil {
			return err
		}
		readBefore := pagesRead(tx)
		if err := fn(tx); err != nil {
			return err
		}
		read = pagesRead(tx) - readBefore
		after, err := totalChanges(ctx, tx)
		changed = after - before
		return err
	}); err != nil {
		return err
	}
	rep.Transactions++
	rep.LargestTx = max(rep.LargestTx, changed)
	rep.LargestTxPages = max(rep.LargestTxPages, read)
	rep.LongestTxMS = max(rep.LongestTxMS, float64(time.Since(start).Microseconds())/1000)
	return nil
}

// totalChanges counts the rows the writer connection has inserted, updated
// or deleted since it opened.
func totalChanges(ctx context.Context, tx *Tx) (int64, error) {
	var n int64
	err := tx.q.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n)
	return n, err
}

// pagesRead counts the pages the writer connection has fetched, from its
// cache or the file, since it opened (0 where SQLite cannot say).
func pagesRead(tx *Tx) int64 {
	var n int64
	_ = tx.tq.conn.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			return nil
		}
		for _, op := range []sqlite.DBStatusOp{sqlite.DBStatusCacheHit, sqlite.DBStatusCacheMiss} {
			if c, _, err := st.Status(op, false); err == nil {
				n += int64(c)
			}
		}
		return nil
	})
	return n
}

// windowEnd is the last id of the batch query selects (ok false: none).
func windowEnd(ctx context.Context, tx *Tx, query string, args ...any) (int64, bool, error) {
	var last sql.NullInt64
	if err := tx.q.QueryRowContext(ctx, `SELECT MAX(id) FROM (`+query+`)`, args...).Scan(&last); err != nil {
		return 0, false, err
	}
	return last.Int64, last.Valid, nil
}

// runWindow is the batch of runs query selects (ids, at most a batch of
// them, unfiltered): its last id, and whether a run in it was created
// before cutoff (ok false: the window is empty, or every run in it, and so
// every later one, is too young for the cutoff). A window filtered by the
// cutoff instead would look at every run after the last match, in one
// transaction, to find that there is none: a month of runs a retention
// keeps, each gc.
func runWindow(ctx context.Context, tx *Tx, cutoff int64, query string, args ...any) (int64, bool, error) {
	var last, oldest sql.NullInt64
	if err := tx.q.QueryRowContext(ctx, `SELECT MAX(w.id), MIN(r.created_at) FROM (`+query+`) w JOIN runs r ON r.id = w.id`,
		args...).Scan(&last, &oldest); err != nil {
		return 0, false, err
	}
	// ids grow with time and a run closes after it was created, so once a
	// window's runs are all younger than the cutoff none after them is
	// older: a clock set back only leaves a run for a later gc
	return last.Int64, last.Valid && oldest.Int64 < cutoff, nil
}

func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// deleteTraces deletes at most limit trace lines of the runs r that match
// where, oldest run first.
func deleteTraces(ctx context.Context, tx *Tx, where string, limit int, args ...any) (int64, error) {
	return affected(tx.exec(ctx, `DELETE FROM run_traces WHERE id IN (SELECT t.id
		FROM runs r JOIN run_traces t INDEXED BY run_traces_by_run ON t.run_id = r.id
		WHERE `+where+` ORDER BY t.run_id, t.id LIMIT +?)`, append(args, limit)...))
}

// pruneTraces deletes the trace lines of finished runs last updated before
// the cutoff: a batch is a window of such runs, oldest first, and at most
// limit of their lines.
func pruneTraces(ctx context.Context, tx *Tx, b *gcBatch, rep *GCReport) (bool, error) {
	// walked through the traces' own index: the runs that still have
	// traces are the recent ones, not the whole history
	last, ok, err := runWindow(ctx, tx, b.cutoff, `SELECT DISTINCT run_id AS id FROM run_traces WHERE run_id > ? ORDER BY run_id LIMIT +?`,
		b.after, b.limit)
	if err != nil || !ok {
		return false, err
	}
	n, err := deleteTraces(ctx, tx, `r.id > ? AND r.id <= ? AND `+oldFinishedRun, b.limit, b.after, last, b.cutoff, b.cutoff)
	if err != nil {
		return false, err
	}
	rep.Traces += n
	if n < int64(b.limit) {
		b.after = last // else the window has lines left: it comes again
	}
	return true, nil
}

// pruneRuns deletes finished runs closed before the cutoff that nothing
// points at (with their traces): in a year these are mostly producer polls
// that found nothing new and consumer wake-ups with nothing to reserve. It
// drops the prepare result of the committed runs that must keep their
// row: nothing reads it once the run has committed (a retry copies it only
// from a run that did not). Then it moves the runs it keeps (see GC).
func pruneRuns(ctx context.Context, tx *Tx, b *gcBatch, rep *GCReport) (bool, error) {
	last, ok, err := runWindow(ctx, tx, b.cutoff, `SELECT id FROM runs WHERE id > ? ORDER BY id LIMIT +?`, b.after, b.limit)
	if err != nil || !ok {
		return false, err
	}
	window := `r.id > ? AND r.id <= ? AND ` + oldFinishedRun
	args := []any{b.after, last, b.cutoff, b.cutoff}
	// the traces of the runs about to go first, a batch of lines at most
	n, err := deleteTraces(ctx, tx, window+` AND `+unreferencedRun, b.limit, args...)
	if err != nil {
		return false, err
	}
	rep.Traces += n
	if n == int64(b.limit) {
		return true, nil // the same window again, until its traces are gone
	}
	var total int64
	if err := tx.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs r WHERE `+window, args...).Scan(&total); err != nil {
		return false, err
	}
	if _, err := tx.exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS gc_runs AS SELECT * FROM main.runs WHERE 0`); err != nil {
		return false, err
	}
	kept, err := affected(tx.exec(ctx, `INSERT INTO temp.gc_runs SELECT * FROM runs r WHERE `+window+` AND NOT (`+unreferencedRun+`)`, args...))
	if err != nil {
		return false, err
	}
	compacted, err := affected(tx.exec(ctx, `UPDATE temp.gc_runs SET prepare_result = NULL WHERE status = 'committed' AND prepare_result IS NOT NULL`))
	if err != nil {
		return false, err
	}
	if dropped := total - kept; dropped+compacted > 0 {
		if err := moveBack(ctx, tx, "runs", `SELECT r.id FROM runs r WHERE `+window, args...); err != nil {
			return false, err
		}
		rep.Runs += dropped
		rep.PrepareResults += compacted
	}
	if _, err := tx.exec(ctx, `DELETE FROM temp.gc_runs`); err != nil {
		return false, err
	}
	b.after = last
	return true, nil
}

// moveBack deletes the rows of table whose ids ids selects and inserts
// temp.gc_<table> in their place, in id order. Links to a deleted row
// are checked at commit, when the row is back (or the commit fails).
func moveBack(ctx context.Context, tx *Tx, table, ids string, args ...any) error {
	// A flag pragma acts while it is prepared, not when it runs: through
	// the statement cache it would be prepared once, and do nothing when
	// it runs again in a later transaction. So it runs unprepared, and is
	// checked.
	if _, err := tx.tq.conn.ExecContext(detached(ctx), `PRAGMA defer_foreign_keys = ON`); err != nil {
		return err
	}
	var deferred bool
	if err := tx.tq.conn.QueryRowContext(detached(ctx), `PRAGMA defer_foreign_keys`).Scan(&deferred); err != nil || !deferred {
		return fmt.Errorf("moving %s: foreign keys not deferred (%v)", table, err)
	}
	if _, err := tx.exec(ctx, `DELETE FROM main.`+table+` WHERE id IN (`+ids+`)`, args...); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `INSERT INTO main.`+table+` SELECT * FROM temp.gc_`+table+` ORDER BY id`)
	return err
}

// compactPayloads replaces the payload of consumed events last updated
// before the cutoff with {"messageId": …}, moving the events it shrinks
// (see GC). Pending and skipped events keep theirs (skipped ones may still
// be looked at by the user).
func compactPayloads(ctx context.Context, tx *Tx, b *gcBatch, rep *GCReport) (bool, error) {
	last, ok, err := windowEnd(ctx, tx, `SELECT id FROM events WHERE id > ? ORDER BY id LIMIT +?`, b.after, b.limit)
	if err != nil || !ok {
		return false, err
	}
	if _, err := tx.exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS gc_events AS SELECT * FROM main.events WHERE 0`); err != nil {
		return false, err
	}
	n, err := affected(tx.exec(ctx, `INSERT INTO temp.gc_events SELECT * FROM events
		WHERE id > ? AND id <= ? AND status = 'consumed' AND updated_at < ? AND payload <> json_object('messageId', message_id)`,
		b.after, last, b.cutoff))
	if err != nil {
		return false, err
	}
	if n > 0 {
		if _, err := tx.exec(ctx, `UPDATE temp.gc_events SET payload = json_object('messageId', message_id)`); err != nil {
			return false, err
		}
		if err := moveBack(ctx, tx, "events", `SELECT id FROM temp.gc_events`); err != nil {
			return false, err
		}
		if _, err := tx.exec(ctx, `DELETE FROM temp.gc_events`); err != nil {
			return false, err
		}
		rep.Payloads += n
	}
	b.after = last
	return true, nil
}

// vacuum gives free pages back to the file system a slice at a time, each
// slice its own short write transaction.
func (db *DB) vacuum(ctx context.Context, rep *GCReport) (int64, error) {
	var freed int64
	for more := true; more; {
		var n int64
		if err := db.gcTx(ctx, rep, func(tx *Tx) error {
			var before, after int64
			if err := tx.q.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&before); err != nil || before == 0 {
				more = false
				return err
			}
			if _, err := tx.exec(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumSlice)); err != nil {
				return fmt.Errorf("incremental vacuum: %w", err)
			}
			if err := tx.q.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&after); err != nil {
				return err
			}
			// after == before: auto_vacuum is off (an old file that was
			// never upgraded)
			n, more = before-after, after > 0 && after < before
			return nil
		}); err != nil {
			return freed, fmt.Errorf("storage: gc: %w", err)
		}
		freed += n
	}
	// the WAL holds a copy of every page written; a checkpoint that
	// truncates it lets the file system have that space back too. A
	// passive one first copies the pages without waiting for readers, so
	// the truncating one, which does, has little left to copy. Both hold
	// the writer lock (checkpoint.go).
	for _, mode := range []string{"PASSIVE", "TRUNCATE"} {
		if err := db.checkpoint(ctx, mode); err != nil {
			return freed, fmt.Errorf("storage: gc: %w", err)
		}
	}
	return freed, nil
}

// size is the database file's size in bytes (pages in use and free).
func (db *DB) size(ctx context.Context) (int64, error) {
	if db.readClosed() {
		return 0, db.closedError()
	}
	var pages int64
	if err := db.r.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return 0, fmt.Errorf("storage: size: %w", err)
	}
	size, err := db.PageSize(ctx)
	if err != nil {
		return 0, err
	}
	return pages * size, nil
}

// PageSize is the size in bytes of the database's pages, fixed when its
// file was made (pageSize, or SQLite's default before keep chose one).
func (db *DB) PageSize(ctx context.Context) (int64, error) {
	if db.readClosed() {
		return 0, db.closedError()
	}
	var size int64
	if err := db.r.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return 0, fmt.Errorf("storage: page size: %w", err)
	}
	return size, nil
}

// Size is the database's size in bytes.
func (db *DB) Size(ctx context.Context) (int64, error) { return db.size(ctx) }
