package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// openTemp opens a new database in a temp dir, closed when the test ends.
func openTemp(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// queryPlan returns the detail lines of EXPLAIN QUERY PLAN for query.
func queryPlan(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}
