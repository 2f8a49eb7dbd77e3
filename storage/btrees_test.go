package storage

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// itemWrites are the kinds of write an item of the files→http job makes to
// the tables whose constraints migration 15 rewrote.
var itemWrites = []string{
	`INSERT INTO runs (workflow_id, handler, handler_type, script_version, phase, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	`UPDATE runs SET phase = ?, status = ?, closed_at = ? WHERE id = ?`,
	`INSERT INTO events (workflow_id, topic, message_id, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
	`UPDATE events SET status = ?, reserved_by = ? WHERE id = ?`,
	`INSERT INTO mutations (run_id, workflow_id, connector, method, params, idempotency_key, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	`UPDATE mutations SET status = ?, resolved_by = ?, result = ? WHERE id = ?`,
	`INSERT INTO run_traces (run_id, at, phase, kind) VALUES (?, ?, ?, ?)`,
}

// temporaryBTrees is db.TemporaryBTrees(query), failing the test on an
// error.
func temporaryBTrees(t *testing.T, db *DB, query string) int {
	t.Helper()
	n, err := db.TemporaryBTrees(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// longInList is an IN over three or more constants: SQLite builds a
// temporary b-tree of them each time it evaluates one.
var longInList = regexp.MustCompile(`(?i)\bIN\s*\(\s*('[^']*'|\d+)(\s*,\s*('[^']*'|\d+)){2,}\s*\)`)

// TestNoTemporaryBTrees: an item's writes build no temporary b-tree for a
// CHECK, a partial index's condition or a trigger's WHEN, and no such list
// is left in the schema. Before migration 15 they built one or more each
// (about 21 an item); the database of the previous schema shows it.
func TestNoTemporaryBTrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	old, err := openKnowing(ctx, path, 14)
	if err != nil {
		t.Fatal(err)
	}
	before := 0
	for _, q := range itemWrites {
		before += temporaryBTrees(t, old, q)
	}
	old.Close()
	if before == 0 {
		t.Fatal("the schema of migration 14 builds no temporary b-tree for an item's writes: the test measures nothing")
	}

	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range itemWrites {
		if n := temporaryBTrees(t, db, q); n != 0 {
			t.Errorf("%s builds %d temporary b-trees", q, n)
		}
	}
	rows, err := db.r.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		if m := longInList.FindString(sql); m != "" {
			t.Errorf("%s still holds %s", name, m)
		}
	}
	t.Logf("an item's writes: %d temporary b-trees before migration 15, 0 after", before)
}

// TestMigration15 upgrades a database of the previous schema with rows in
// it: every row stays, every constraint still refuses what it refused, the
// counters' triggers still count, and the open mutations are still read
// through their index.
func TestMigration15(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	old, err := openKnowing(ctx, path, 14)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO workflows (id, name, status, block_kind, created_at, updated_at) VALUES (1, 'w', 'paused', 'approval', 1, 1)`,
		`INSERT INTO topics (workflow_id, name) VALUES (1, 'item')`,
		`INSERT INTO runs (id, workflow_id, handler, handler_type, script_version, phase, status, created_at, updated_at) VALUES
			(1, 1, 'push', 'consumer', 1, 'committed', 'committed', 1, 1),
			(2, 1, 'push', 'consumer', 1, 'mutating', 'active', 1, 1),
			(3, 1, 'push', 'consumer', 1, 'mutating', 'paused:approval', 1, 1)`,
		`INSERT INTO events (id, workflow_id, topic, message_id, payload, status, created_at, updated_at) VALUES
			(1, 1, 'item', 'a', '{}', 'consumed', 1, 1), (2, 1, 'item', 'b', '{}', 'pending', 1, 1)`,
		`INSERT INTO mutations (id, run_id, workflow_id, connector, method, params, idempotency_key, status, resolved_by, created_at, updated_at) VALUES
			(1, 1, 1, 'http', 'request', '{}', 'k1', 'applied', 'host', 1, 1),
			(2, 2, 1, 'http', 'request', '{}', 'k2', 'in_flight', '', 1, 1),
			(3, 3, 1, 'http', 'request', '{}', 'k3', 'awaiting_approval', '', 1, 1)`,
		`UPDATE runs SET mutation_id = id`,
		`INSERT INTO run_traces (run_id, at, phase, kind) VALUES (1, 1, 'mutate', 'call')`,
		`INSERT INTO event_journal (topic, status, created_at) VALUES ('run.committed', 'done', 1)`,
	} {
		if _, err := old.wc.conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Version(ctx); err != nil || v != SchemaVersion() {
		t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
	}
	for table, n := range map[string]int{"workflows": 1, "runs": 3, "events": 2, "mutations": 3, "run_traces": 1, "event_journal": 1} {
		var got int
		if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&got); err != nil || got != n {
			t.Errorf("%s: %d rows (%v), want %d", table, got, err, n)
		}
	}
	var check string
	if err := db.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q (%v)", check, err)
	}

	exec := func(q string) error {
		_, err := db.wc.conn.ExecContext(ctx, q)
		return err
	}
	// every value each constraint named is still taken, and no other
	for _, c := range []struct{ table, col, column, good string }{
		{"workflows", "status", "status", "archived"},
		{"workflows", "block_kind", "block_kind", "permission"},
		{"runs", "phase", "phase", "emitting"},
		{"runs", "status", "status", "crashed"},
		{"events", "status", "status", "skipped"},
		{"mutations", "status", "status", "skipped"},
		{"mutations", "resolved_by", "resolved_by", "reconciler"},
		{"run_traces", "kind", "kind", "note"},
		{"event_journal", "status", "status", "failed"},
	} {
		where := ` WHERE rowid = (SELECT MIN(rowid) FROM ` + c.table + `)`
		if err := exec(`UPDATE ` + c.table + ` SET ` + c.column + ` = 'bogus'` + where); err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
			t.Errorf("%s.%s = 'bogus': %v, want the CHECK to refuse it", c.table, c.col, err)
		}
		if err := exec(`UPDATE ` + c.table + ` SET ` + c.column + ` = NULL` + where); err == nil {
			t.Errorf("%s.%s = NULL was taken", c.table, c.col)
		}
		if c.table == "runs" || c.table == "mutations" {
			continue // their good values are written below, through the triggers and the index
		}
		if err := exec(`UPDATE ` + c.table + ` SET ` + c.column + ` = '` + c.good + `'` + where); err != nil {
			t.Errorf("%s.%s = %q: %v", c.table, c.col, c.good, err)
		}
	}
	if err := exec(`INSERT INTO mutations (run_id, workflow_id, connector, method, params, idempotency_key, status, created_at, updated_at)
		VALUES (1, 1, 'http', 'request', '{}', 'k4', 'sent', 1, 1)`); err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
		t.Errorf("a mutation inserted as 'sent': %v, want the CHECK to refuse it", err)
	}

	// the in_flight call settles: the counters' triggers move it from the
	// open ones (the index) to the settled ones (mutation_counts)
	if err := exec(`UPDATE mutations SET status = 'applied', resolved_by = 'host' WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if err := exec(`UPDATE runs SET phase = 'committed', status = 'committed', closed_at = 2 WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	counts, err := db.Read().MutationCounts(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := counts["http"]; got["applied"] != 2 || got["awaiting_approval"] != 1 || got["in_flight"] != 0 || len(got) != 2 {
		t.Errorf("mutation counts after the upgrade = %v, want 2 applied, 1 awaiting approval", counts)
	}
	if _, err := db.Read().InputCounts(ctx, 1); err != nil {
		t.Errorf("InputCounts (reads mutations INDEXED BY mutations_open): %v", err)
	}
	var plan strings.Builder
	rows, err := db.r.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT id FROM mutations
		WHERE (status = 'awaiting_approval' OR status = 'in_flight' OR status = 'needs_reconcile' OR status = 'indeterminate')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "mutations_open") {
		t.Errorf("the open mutations are not read through mutations_open:\n%s", plan.String())
	}
}
