package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// ReadTx runs fn's reads in one read transaction on the read pool. They see
// one snapshot of the database — the one its first read finds — whatever
// commits meanwhile, and together they take one pool connection and one WAL
// read lock, where reads through Read take one each.
//
// fn reads through q only and does not keep it. A read through Read inside
// fn would need a second pool connection, and transactions holding all of
// them would wait for one forever. An error from fn is returned as it is; a cancelled ctx
// fails the reads after it and ends the transaction.
func (db *DB) ReadTx(ctx context.Context, fn func(q Q) error) error {
	sqlTx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("storage: begin read: %w", err)
	}
	// The writer's transaction queryer serves here too: cached statements
	// are bound to the transaction, which reuses them where its connection
	// prepared them already. A miss runs unprepared and is prepared on the
	// pool once the transaction has ended, for the reason above.
	tq := txQueryer{tx: sqlTx, c: db.rstmts}
	err = fn(Q{q: &tq})
	// It wrote nothing: a rollback ends it. (A cancelled ctx may have
	// rolled it back already: ErrTxDone.)
	_ = sqlTx.Rollback()
	tq.learn(ctx)
	return err
}
