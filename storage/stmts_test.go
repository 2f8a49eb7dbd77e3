package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/engine/enginetest/kit"
)

func TestStatementCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	open := func(t *testing.T) *DB {
		t.Helper()
		db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	const insertWorkflow = `INSERT INTO workflows(name, created_at, updated_at) VALUES (?, ?, ?)`

	// cached is the writer connection's statement of query, if any.
	cached := func(db *DB, query string) *sql.Stmt {
		db.wc.mu.Lock()
		defer db.wc.mu.Unlock()
		return db.wc.stmts[query]
	}

	t.Run("a write's statement is prepared on the writer's connection at first use and reused by the writes after it", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		if cached(db, insertWorkflow) != nil {
			t.Fatal("cached before any write")
		}
		var first *sql.Stmt
		for i := 0; i < 3; i++ {
			if err := db.Write(ctx, func(tx *Tx) error {
				for j := 0; j < 3; j++ {
					if _, err := tx.CreateWorkflow(ctx, fmt.Sprintf("w%d-%d", i, j), now); err != nil {
						return err
					}
					s := cached(db, insertWorkflow)
					if s == nil {
						return fmt.Errorf("write %d, insert %d: the insert ran unprepared", i, j)
					}
					if first == nil {
						first = s
					}
					if s != first {
						return fmt.Errorf("write %d, insert %d: the insert was prepared again", i, j)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		wfs, err := db.Read().Workflows(ctx)
		if err != nil || len(wfs) != 9 {
			t.Fatalf("workflows: %d, %v; want 9", len(wfs), err)
		}
	})

	t.Run("a failing statement keeps its error and is not cached", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		const bad = `INSERT INTO no_such_table(x) VALUES (?)`
		for i := 0; i < 2; i++ {
			err := db.Write(ctx, func(tx *Tx) error {
				_, err := tx.exec(ctx, bad, 1)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "no_such_table") {
				t.Fatalf("insert into a missing table: %v, want an error naming it", err)
			}
		}
		if cached(db, bad) != nil {
			t.Error("a failing statement was cached")
		}
		_, err := db.Read().q.QueryContext(ctx, `SELECT x FROM no_such_table`)
		if err == nil {
			t.Error("read of a missing table succeeded")
		}
	})

	t.Run("the cache is bounded; past the bound queries run unprepared", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		for i := 0; i < maxCachedStmts+20; i++ {
			var n int
			if err := db.Read().q.QueryRowContext(ctx, `SELECT `+strconv.Itoa(i)).Scan(&n); err != nil || n != i {
				t.Fatalf("select %d: %d, %v", i, n, err)
			}
		}
		if n := db.rstmts.n.Load(); n != maxCachedStmts {
			t.Errorf("read cache holds %d statements, want %d", n, maxCachedStmts)
		}
		if err := db.Write(ctx, func(tx *Tx) error {
			for i := 0; i < maxCachedStmts+20; i++ {
				var n int
				if err := tx.q.QueryRowContext(ctx, `SELECT `+strconv.Itoa(i)).Scan(&n); err != nil || n != i {
					return fmt.Errorf("select %d: %d, %v", i, n, err)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		db.wc.mu.Lock()
		n := len(db.wc.stmts)
		db.wc.mu.Unlock()
		if n != maxCachedStmts {
			t.Errorf("writer cache holds %d statements, want %d", n, maxCachedStmts)
		}
	})

	t.Run("a cancelled context fails the statement, not the rest of the transaction", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "a", now); return err }); err != nil {
			t.Fatal(err)
		}
		if err := db.Write(ctx, func(tx *Tx) error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := tx.CreateWorkflow(cctx, "b", now); !errors.Is(err, context.Canceled) {
				return fmt.Errorf("create with a cancelled context: %v", err)
			}
			_, err := tx.CreateWorkflow(ctx, "c", now)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("concurrent readers and a writer share the cached statements", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		var wf int64
		if err := db.Write(ctx, func(tx *Tx) (err error) {
			if wf, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
				return err
			}
			return tx.EnsureTopic(ctx, wf, "t")
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := db.Write(ctx, func(tx *Tx) error {
					_, err := tx.PublishEvent(ctx, wf, "t", strconv.Itoa(i), json.RawMessage(`{}`), 0, nil, now)
					return err
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
		for r := 0; r < 6; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					if _, err := db.Read().Peek(ctx, wf, "t", 10); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		kit.WaitGroup(t, &wg, kit.Timeout)
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		evs, err := db.Read().Peek(ctx, wf, "t", 100)
		if err != nil || len(evs) != 50 {
			t.Fatalf("peek: %d, %v; want 50", len(evs), err)
		}
	})

	t.Run("reads after Close fail as before", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		if _, err := db.Read().Workflows(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Read().Workflows(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("read after close: %v, want ErrClosed", err)
		}
	})
}
