package storage

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
)

// statementHook, when set, is told the text of every statement a DB runs
// through a statement cache or a held connection (stmtQueryer): every
// query, write, BEGIN, SAVEPOINT and COMMIT of the engine's paths. Tests
// count what one item costs the database with it (CountStatements); unset,
// it costs a load and a nil check per statement. It is the DB's own, so a
// test counting one database does not count another test's beside it.
type statementHook = atomic.Pointer[func(query string)]

// CountStatements makes fn be told the text of every statement db runs from
// now on, until stop is called. It is for tests and benchmarks that count a
// path's statements; fn is called from the goroutine running the statement,
// so it must be safe for concurrent use. One counter at a time: a second
// call replaces the first.
func (db *DB) CountStatements(fn func(query string)) (stop func()) {
	db.onStatement.Store(&fn)
	return func() { db.onStatement.CompareAndSwap(&fn, nil) }
}

func countStatement(h *statementHook, query string) {
	if f := h.Load(); f != nil {
		(*f)(query)
	}
}

// Syncs is how many times the log has been synced (fsync'd) since Open.
func (db *DB) Syncs() int64 { return db.disk.syncs.Load() }

// PagesWritten is how many pages the writer's commits have written to the
// log since Open.
func (db *DB) PagesWritten() int64 { return db.pagesTotal.Load() }

// TemporaryBTrees is how many temporary b-trees (EXPLAIN: OpenEphemeral)
// query's program opens each time it runs, its triggers' programs
// included: an `IN` over three or more constants builds one, for a CHECK,
// a partial index's condition or a trigger's WHEN as for a query's WHERE.
// It is for tests that count what a path costs; query is explained on a
// read connection, with NULL for each parameter, not run.
func (db *DB) TemporaryBTrees(ctx context.Context, query string) (int, error) {
	args := make([]any, strings.Count(query, "?"))
	rows, err := db.r.QueryContext(ctx, `EXPLAIN `+query, args...)
	if err != nil {
		return 0, fmt.Errorf("storage: explain %q: %w", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		if op, _ := vals[1].(string); op == "OpenEphemeral" {
			n++
		}
	}
	return n, rows.Err()
}
