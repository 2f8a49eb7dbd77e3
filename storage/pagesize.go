package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
)

// PageSize is the page size of a database keep creates. A commit writes
// every page it changed, whole, to the log, and the log is synced before a
// call goes out: a consumer run changes a row or two in each of some
// thirty b-trees (its tables and their indexes), so the bytes it writes
// and syncs are about thirty pages, whatever the rows' sizes. 1 KiB pages
// make that a quarter of what SQLite's default 4 KiB does.
const PageSize = 1024

// checkpointLogBytes is how much log is checkpointed at once: SQLite's
// default of 1,000 pages of its default 4 KiB.
const checkpointLogBytes = 1000 * 4096

// newFileLayout gives a new, empty database file keep's page size. SQLite
// fixes the size when the first page is written, which switching to WAL
// does, and the driver runs its pragmas in name order (journal_mode before
// page_size): so the size is set here, on a connection of its own, before
// the database is opened. A database made with another size keeps it.
func newFileLayout(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if fi.Size() > 0 {
		return nil
	}
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	defer c.Close()
	for _, p := range []string{fmt.Sprintf("PRAGMA page_size = %d", PageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := c.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("storage: create %s: %s: %w", path, p, err)
		}
	}
	return c.Close()
}

// pageSize is the page size of the database open on conn.
func pageSize(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, "PRAGMA page_size").Scan(&n); err != nil {
		return 0, fmt.Errorf("storage: page size: %w", err)
	}
	return n, nil
}
