package storage

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxCachedStmts bounds each pool's statement cache. The package's fixed
// queries number well under a hundred; the dynamically built ones (IN lists,
// optional filters) repeat, so they fit too. Past the bound a query runs
// unprepared, so no caller can grow the cache without limit.
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
	db     *sql.DB
	m      sync.Map // query string → *sql.Stmt
	n      atomic.Int32
	mu     sync.Mutex // serialises inserts against close
	closed bool
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db} }

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
// before). It must not be called while the pool's only connection is held
// (the writer's transaction), or it would wait for it forever.
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

// The read pool's queryer: cached statements, prepared on first use.

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := c.prepare(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return c.db.ExecContext(ctx, query, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := c.prepare(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := c.prepare(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, query, args...)
}

// txQueryer runs a transaction's statements through its pool's cache: a
// write transaction's through the writer's (DB.Write), a read
// transaction's through the read pool's (DB.ReadTx). A cached statement is
// bound to the transaction with StmtContext, which reuses the statement
// already prepared on the pool.
//
// The transaction holds its connection (the writer pool has only that one),
// so a statement is not prepared on the pool mid-transaction; a query
// missing from the cache is prepared on the transaction, for the rest of
// it, and learn prepares it on the pool once the transaction has ended.
type txQueryer struct {
	tx *sql.Tx
	c  *stmtCache
	// detached: a statement's context may end without interrupting it
	// (the transaction may hold other callers' writes, batch.go)
	detached bool

	mu    sync.Mutex
	bound map[string]*sql.Stmt // query → statement bound to tx; nil: runs unprepared
	fresh map[string]bool      // prepared on tx, not on the pool yet: for learn
}

// context is the one a statement runs under. A detached transaction's
// statement fails at once if its context has ended, as any does, but a
// context that ends while it runs does not interrupt it: SQLite may answer
// an interrupted write by rolling back the whole transaction.
func (t *txQueryer) context(ctx context.Context) context.Context {
	if t.detached && ctx.Err() == nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (t *txQueryer) stmt(ctx context.Context, query string) *sql.Stmt {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.bound[query]; ok {
		return s
	}
	if ctx.Err() != nil {
		// StmtContext would bind the context's error to the statement for
		// the rest of the transaction; run unprepared, which reports it.
		return nil
	}
	var ts *sql.Stmt
	if s := t.c.lookup(query); s != nil {
		ts = t.tx.StmtContext(ctx, s)
	} else if len(t.bound) < maxCachedStmts {
		// On the transaction's connection, for the rest of it: a query it
		// runs many times (a producer's inserts, three per input) is parsed
		// once, not on every run. A query that does not prepare runs
		// unprepared, which reports why.
		if s, err := t.tx.PrepareContext(ctx, query); err == nil {
			ts = s
			if t.fresh == nil {
				t.fresh = make(map[string]bool)
			}
			t.fresh[query] = true
		}
	}
	if ts != nil || len(t.bound) < maxCachedStmts {
		if t.bound == nil {
			t.bound = make(map[string]*sql.Stmt)
		}
		t.bound[query] = ts
	}
	return ts
}

func (t *txQueryer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = t.context(ctx)
	if s := t.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t *txQueryer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = t.context(ctx)
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t *txQueryer) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.context(ctx)
	if s := t.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// learn prepares, on the pool, the queries the transaction prepared for
// itself; call it after the transaction ended and released the connection.
func (t *txQueryer) learn(ctx context.Context) {
	t.mu.Lock()
	var todo []string
	for q := range t.fresh {
		todo = append(todo, q)
	}
	t.bound, t.fresh = nil, nil
	t.mu.Unlock()
	if len(todo) == 0 || ctx.Err() != nil {
		return
	}
	for _, q := range todo {
		if t.c.prepare(ctx, q) == nil && ctx.Err() != nil {
			return
		}
	}
}
