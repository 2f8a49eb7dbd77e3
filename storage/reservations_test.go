package storage

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMigration17 upgrades a database of the previous schema with a
// reservation history in it: every reservation stays, the history is
// still append-only and one row per (run, event), it has no rowid (the
// page an item's prepared checkpoint no longer writes), and the queries
// that read it by run and by event still go through a key.
func TestMigration17(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	old, err := openKnowing(ctx, path, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO workflows (id, name, created_at, updated_at) VALUES (1, 'w', 1, 1)`,
		`INSERT INTO topics (workflow_id, name) VALUES (1, 'item')`,
		`INSERT INTO inputs (id, workflow_id, source, type, external_id, title, created_at) VALUES (1, 1, 'files', 'file', 'a', 'a', 1), (2, 1, 'files', 'file', 'b', 'b', 1)`,
		`INSERT INTO runs (id, workflow_id, handler, handler_type, script_version, phase, status, closed_at, created_at, updated_at) VALUES
			(1, 1, 'push', 'consumer', 1, 'mutating', 'crashed', 2, 1, 1),
			(2, 1, 'push', 'consumer', 1, 'mutating', 'active', NULL, 1, 1),
			(3, 1, 'push', 'consumer', 1, 'committed', 'committed', 3, 1, 1)`,
		`INSERT INTO events (id, workflow_id, topic, message_id, payload, status, reserved_by, created_at, updated_at) VALUES
			(1, 1, 'item', 'a', '{}', 'pending', 2, 1, 1), (2, 1, 'item', 'b', '{}', 'consumed', 3, 1, 1)`,
		`INSERT INTO event_causes (event_id, input_id) VALUES (1, 1), (2, 2)`,
		// run 2 took event 1 over from run 1, which had reserved it first;
		// inserted out of key order, as ids and runs interleave
		`INSERT INTO reservations (id, run_id, event_id, created_at) VALUES (1, 3, 2, 1), (2, 1, 1, 1), (3, 2, 1, 2)`,
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
	if v, err := db.Version(ctx); err != nil || v < 17 {
		t.Fatalf("schema version %d (%v), want 17 or later", v, err)
	}
	type res struct{ run, event, at int64 }
	var got []res
	rows, err := db.r.QueryContext(ctx, `SELECT run_id, event_id, created_at FROM reservations`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r res
		if err := rows.Scan(&r.run, &r.event, &r.at); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	rows.Close()
	if want := []res{{1, 1, 1}, {2, 1, 2}, {3, 2, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("reservations after the upgrade = %v, want %v (in key order)", got, want)
	}
	for _, q := range []string{`PRAGMA integrity_check`, `PRAGMA foreign_key_check`} {
		var out string
		err := db.r.QueryRowContext(ctx, q).Scan(&out)
		if q == `PRAGMA integrity_check` && (err != nil || out != "ok") || q != `PRAGMA integrity_check` && err == nil {
			t.Errorf("%s: %q (%v)", q, out, err)
		}
	}
	exec := func(q string) error {
		_, err := db.wc.conn.ExecContext(ctx, q)
		return err
	}
	if err := exec(`SELECT rowid FROM reservations`); err == nil {
		t.Error("reservations still has a rowid")
	}
	for _, q := range []string{`UPDATE reservations SET created_at = 5`, `DELETE FROM reservations WHERE run_id = 1`} {
		if err := exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want it refused as append-only", q, err)
		}
	}
	if err := exec(`INSERT INTO reservations (run_id, event_id, created_at) VALUES (2, 1, 9)`); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("a second reservation of event 1 by run 2: %v, want the key to refuse it", err)
	}
	if err := exec(`INSERT INTO reservations (run_id, event_id, created_at) VALUES (2, 99, 9)`); err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Errorf("a reservation of a missing event: %v, want the foreign key to refuse it", err)
	}
	for q, index := range map[string]string{
		causesOfRun: "PRIMARY KEY",
		`SELECT run_id FROM reservations INDEXED BY reservations_by_event WHERE event_id = ?`: "reservations_by_event",
	} {
		plan, err := queryPlan(ctx, db.r, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "\n"); !strings.Contains(p, index) {
			t.Errorf("%s reads without %s:\n%s", q, index, p)
		}
	}

	// the history is written and read through the store as before
	now := time.UnixMilli(10).UTC()
	if err := db.Write(ctx, func(tx *Tx) error {
		r := &Run{WorkflowID: 1, Handler: "push", HandlerType: "consumer", ScriptVersion: 1, Phase: PhasePreparing, Status: RunActive, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.InsertRun(ctx, r); err != nil {
			return err
		}
		return tx.TakeOver(ctx, 2, r.ID, now)
	}); err != nil {
		t.Fatal(err)
	}
	if causes, err := db.Read().CausesOfRun(ctx, 4); err != nil || !reflect.DeepEqual(causes, []int64{1}) {
		t.Errorf("causes of the run that took event 1 over: %v (%v), want [1]", causes, err)
	}
}
