package storage

import (
	"context"
	"encoding/json"
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

func TestRepack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	setup := func(t *testing.T) *DB {
		t.Helper()
		db := openFixture(t)
		// a thousand done events with 2 KB payloads: compaction empties
		// their pages but frees none of them
		big, _ := json.Marshal(map[string]string{"body": string(make([]byte, 2000))})
		if err := db.Write(ctx, func(tx *Tx) error {
			for i := range 1000 {
				id, err := tx.PublishEvent(ctx, 1, "note.found", "bulk-"+time.Duration(i).String(), big, 0, nil, time.Now())
				if err != nil {
					return err
				}
				if _, err := tx.exec(ctx, `UPDATE events SET status = 'consumed' WHERE id = ?`, id); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return db
	}

	t.Run("when pruning leaves most of the file as holes inside pages, gc rewrites it", func(t *testing.T) {
		t.Parallel()
		db := setup(t)
		before, _ := db.Size(ctx)
		rep, err := db.GC(ctx, Retention{CompactBefore: later})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := db.Size(ctx)
		if !rep.Repacked || after > before/3 {
			t.Fatalf("repacked %v, size %d → %d: the emptied pages were kept", rep.Repacked, before, after)
		}
		if n := count(t, db, `SELECT COUNT(*) FROM events`); n != 1005 {
			t.Fatalf("%d events after the repack, want 1005", n)
		}
	})

	t.Run("a negative RepackAbove never rewrites the file", func(t *testing.T) {
		t.Parallel()
		db := setup(t)
		rep, err := db.GC(ctx, Retention{CompactBefore: later, RepackAbove: -1})
		if err != nil || rep.Repacked || rep.Payloads != 1004 {
			t.Fatalf("gc = %+v, %v; want 1004 payloads compacted and no repack", rep, err)
		}
	})
}
