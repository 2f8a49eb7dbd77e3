package storage

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

func count(t *testing.T, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.r.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// outputsByInput is the inputs→outputs view in storage terms.
func outputsByInput(t *testing.T, db *DB) map[int64][]string {
	t.Helper()
	_, facts := inputFacts(t, db, "notes-to-csv")
	out := map[int64][]string{}
	for id, f := range facts {
		for _, m := range f.Outputs {
			out[id] = append(out[id], string(m.Status)+" "+m.UITitle)
		}
	}
	return out
}

func TestGC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// the fixture was written before this; everything finished in it is old
	later := time.Now().Add(time.Hour)

	for _, batch := range []int{1, 500} {
		t.Run("gc prunes finished traces and unreferenced runs and keeps every link (batch "+map[int]string{1: "1", 500: "500"}[batch]+")", func(t *testing.T) {
			t.Parallel()
			db := openFixture(t)
			outputs := outputsByInput(t, db)
			openTraces := count(t, db, `SELECT COUNT(*) FROM run_traces WHERE run_id = 10`)
			rep, err := db.GC(ctx, Retention{TracesBefore: later, RunsBefore: later, Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			// runs 5 and 8 are consumer wake-ups that reserved nothing: the
			// only ones nothing points at
			if rep.Runs != 2 || count(t, db, `SELECT COUNT(*) FROM runs WHERE id IN (5, 8)`) != 0 {
				t.Fatalf("runs pruned = %d, want runs 5 and 8 gone (report %+v)", rep.Runs, rep)
			}
			if n := count(t, db, `SELECT COUNT(*) FROM runs`); n != 8 {
				t.Fatalf("%d runs left, want 8", n)
			}
			if n := count(t, db, `SELECT COUNT(*) FROM run_traces`); n != openTraces || openTraces == 0 {
				t.Fatalf("%d trace lines left, want only the %d of the run waiting for approval", n, openTraces)
			}
			if n := count(t, db, `SELECT COUNT(*) FROM runs WHERE id = 10 AND prepare_result IS NOT NULL`); n != 1 {
				t.Fatal("the run waiting for approval lost its prepare result")
			}
			for table, n := range map[string]int{"mutations": 5, "reservations": 5, "inputs": 5, "events": 5, "answers": 0} {
				if got := count(t, db, `SELECT COUNT(*) FROM `+table); got != n {
					t.Errorf("%s: %d rows after gc, want %d", table, got, n)
				}
			}
			after := outputsByInput(t, db)
			if len(after) != 5 || len(outputs) != 5 {
				t.Fatalf("inputs with outputs: %d before, %d after gc, want 5", len(outputs), len(after))
			}
			for id, o := range outputs {
				if len(after[id]) != len(o) || after[id][0] != o[0] {
					t.Fatalf("input %d's outputs %v became %v", id, o, after[id])
				}
			}
			var check string
			if err := db.r.QueryRowContext(ctx, `PRAGMA foreign_key_check`).Scan(&check); err == nil {
				t.Fatalf("foreign_key_check found a dangling row in %s", check)
			}
		})
	}

	t.Run("a run a proposal names is kept, and the proposal still finds it", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		// run 5 is one gc would delete (above): a repair made for it, the
		// person having answered the run by other means (decided or not,
		// the proposal is history and keeps naming it)
		var open, decided int64
		if err := db.Write(ctx, func(tx *Tx) error {
			var err error
			for _, id := range []*int64{&open, &decided} {
				if *id, err = tx.AddProposal(ctx, Proposal{WorkflowID: 1, WorkflowName: "notes-to-csv", BaseVersion: 1,
					Origin: "repair", FileName: "notes.js", Source: "src", RunID: 5, CreatedAt: time.Now()}); err != nil {
					return err
				}
			}
			return tx.DecideProposal(ctx, decided, "rejected", "user", "", 0, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		rep, err := db.GC(ctx, Retention{TracesBefore: later, RunsBefore: later})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Runs != 1 || count(t, db, `SELECT COUNT(*) FROM runs WHERE id = 5`) != 1 || count(t, db, `SELECT COUNT(*) FROM runs WHERE id = 8`) != 0 {
			t.Fatalf("runs pruned = %d: want run 8 gone and run 5, which the proposals name, kept", rep.Runs)
		}
		for _, id := range []int64{open, decided} {
			p, err := db.Read().Proposal(ctx, id)
			if err != nil || p.RunID != 5 {
				t.Fatalf("proposal %d after gc: %+v (%v), want it naming run 5", id, p, err)
			}
		}
		if got := count(t, db, `SELECT COUNT(*) FROM proposals p WHERE p.run_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = p.run_id)`); got != 0 {
			t.Fatalf("%d proposals name a run that is gone", got)
		}
		if got := count(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); got != 0 {
			t.Fatalf("foreign_key_check: %d dangling rows", got)
		}
	})

	t.Run("nothing newer than the cutoff is touched", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		earlier := time.Now().Add(-365 * 24 * time.Hour)
		rep, err := db.GC(ctx, Retention{TracesBefore: earlier, RunsBefore: earlier, CompactBefore: earlier})
		if err != nil || rep.Traces+rep.Runs+rep.Payloads+rep.PrepareResults != 0 {
			t.Fatalf("gc with a cutoff before the fixture: %+v (%v), want nothing removed", rep, err)
		}
	})

	t.Run("compaction keeps done events' messageId and leaves pending ones whole", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		rep, err := db.GC(ctx, Retention{CompactBefore: later, Batch: 2})
		if err != nil || rep.Payloads != 4 {
			t.Fatalf("payloads compacted = %d (%v), want the 4 consumed events", rep.Payloads, err)
		}
		evs, err := db.Read().Events(ctx, 1, "", "", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			var p map[string]any
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				t.Fatal(err)
			}
			switch ev.Status {
			case "consumed":
				if len(p) != 1 || p["messageId"] != ev.MessageID {
					t.Errorf("consumed event %d payload %s, want only its messageId", ev.ID, ev.Payload)
				}
			case "pending":
				if _, ok := p["messageId"]; ok && len(p) == 1 {
					t.Errorf("pending event %d was compacted: %s", ev.ID, ev.Payload)
				}
			}
		}
	})

	t.Run("freed pages go back to the file system", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		big := make([]TraceEntry, 2000)
		for i := range big {
			big[i] = TraceEntry{RunID: 1, At: time.Now(), Phase: "run", Kind: "log", Result: string(make([]byte, 1000))}
		}
		if err := db.Write(ctx, func(tx *Tx) error { return tx.AddTrace(ctx, big) }); err != nil {
			t.Fatal(err)
		}
		before, _ := db.Size(ctx)
		rep, err := db.GC(ctx, Retention{TracesBefore: later})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := db.Size(ctx)
		if rep.PagesFreed == 0 || after >= before-1_000_000 {
			t.Fatalf("size %d → %d bytes, %d pages freed: the space was not given back", before, after, rep.PagesFreed)
		}
	})
}

