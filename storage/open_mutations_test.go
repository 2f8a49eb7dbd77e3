package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMigration16 upgrades a database of the previous schema with a
// mutation in every status: the open ones (approved included) are listed
// oldest first, through the two partial indexes and without reading the
// ledger, and a mutation approved, sent and settled after the upgrade
// enters and leaves the list as it moves.
func TestMigration16(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	old, err := openKnowing(ctx, path, 15)
	if err != nil {
		t.Fatal(err)
	}
	statuses := []string{"applied", "approved", "awaiting_approval", "failed", "in_flight", "indeterminate", "needs_reconcile", "skipped", "approved", "applied"}
	qs := []string{`INSERT INTO workflows (id, name, created_at, updated_at) VALUES (1, 'w', 1, 1)`}
	for i, s := range statuses {
		id := i + 1
		qs = append(qs,
			fmt.Sprintf(`INSERT INTO runs (id, workflow_id, handler, handler_type, script_version, phase, status, created_at, updated_at)
				VALUES (%d, 1, 'push', 'consumer', 1, 'mutating', 'active', 1, 1)`, id),
			fmt.Sprintf(`INSERT INTO mutations (id, run_id, workflow_id, connector, method, params, idempotency_key, status, created_at, updated_at)
				VALUES (%d, %d, 1, 'http', 'request', '{}', 'k%d', '%s', 1, 1)`, id, id, id, s))
	}
	for _, q := range qs {
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
	if v, err := db.Version(ctx); err != nil || v < 16 {
		t.Fatalf("schema version %d (%v), want 16 or later", v, err)
	}
	var check string
	if err := db.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q (%v)", check, err)
	}
	open := func() []string {
		t.Helper()
		ms, err := db.Read().OpenMutations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%d:%s", m.ID, m.Status))
		}
		return out
	}
	want := []string{"2:approved", "3:awaiting_approval", "5:in_flight", "6:indeterminate", "7:needs_reconcile", "9:approved"}
	if got := open(); !reflect.DeepEqual(got, want) {
		t.Fatalf("open mutations after the upgrade = %v, want %v", got, want)
	}
	plan, err := queryPlan(ctx, db.r, openMutations)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	for _, index := range []string{"mutations_open", "mutations_approved"} {
		if !strings.Contains(p, index) {
			t.Errorf("the open mutations are read without %s:\n%s", index, p)
		}
	}
	for _, line := range plan {
		// a partial index scanned is the open mutations; the table is the ledger
		if strings.HasPrefix(line, "SCAN mutations") && !strings.Contains(line, "USING INDEX") {
			t.Errorf("the open mutations are read by a scan of the ledger:\n%s", p)
		}
	}

	for _, step := range []struct {
		status string
		want   []string
	}{
		{"approved", []string{"2:approved", "3:approved", "5:in_flight", "6:indeterminate", "7:needs_reconcile", "9:approved"}},
		{"in_flight", []string{"2:approved", "3:in_flight", "5:in_flight", "6:indeterminate", "7:needs_reconcile", "9:approved"}},
		{"applied", []string{"2:approved", "5:in_flight", "6:indeterminate", "7:needs_reconcile", "9:approved"}},
	} {
		if _, err := db.wc.conn.ExecContext(ctx, `UPDATE mutations SET status = ? WHERE id = 3`, step.status); err != nil {
			t.Fatal(err)
		}
		if got := open(); !reflect.DeepEqual(got, step.want) {
			t.Errorf("open mutations with mutation 3 %s = %v, want %v", step.status, got, step.want)
		}
	}
}
