package storage

import (
	"context"
	"database/sql"
	"fmt"

	"modernc.org/sqlite"
)

// SQLite's automatic checkpoint syncs the log before it copies it into the
// database file, whatever the log then holds: it could carry a record of an
// effect whose own sync is still under way (SyncAfter). So the writer runs
// with wal_autocheckpoint(0), and storage checkpoints itself, at the same
// size SQLite would, after settling those effects.

// checkpointPages is SQLite's default automatic checkpoint: the log is
// copied back once this many pages have been written to it.
const checkpointPages = 1000

// countLogPages adds what the commit on conn wrote to the log. The writer's
// "cache write" counter counts the pages its commits hand to the log.
func (db *DB) countLogPages(conn *sql.Conn) {
	_ = conn.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			return nil
		}
		n, _, err := st.Status(sqlite.DBStatusCacheWrite, false)
		if err == nil {
			db.logPages += n - db.pagesWritten
			db.pagesTotal.Add(int64(n - db.pagesWritten))
			db.pagesWritten = n
		}
		return nil
	})
}

// checkpointLocked copies the log into the database file once commit n and
// every effect it may record are on disk. The caller holds the writer lock,
// so nothing is committed in between. A failure is left for the next sync
// to report: the commit itself stands.
func (db *DB) checkpointLocked(ctx context.Context, n uint64) {
	if err := db.disk.syncTo(n); err != nil {
		return
	}
	countStatement(&db.onStatement, `PRAGMA wal_checkpoint(PASSIVE)`)
	if _, err := db.wc.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		db.logger.Warn("checkpoint failed", "err", err)
		return
	}
	db.logPages = 0
}

// checkpoint runs a checkpoint of mode (PASSIVE, TRUNCATE…) for gc, under
// the writer lock, once every commit and effect so far is on disk.
func (db *DB) checkpoint(ctx context.Context, mode string) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.closed {
		return db.closedError()
	}
	db.disk.mu.Lock()
	n := db.disk.written
	db.disk.mu.Unlock()
	if err := db.disk.syncTo(n); err != nil {
		return err
	}
	// Every mode but PASSIVE waits, through the busy timeout (10 s), for
	// readers of an older snapshot to finish, and it waits holding the
	// writer: a backup or a screen reading then held every commit up for
	// 10 s. Without the wait it does what it can now (the log is truncated
	// by a later gc, or reused from its start once those readers are gone).
	if mode != "PASSIVE" {
		if _, err := db.wc.conn.ExecContext(detached(ctx), `PRAGMA busy_timeout = 0`); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		defer db.wc.conn.ExecContext(detached(ctx), fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyTimeoutMS))
	}
	query := `PRAGMA wal_checkpoint(` + mode + `)`
	countStatement(&db.onStatement, query)
	if _, err := db.wc.conn.ExecContext(ctx, query); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	db.logPages = 0
	return nil
}
