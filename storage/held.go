package storage

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// A heldConn is a connection taken from its pool and kept, with the
// statements prepared on it. Transactions are begun and ended on it by
// statement (BEGIN … COMMIT or ROLLBACK), not through database/sql's Tx: a
// Tx starts a goroutine of its own, and each query in it another, to roll
// back or close when a context ends, and each goroutine started wakes a
// second core on the way (a consumer run started about twenty). Its
// statements run under detached contexts (stmtQueryer), so they start none
// either.
//
// The writer pool's one connection is held from Open to Close (db.wc);
// ReadTx takes read connections held in db.readers.
type heldConn struct {
	stmtQueryer // its statements, prepared on first use
	conn        *sql.Conn

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // query → statement prepared on conn
}

// hold takes a connection of pool.
func hold(ctx context.Context, pool *sql.DB, told *statementHook, path string) (*heldConn, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	c := &heldConn{conn: conn, stmts: map[string]*sql.Stmt{}}
	c.stmtQueryer = stmtQueryer{stmt: c.stmt, raw: conn, told: told, path: path}
	return c, nil
}

// holdWriter takes the writer pool's connection for good; the pool has no
// other, so from here on every write goes through db.wc.
func (db *DB) holdWriter(ctx context.Context) (err error) {
	db.wc, err = hold(ctx, db.w, &db.onStatement, db.path)
	return err
}

// maxHeldReaders is how many read connections ReadTx keeps between
// transactions; one taken past them is given back to the pool after.
const maxHeldReaders = 4

// heldReaders are the read connections ReadTx keeps.
type heldReaders struct {
	mu     sync.Mutex
	free   []*heldConn
	closed bool
}

// takeReader returns a held read connection, or a new one from the pool.
func (db *DB) takeReader(ctx context.Context) (*heldConn, error) {
	h := &db.readers
	h.mu.Lock()
	if h.closed {
		// the pool is closed, or about to be: database/sql would say only
		// "sql: database is closed"
		h.mu.Unlock()
		return nil, db.closedError()
	}
	if n := len(h.free); n > 0 {
		c := h.free[n-1]
		h.free = h.free[:n-1]
		h.mu.Unlock()
		return c, nil
	}
	h.mu.Unlock()
	c, err := hold(ctx, db.r, &db.onStatement, db.path)
	if err != nil && db.readClosed() {
		return nil, db.closedError() // Close began since the check above
	}
	return c, err
}

// readClosed says whether Close has begun: reads of the pool fail after.
func (db *DB) readClosed() bool {
	db.readers.mu.Lock()
	defer db.readers.mu.Unlock()
	return db.readers.closed
}

// putReader keeps c for the next ReadTx, or closes it.
func (db *DB) putReader(c *heldConn) {
	h := &db.readers
	h.mu.Lock()
	if !h.closed && len(h.free) < maxHeldReaders {
		h.free = append(h.free, c)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	_ = c.close()
}

// closeReaders closes the held read connections; one in use is closed
// when its transaction ends.
func (db *DB) closeReaders() error {
	h := &db.readers
	h.mu.Lock()
	free := h.free
	h.free, h.closed = nil, true
	h.mu.Unlock()
	var errs []error
	for _, c := range free {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// stmt returns the statement of query prepared on the connection, preparing
// it on first use; nil when the cache is full, the context has ended, or
// the query does not prepare (the caller runs it unprepared, which reports
// why).
func (c *heldConn) stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s
	}
	if ctx.Err() != nil || len(c.stmts) >= maxCachedStmts {
		return nil
	}
	s, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.stmts[query] = s
	return s
}

// rollback ends the transaction under way, if any: SQLite ends one by
// itself on some errors, and then there is nothing left to roll back.
func (c *heldConn) rollback(ctx context.Context) {
	_, _ = c.ExecContext(ctx, "ROLLBACK")
}

// close closes the statements and gives the connection back to its pool.
func (c *heldConn) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Close())
		delete(c.stmts, q)
	}
	errs = append(errs, c.conn.Close())
	return errors.Join(errs...)
}
