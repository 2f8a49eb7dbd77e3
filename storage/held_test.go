package storage

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
)

// TestNoQueryStartsAWatcher: a write, a read transaction and a read of
// the pool, each with a query open, start no goroutine to watch a
// cancellable context (database/sql's Tx starts one for the transaction,
// and database/sql and the driver one for each query, each waking a second
// core, for a cancel that a short query need not see at once).
func TestNoQueryStartsAWatcher(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	watched := func(what string, q Q) error {
		rows, err := q.q.QueryContext(ctx, `SELECT id FROM workflows`)
		if err != nil {
			return err
		}
		defer rows.Close()
		var b bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
			return err
		}
		for _, watcher := range []string{"database/sql.(*Tx).awaitDone", "database/sql.(*Rows).awaitDone", "modernc.org/sqlite.interruptOnDone"} {
			if strings.Contains(b.String(), watcher) {
				t.Errorf("a %s runs with %s beside it", what, watcher)
			}
		}
		return nil
	}
	if err := db.Write(ctx, func(tx *Tx) error { return watched("write", tx.Q) }); err != nil {
		t.Fatal(err)
	}
	if err := db.ReadTx(ctx, func(q Q) error { return watched("read transaction", q) }); err != nil {
		t.Fatal(err)
	}
	if err := watched("read", db.Read()); err != nil {
		t.Fatal(err)
	}
}
