package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"keep/storage"
)

// floorDSN opens a database with storage's pragmas: WAL, synchronous FULL,
// immediate write transactions.
func floorDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	return storage.FileURI(path) + "?" + q.Encode()
}

// floor measures raw durable commits per second on the same file system:
// one small row per transaction, for at least a second and 500 commits.
func floor(ctx context.Context, o Options, r *Results) error {
	db, err := sql.Open("sqlite", floorDSN(filepath.Join(o.Dir, "floor.db")))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("floor database: journal mode %q, want wal", mode)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, v TEXT NOT NULL)"); err != nil {
		return err
	}
	commit := func(i int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO t (at, v) VALUES (?, ?)", time.Now().UnixNano(), fmt.Sprintf("row %d", i)); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	for i := range 20 { // warm up: the file, its WAL, the page cache
		if err := commit(i); err != nil {
			return err
		}
	}
	n := 0
	start := time.Now()
	for n < 500 || time.Since(start) < 2*time.Second {
		if err := commit(n); err != nil {
			return err
		}
		n++
		if n >= 100_000 {
			break
		}
	}
	el := time.Since(start)
	r.FloorCommitsPerS = float64(n) / el.Seconds()
	o.Logf("floor: %d durable commits in %s: %.0f/s", n, el.Round(time.Millisecond), r.FloorCommitsPerS)
	return nil
}