// TestUnreferencedRunNamesEveryLink: a run gc deletes must be one no row
// names, so every foreign key into runs is looked at by unreferencedRun
// (run traces excepted: they go with their run). A link added to the
// schema and not to the list fails here; and the database refuses the
// delete anyway (the foreign keys are checked when gc's batch commits).
func TestUnreferencedRunNamesEveryLink(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	rows, err := db.r.QueryContext(context.Background(), `SELECT m.name, f."from" FROM sqlite_schema m, pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND f."table" = 'runs' AND m.name <> 'run_traces' ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var links []string
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		links = append(links, table+"."+col)
		if !regexp.MustCompile(`FROM ` + table + ` x (INDEXED BY \w+ )?WHERE x\.` + col + ` = r\.id`).MatchString(unreferencedRun) {
			t.Errorf("%s.%s references runs, and gc does not look at it before deleting a run", table, col)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// the walk sees the links there are (a query that found none would pass)
	want := "events.created_by events.reserved_by inputs.created_by mutations.run_id proposals.run_id reservations.run_id runs.retry_of"
	if got := strings.Join(links, " "); got != want {
		t.Fatalf("links into runs = %q, want %q", got, want)
	}
}

// TestGCHoldsTheWriterOneBatchAtATime: gc gives back the space pruning
// and compaction leave inside pages without a full VACUUM (which bumps
// the schema cookie and rewrites the file in one transaction), and no
// write transaction of it changes more than a few batches' rows.
func TestGCHoldsTheWriterOneBatchAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	db := openFixture(t)
	// a first gc, so that the second runs statements prepared before
	if _, err := db.GC(ctx, Retention{TracesBefore: later, RunsBefore: later, CompactBefore: later}); err != nil {
		t.Fatal(err)
	}
	// a thousand done events with 2 KB payloads, whose compaction empties
	// their pages but frees none of them; a finished run with 3000 trace
	// lines; 600 finished runs nothing points at, each with a prepare
	// result,
	big, _ := json.Marshal(map[string]string{"body": string(make([]byte, 2000))})
	lines := make([]TraceEntry, 3000)
	for i := range lines {
		lines[i] = TraceEntry{RunID: 1, At: time.Now(), Phase: "run", Kind: "log", Result: string(make([]byte, 300))}
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		// then 300 that made one event each: kept, in batches that come
		// after the first ones (whose statements are cached by then)
		var makers []int64
		for i := range 900 {
			now := time.Now()
			id, err := tx.InsertRun(ctx, &Run{WorkflowID: 1, Handler: "poll", HandlerType: "producer", ScriptVersion: 1,
				Phase: "committed", Status: "committed", ClosedAt: &now, CreatedAt: now, UpdatedAt: now, PrepareResult: big})
			if err != nil {
				return err
			}
			if i >= 600 {
				makers = append(makers, id)
			}
		}
		for i := range 1000 {
			var maker int64
			if i < len(makers) {
				maker = makers[i]
			}
			id, err := tx.PublishEvent(ctx, 1, "note.found", "bulk-"+time.Duration(i).String(), big, maker, nil, time.Now())
			if err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `UPDATE events SET status = 'consumed' WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return tx.AddTrace(ctx, lines)
	}); err != nil {
		t.Fatal(err)
	}
	schema := count(t, db, `PRAGMA schema_version`)
	before, _ := db.Size(ctx)
	const batch = 100
	rep, err := db.GC(ctx, Retention{TracesBefore: later, RunsBefore: later, CompactBefore: later, Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Payloads != 1000 || rep.Runs != 600 || rep.PrepareResults != 300 || rep.Traces < 3000 {
		t.Fatalf("gc = %+v; want 1000 payloads and 300 prepare results compacted, 600 runs and over 3000 trace lines pruned", rep)
	}
	if got := count(t, db, `PRAGMA schema_version`); got != schema {
		t.Fatalf("schema cookie %d → %d: gc ran a full VACUUM", schema, got)
	}
	// a batch moves its rows through a temporary copy: copied, changed,
	// deleted, inserted back, copy emptied
	if rep.LargestTx > 5*batch || rep.Transactions < 3000/batch {
		t.Fatalf("%d transactions, the largest changing %d rows: want batches of at most %d rows", rep.Transactions, rep.LargestTx, batch)
	}
	after, _ := db.Size(ctx)
	if after > before/3 {
		t.Fatalf("size %d → %d (%+v): the space left inside pages was kept", before, after, rep)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM events`); n != 1005 {
		t.Fatalf("%d events after gc, want 1005", n)
	}
	if got := count(t, db, `SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'`); got != 0 {
		t.Fatal("integrity_check failed after gc")
	}
	if got := count(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); got != 0 {
		t.Fatalf("foreign_key_check: %d dangling rows", got)
	}
}

// TestGCLooksAtABatchOfRunsATime: the runs a retention keeps (the last
// month's) come after the ones it prunes. The traces step's window read
// the distinct runs of every trace line after the last batch, in every
// batch: on 400,000 runs with 1.6 million lines, 176 ms holding the writer
// per batch of 500. The runs step's last window read every younger run to
// find none. What a transaction reads is measured in page fetches (cached
// or not), not time: a batch of 10 runs here is about 240, the young runs
// and their lines several thousand.
func TestGCLooksAtABatchOfRunsATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	now := time.Now()
	old := now.Add(-48 * time.Hour).UnixMilli()
	if err := db.Write(ctx, func(tx *Tx) error {
		wid, err := tx.CreateWorkflow(ctx, "w", now)
		if err != nil {
			return err
		}
		// 50 old finished runs nothing points at, then 30,000 young ones,
		// four trace lines each
		insert := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
			INSERT INTO runs (workflow_id, handler, handler_type, script_version, phase, status, closed_at, created_at, updated_at)
			SELECT ?, 'poll', 'producer', 1, 'committed', 'committed', ?, ?, ? FROM n`
		if _, err := tx.exec(ctx, insert, 50, wid, old, old, old); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, insert, 30000, wid, now.UnixMilli(), now.UnixMilli(), now.UnixMilli()); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `INSERT INTO run_traces (run_id, at, phase, kind) SELECT r.id, 0, 'run', 'log' FROM runs r, (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cut := now.Add(-time.Hour)
	rep, err := db.GC(ctx, Retention{TracesBefore: cut, RunsBefore: cut, Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 50 || rep.Traces != 200 {
		t.Fatalf("gc = %+v; want the 50 old runs and their 200 lines pruned", rep)
	}
	if rep.LargestTxPages == 0 || rep.LargestTxPages > 600 {
		t.Fatalf("a gc transaction read %d pages (%+v): want a batch's few hundred", rep.LargestTxPages, rep)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM run_traces`); n != 120000 {
		t.Fatalf("%d trace lines left, want the young runs' 120000", n)
	}
}

// TestGCCheckpointDoesNotWaitForReaders: gc's truncating checkpoint, which
// runs holding the writer, waited through the busy timeout (10 s) for any
// reader of an older snapshot, a backup's or a screen's, and every commit
// waited with it. It now does what it can at once; the writer's busy
// timeout is what it was for everything else.
func TestGCCheckpointDoesNotWaitForReaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	write := func(name string) {
		if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, name, time.Now()); return err }); err != nil {
			t.Fatal(err)
		}
	}
	write("w")
	// a reader on its own connection, as a backup's VACUUM INTO is, on the
	// snapshot before the next commit, for the whole gc
	c, err := openSQL(FileURI(db.path))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reader, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Rollback()
	var n int
	if err := reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM workflows`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	write("w2")
	waits := map[string]int{}
	stop := db.CountStatements(func(query string) {
		if strings.HasPrefix(query, "PRAGMA wal_checkpoint(") {
			// the hook runs on the goroutine that holds the writer, just
			// before the checkpoint: the connection is free to ask
			var ms int
			if err := db.wc.conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&ms); err != nil {
				t.Error(err)
			}
			waits[query] = ms
		}
	})
	if _, err := db.GC(ctx, Retention{TracesBefore: time.Now()}); err != nil {
		t.Fatal(err)
	}
	stop()
	if ms, ok := waits["PRAGMA wal_checkpoint(TRUNCATE)"]; !ok || ms != 0 {
		t.Fatalf("gc's checkpoints ran with busy timeouts %v: want the truncating one not to wait for the reader", waits)
	}
	var ms int
	if err := db.wc.conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&ms); err != nil || ms != busyTimeoutMS {
		t.Fatalf("after gc the writer's busy timeout is %d (%v), want %d", ms, err, busyTimeoutMS)
	}
}
