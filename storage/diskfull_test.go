package storage

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFullDisk: a write that finds no room (SQLite's max_page_count is the
// full disk SQLite itself reports, without a file system to fill) fails
// naming the database's file, and every write committed before it stays.
func TestFullDisk(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	var wid int64
	if err := db.Write(ctx, func(tx *Tx) (err error) { wid, err = tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := db.wc.conn.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.wc.conn.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages+20)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 3000)
	committed := 0
	var full error
	for i := 1; i <= 200 && full == nil; i++ {
		full = db.Write(ctx, func(tx *Tx) error {
			return tx.InsertInput(ctx, &Input{ID: int64(i), WorkflowID: wid, Source: "s", Type: "t", ExternalID: strconv.Itoa(i), Title: big, CreatedAt: time.Now()})
		})
		if full == nil {
			committed = i
		}
	}
	if full == nil || !strings.Contains(full.Error(), "full") || !strings.Contains(full.Error(), db.Path()) {
		t.Fatalf("the write that found the disk full: %v, want an error naming %s", full, db.Path())
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := count(t, db, `SELECT COUNT(*) FROM inputs`); n != committed || committed == 0 {
		t.Fatalf("%d inputs after the disk filled, %d committed", n, committed)
	}
}
