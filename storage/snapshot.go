package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// Snapshot writes a consistent copy of the database to path, a file that
// must not exist, with VACUUM INTO: one read transaction on a connection of
// its own (the read pool is query_only, which VACUUM INTO is not), so the
// writer is never held up and the database is not changed. A dry run
// works on such a copy.
func (db *DB) Snapshot(ctx context.Context, path string) error {
	c, err := sql.Open("sqlite", "file:"+db.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("storage: snapshot to %s: %w", path, err)
	}
	return nil
}
