package storage

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxCachedStmts bounds each statement cache: the read pool's, and each
// held connection's (held.go). The package's fixed queries number well
// under a hundred; the dynamically built ones (IN lists, optional filters)
// repeat, so they fit too. Past the bound a query runs unprepared, so no
// caller can grow the cache without limit.
const maxCachedStmts = 512

// stmtCache keeps one prepared *sql.Stmt per query text for one pool, so
// SQLite parses each of the package's queries once per connection instead of
// on every call. database/sql prepares a cached statement again by itself on
// each connection of the pool that runs it, and modernc.org/sqlite keeps the
// compiled statement and resets it between runs.
//
// A bare "LIMIT ?" defeats the cache: SQLite reads the bound limit while
// planning and marks the statement expired whenever that parameter is bound
// again, so it is parsed anew on every run. The package's queries write
// "LIMIT +?" instead: the same value, planned without looking at it (their
// plans are the same either way).
//
// Every query of this package consumes and closes its rows before it runs
// another query on the same Q, so a statement is never re-entered while its
// rows are open (a SQLite statement has one cursor).
type stmtCache struct {
	stmtQueryer // the read pool's queryer: statements prepared on first use
	db          *sql.DB
	m           sync.Map // query string → *sql.Stmt
	n           atomic.Int32
	mu          sync.Mutex // serialises inserts against close
	closed      bool
}

func newStmtCache(db *sql.DB, told *statementHook, path string) *stmtCache {
	c := &stmtCache{db: db}
	c.stmtQueryer = stmtQueryer{stmt: c.prepare, raw: db, told: told, path: path}
	return c
}

// lookup returns the cached statement of query, or nil.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	if v, ok := c.m.Load(query); ok {
		return v.(*sql.Stmt)
	}
	return nil
}

// prepare returns the statement of query, preparing and caching it on a
// miss; nil when the cache is full or closed, or the query does not prepare
// (the caller then runs it unprepared, which reports the same error as
// before).
func (c *stmtCache) prepare(ctx context.Context, query string) *sql.Stmt {
	if s := c.lookup(query); s != nil {
		return s
	}
	if c.n.Load() >= maxCachedStmts {
		return nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.n.Load() >= maxCachedStmts {
		s.Close()
		return nil
	}
	if v, loaded := c.m.LoadOrStore(query, s); loaded {
		s.Close()
		return v.(*sql.Stmt)
	}
	c.n.Add(1)
	return s
}

// close closes every cached statement; later look-ups miss and queries run
// unprepared on the (closed) pool, failing as they did before.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var err error
	c.m.Range(func(k, v any) bool {
		if e := v.(*sql.Stmt).Close(); e != nil && err == nil {
			err = e
		}
		c.m.Delete(k)
		return true
	})
	c.n.Store(0)
	return err
}

// stmtQueryer runs each query as the prepared statement stmt gives for it,
// or unprepared on raw when it gives none, under a detached context: a
// cancelled context fails the statements after it, and one under way runs
// to its end (watching each one's context took a goroutine a query, and
// a write may share its transaction with other callers').
type stmtQueryer struct {
	stmt func(ctx context.Context, query string) *sql.Stmt
	raw  sqlQueryer
	told *statementHook // its DB's
	path string         // its DB's file, named when it was closed
}

// closed turns database/sql's refusal of a closed pool or connection into
// a ClosedError naming the file; every statement of the package, read or
// write, passes here.
func (q stmtQueryer) closed(err error) error {
	if sqlClosed(err) {
		return &ClosedError{Path: q.path}
	}
	return err
}

// row is *sql.Row whose Scan says a closed database as stmtQueryer does:
// database/sql keeps a row's error until Scan.
type row struct {
	r *sql.Row
	q stmtQueryer
}

func (r row) Scan(dest ...any) error { return r.q.closed(r.r.Scan(dest...)) }

func (q stmtQueryer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = detached(ctx)
	countStatement(q.told, query)
	if s := q.stmt(ctx, query); s != nil {
		res, err := s.ExecContext(ctx, args...)
		return res, q.closed(err)
	}
	res, err := q.raw.ExecContext(ctx, query, args...)
	return res, q.closed(err)
}

func (q stmtQueryer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = detached(ctx)
	countStatement(q.told, query)
	if s := q.stmt(ctx, query); s != nil {
		rows, err := s.QueryContext(ctx, args...)
		return rows, q.closed(err)
	}
	rows, err := q.raw.QueryContext(ctx, query, args...)
	return rows, q.closed(err)
}

func (q stmtQueryer) QueryRowContext(ctx context.Context, query string, args ...any) row {
	ctx = detached(ctx)
	countStatement(q.told, query)
	if s := q.stmt(ctx, query); s != nil {
		return row{s.QueryRowContext(ctx, args...), q}
	}
	return row{q.raw.QueryRowContext(ctx, query, args...), q}
}

// detached is the context a statement runs under: one that has ended is
// kept, so the statement fails at once, as any does; one that has not
// will not end while the statement runs. SQLite may answer an
// interrupted write by rolling back the whole transaction.
func detached(ctx context.Context) context.Context {
	if ctx.Err() == nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}
