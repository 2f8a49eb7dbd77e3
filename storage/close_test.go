package storage

import (
	"context"
	"errors"
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
