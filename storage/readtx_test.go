package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestReadTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	// open returns a database with one workflow whose handler "h" has state
	// {"n":1}.
	open := func(t *testing.T) (*DB, int64) {
		t.Helper()
		db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		var wf int64
		if err := db.Write(ctx, func(tx *Tx) (err error) {
			if wf, err = tx.CreateWorkflow(ctx, "a", now); err != nil {
				return err
			}
			return tx.SetHandlerState(ctx, wf, "h", []byte(`{"n":1}`), now)
		}); err != nil {
			t.Fatal(err)
		}
		return db, wf
	}
	setState := func(db *DB, wf int64, s string) error {
		return db.Write(ctx, func(tx *Tx) error { return tx.SetHandlerState(ctx, wf, "h", []byte(s), now) })
	}

	t.Run("its reads see one snapshot: a write committed meanwhile is not seen", func(t *testing.T) {
		t.Parallel()
		db, wf := open(t)
		var before, after []byte
		var wfs []*Workflow
		if err := db.ReadTx(ctx, func(q Q) (err error) {
			if before, err = q.HandlerState(ctx, wf, "h"); err != nil {
				return err
			}
			// the writer does not wait for the reader (WAL)
			if err := setState(db, wf, `{"n":2}`); err != nil {
				return err
			}
			if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "b", now); return err }); err != nil {
				return err
			}
			if after, err = q.HandlerState(ctx, wf, "h"); err != nil {
				return err
			}
			wfs, err = q.Workflows(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if string(before) != `{"n":1}` || string(after) != `{"n":1}` {
			t.Errorf("state read %s then %s, want {\"n\":1} both times", before, after)
		}
		if len(wfs) != 1 {
			t.Errorf("%d workflows seen, want the 1 of the snapshot", len(wfs))
		}
		// the next transaction sees the writes
		if err := db.ReadTx(ctx, func(q Q) (err error) {
			after, err = q.HandlerState(ctx, wf, "h")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if string(after) != `{"n":2}` {
			t.Errorf("next transaction read %s, want {\"n\":2}", after)
		}
	})

	t.Run("fn's error is returned as it is", func(t *testing.T) {
		t.Parallel()
		db, wf := open(t)
		boom := errors.New("boom")
		err := db.ReadTx(ctx, func(q Q) error {
			if _, err := q.HandlerState(ctx, wf, "h"); err != nil {
				return err
			}
			return boom
		})
		if err != boom {
			t.Fatalf("ReadTx returned %v, want fn's error", err)
		}
		if _, err := db.Read().WorkflowByID(ctx, wf+1); !errors.Is(err, ErrNotFound) {
			t.Errorf("typed read of a missing row: %v, want ErrNotFound", err)
		}
		err = db.ReadTx(ctx, func(q Q) error { _, err := q.WorkflowByID(ctx, wf+1); return err })
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("ReadTx of a missing row: %v, want ErrNotFound", err)
		}
	})

	t.Run("a cancelled context fails it and leaves the pool whole", func(t *testing.T) {
		t.Parallel()
		db, wf := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		called := false
		err := db.ReadTx(cctx, func(q Q) error { called = true; return nil })
		if !errors.Is(err, context.Canceled) || called {
			t.Errorf("ReadTx under a cancelled context: %v (fn called: %v), want context.Canceled before fn", err, called)
		}
		// cancelled in the middle: the reads after it fail, and every
		// connection goes back to the pool (more transactions than it
		// holds follow)
		for i := 0; i < 8; i++ {
			cctx, cancel := context.WithCancel(ctx)
			err := db.ReadTx(cctx, func(q Q) error {
				if _, err := q.HandlerState(cctx, wf, "h"); err != nil {
					return fmt.Errorf("before the cancel: %w", err)
				}
				cancel()
				_, err := q.HandlerState(cctx, wf, "h")
				return err
			})
			cancel()
			if err == nil {
				t.Fatalf("transaction %d: a read after the cancel succeeded", i)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = db.ReadTx(ctx, func(q Q) error {
					s, err := q.HandlerState(ctx, wf, "h")
					if err == nil && string(s) != `{"n":1}` {
						err = fmt.Errorf("state %s", s)
					}
					return err
				})
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("its queries are prepared once on the connection it keeps, and reused", func(t *testing.T) {
		t.Parallel()
		db, wf := open(t)
		const query = `SELECT state FROM handler_state WHERE workflow_id = ? AND handler = ?`
		var first *sql.Stmt
		for i := 0; i < 3; i++ {
			if err := db.ReadTx(ctx, func(q Q) error { _, err := q.HandlerState(ctx, wf, "h"); return err }); err != nil {
				t.Fatal(err)
			}
			db.readers.mu.Lock()
			free := slices.Clone(db.readers.free)
			db.readers.mu.Unlock()
			if len(free) != 1 {
				t.Fatalf("transaction %d: %d read connections kept, want the one it used", i, len(free))
			}
			free[0].mu.Lock()
			s := free[0].stmts[query]
			free[0].mu.Unlock()
			if s == nil || (first != nil && s != first) {
				t.Fatalf("transaction %d: the statement was not kept (%p, first %p)", i, s, first)
			}
			first = s
		}
	})
}

// BenchmarkStepReads is the scheduler step's five reads between two consumer
// runs (workflow, active run, schedules, oldest pending, handler state),
// made one by one on the read pool or in one ReadTx.
func BenchmarkStepReads(b *testing.B) {
	db, wf, _ := benchDB(b)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		if err := tx.EnsureSchedule(ctx, wf, "h", "consumer"); err != nil {
			return err
		}
		return tx.SetHandlerState(ctx, wf, "h", []byte(`{"n":1}`), now)
	}); err != nil {
		b.Fatal(err)
	}
	// a cancellable context, as the engine's is: database/sql watches it
	// for each query, and for a transaction
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reads := func(q Q) error {
		if _, err := q.WorkflowByID(cctx, wf); err != nil {
			return err
		}
		if _, err := q.ActiveRun(cctx, wf); !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("active run: %w", err)
		}
		if _, err := q.Schedules(cctx, wf); err != nil {
			return err
		}
		if _, err := q.OldestPending(cctx, wf, []string{"t"}); err != nil {
			return err
		}
		_, err := q.HandlerState(cctx, wf, "h")
		return err
	}
	b.Run("separate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := reads(db.Read()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("readtx", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := db.ReadTx(cctx, reads); err != nil {
				b.Fatal(err)
			}
		}
	})
}
