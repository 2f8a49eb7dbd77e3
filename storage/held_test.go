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
	// by goroutine, seen before each transaction begins (a Tx's watcher
	// starts with it): a watcher an earlier query started (Open's) may not
	// have run yet to see its query done, on one core above all
	var before map[string]string
	watched := func(what string, q Q) error {
		rows, err := q.q.QueryContext(ctx, `SELECT id FROM workflows`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for id, watcher := range watchers(t) {
			if _, ok := before[id]; !ok {
				t.Errorf("a %s runs with %s beside it", what, watcher)
			}
		}
		return nil
	}
	before = watchers(t)
	if err := db.Write(ctx, func(tx *Tx) error { return watched("write", tx.Q) }); err != nil {
		t.Fatal(err)
	}
	before = watchers(t)
	if err := db.ReadTx(ctx, func(q Q) error { return watched("read transaction", q) }); err != nil {
		t.Fatal(err)
	}
	before = watchers(t)
	if err := watched("read", db.Read()); err != nil {
		t.Fatal(err)
	}
}

// watchers are the goroutines that watch a context for a query or a
// transaction, by goroutine id (ids are never reused), each with the
// function it runs.
func watchers(t *testing.T) map[string]string {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range strings.Split(b.String(), "\n\n") {
		id, _, _ := strings.Cut(strings.TrimPrefix(g, "goroutine "), " ")
		for _, watcher := range []string{"database/sql.(*Tx).awaitDone", "database/sql.(*Rows).awaitDone", "modernc.org/sqlite.interruptOnDone"} {
			if strings.Contains(g, watcher) {
				out[id] = watcher
			}
		}
	}
	return out
}
