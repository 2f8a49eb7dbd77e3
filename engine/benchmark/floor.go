package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"keep/storage"

	_ "modernc.org/sqlite" // the "sqlite" driver, as storage uses it
)

// floorPageSize creates the floor's database with keep's page size, which
// must be set before WAL is (storage/pagesize.go).
func floorPageSize(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{fmt.Sprintf("PRAGMA page_size = %d", storage.PageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return db.Close()
}

// floorDSN opens a database with storage's pragmas: WAL, synchronous FULL,
// immediate write transactions.
func floorDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// floor measures raw durable commits per second on the same file system:
// one small row per transaction, for at least a second and 500 commits,
// in pages of the size keep's own database has.
func floor(ctx context.Context, o Options, r *Results) error {
	path := filepath.Join(o.Dir, "floor.db")
	if err := floorPageSize(ctx, path); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", floorDSN(path))
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
	var size int
	if err := db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil {
		return err
	}
	if size != storage.PageSize {
		return fmt.Errorf("floor database: page size %d, want keep's %d", size, storage.PageSize)
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
