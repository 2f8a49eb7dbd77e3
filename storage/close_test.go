package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseWaitsForTheWritersReads: Close while a ReadLatest steps through
// rows on the writer's connection waits for it, where it freed the
// statement under the read (a fault that took the whole process); after
// Close, a write and a ReadLatest fail with ErrClosed.
func TestCloseWaitsForTheWritersReads(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t) // its cleanup's Close is the third: nothing
	closed := make(chan error, 1)
	var rows int
	err := db.ReadLatest(ctx, func(q Q) error {
		rs, err := q.q.QueryContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000) SELECT i FROM n`)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			if rows++; rows == 1 {
				go func() { closed <- db.Close() }()
				// Close, if it does not wait, is done well before this
				select {
				case err := <-closed:
					closed <- err
					t.Errorf("Close returned (%v) while a read on the writer's connection was under way", err)
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
		return rs.Err()
	})
	if err != nil {
		t.Fatalf("the read under way when Close was called: %v", err)
	}
	if rows != 1000 {
		t.Errorf("read %d rows, want 1000", rows)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.ReadLatest(ctx, func(Q) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadLatest after Close = %v, want ErrClosed", err)
	}
	if err := db.Write(ctx, func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestReadsAfterCloseSayClosed: the reads that open a connection of the
// read pool after Close fail with ErrClosed, as writes do, not with
// database/sql's "sql: database is closed".
func TestReadsAfterCloseSayClosed(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	// a held read connection, kept for the next ReadTx
	if err := db.ReadTx(ctx, func(Q) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.ReadTx(ctx, func(Q) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadTx after Close = %v, want ErrClosed", err)
	}
	if _, err := db.Version(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Version after Close = %v, want ErrClosed", err)
	}
	if _, err := db.Size(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Size after Close = %v, want ErrClosed", err)
	}
	if _, err := db.GC(ctx, Retention{TracesBefore: time.Now()}); !errors.Is(err, ErrClosed) {
		t.Errorf("GC after Close = %v, want ErrClosed", err)
	}
}

// TestReadTxRacingClose: a ReadTx that starts while Close runs fails with
// ErrClosed, not with database/sql's error about the pool Close closed
// under it.
func TestReadTxRacingClose(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 30; round++ {
		db := openTemp(t)
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					var n int
					err := db.ReadTx(ctx, func(q Q) error {
						return q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs`).Scan(&n)
					})
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							errs <- err
						}
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5+1) * time.Millisecond)
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

// TestWritesRacingClose: writes, synced and not, racing Close either fail
// with ErrClosed or are in the database when it opens again.
func TestWritesRacingClose(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 5; round++ {
		db := openTemp(t)
		path := db.Path()
		var wid int64
		db.Write(ctx, func(tx *Tx) (err error) { wid, err = tx.CreateWorkflow(ctx, "w", time.Now()); return err })
		var ok sync.Map
		var wg sync.WaitGroup
		var next atomic.Int64
		var others atomic.Int64
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for {
					id := next.Add(1)
					write := db.Write
					if g%2 == 1 {
						write = db.WriteUnsynced
					}
					err := write(ctx, func(tx *Tx) error {
						return tx.InsertInput(ctx, &Input{ID: id, WorkflowID: wid, Source: "s", Type: "t", ExternalID: strconv.FormatInt(id, 10), Title: "x", CreatedAt: time.Now()})
					})
					if err == nil {
						ok.Store(id, true)
						continue
					}
					if !errors.Is(err, ErrClosed) {
						others.Add(1)
						t.Errorf("a write racing Close: %v", err)
					}
					return
				}
			}(g)
		}
		time.Sleep(time.Duration(5+round) * time.Millisecond)
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		wg.Wait()
		db2, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ok.Range(func(k, v any) bool {
			n++
			if count(t, db2, `SELECT COUNT(*) FROM inputs WHERE id = ?`, k) != 1 {
				t.Errorf("input %v acknowledged, missing", k)
			}
			return true
		})
		if others.Load() > 0 || n == 0 {
			t.Errorf("round %d: %d writes acknowledged, %d failed otherwise than closed", round, n, others.Load())
		}
		db2.Close()
	}
}

// TestAfterCloseTheErrorNamesTheFile: every way in after Close — a read of
// the pool (a list, and a single row, whose error database/sql keeps
// until Scan), a read transaction, a write — says that keep's database,
// by its path, was closed, never database/sql's bare "sql: database is
// closed"; and it is still ErrClosed to errors.Is.
func TestAfterCloseTheErrorNamesTheFile(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	// both read paths have run once, so their statements are cached
	if _, err := db.Read().Workflows(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Read().WorkflowByName(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Read().Workflows":      func() error { _, err := db.Read().Workflows(ctx); return err }(),
		"Read().WorkflowByName": func() error { _, err := db.Read().WorkflowByName(ctx, "w"); return err }(),
		"ReadTx":                db.ReadTx(ctx, func(Q) error { return nil }),
		"Write":                 db.Write(ctx, func(*Tx) error { return nil }),
	} {
		if !errors.Is(err, ErrClosed) || !strings.Contains(fmt.Sprint(err), db.Path()) || !strings.Contains(fmt.Sprint(err), "was closed") ||
			strings.Contains(fmt.Sprint(err), "sql: database is closed") {
			t.Errorf("%s after Close: %v, want that keep's database %s was closed", what, err, db.Path())
		}
	}
}
