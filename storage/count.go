package storage

import "sync/atomic"

// onStatement, when set, is told the text of every statement the package
// runs through a statement cache or a held connection (stmtQueryer): every
// query, write, BEGIN, SAVEPOINT and COMMIT of the engine's paths. Tests
// count what one item costs the database with it (CountStatements); unset,
// it costs a load and a nil check per statement.
var onStatement atomic.Pointer[func(query string)]

// CountStatements makes fn be told the text of every statement run from
// now on, in any DB of this process, until stop is called. It is for
// tests and benchmarks that count a path's statements; fn is called from
// the goroutine running the statement, so it must be safe for concurrent
// use. One counter at a time: a second call replaces the first.
func CountStatements(fn func(query string)) (stop func()) {
	onStatement.Store(&fn)
	return func() { onStatement.CompareAndSwap(&fn, nil) }
}

func countStatement(query string) {
	if f := onStatement.Load(); f != nil {
		(*f)(query)
	}
}

// Syncs is how many times the log has been synced (fsync'd) since Open.
func (db *DB) Syncs() int64 { return db.disk.syncs.Load() }

// PagesWritten is how many pages the writer's commits have written to the
// log since Open.
func (db *DB) PagesWritten() int64 { return db.pagesTotal.Load() }
