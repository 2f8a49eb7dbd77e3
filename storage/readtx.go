package storage

import (
	"context"
	"errors"
	"fmt"
)

// ReadTx runs fn's reads in one read transaction on a read connection it
// keeps (held.go). They see one snapshot of the database — the one its
// first read finds — whatever commits meanwhile, and together they take one
// connection and one WAL read lock, where reads through Read take one each.
//
// fn reads through q only and does not keep it: a read through Read inside
// fn would take a second connection of the pool, and transactions holding
// all of them would wait for one forever. An error from fn is returned as
// it is. A cancelled ctx fails the reads after it (a read under
// way runs to its end: they are short).
func (db *DB) ReadTx(ctx context.Context, fn func(q Q) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := db.takeReader(ctx)
	if errors.Is(err, ErrClosed) {
		return err
	}
	if err != nil {
		return fmt.Errorf("storage: begin read: %w", err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		c.rollback(ctx)
		_ = c.close()
		if db.readClosed() {
			return db.closedError()
		}
		return fmt.Errorf("storage: begin read: %w", err)
	}
	err = fn(Q{q: c})
	// It wrote nothing: a rollback ends it. A connection that cannot end
	// its transaction is not kept.
	if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		_ = c.close()
	} else {
		db.putReader(c)
	}
	return err
}

// ReadLatest runs fn's reads on the writer connection when no write is
// under way, holding the writer lock: no commit starts while fn reads, so
// its reads see one state of the database, the latest committed, without
// a transaction of their own. It is for a short read of what the next
// write depends on (the scheduler's step), which a read connection pays
// for twice: every commit since its last read empties its page cache
// (WAL), and it begins and ends a transaction; the writer's cache holds
// what the writes just touched. When a write is under way, fn does not
// wait for it: it runs in a ReadTx, which gives the same guarantee.
//
// fn reads through q only, and neither writes nor waits for a write or
// for anything a writer may hold: writes queue behind it. An error from fn
// is returned as it is.
func (db *DB) ReadLatest(ctx context.Context, fn func(q Q) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !db.wmu.TryLock() {
		return db.ReadTx(ctx, fn)
	}
	defer db.wmu.Unlock()
	if db.closed {
		return db.closedError()
	}
	return fn(Q{q: db.wc})
}
