package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestMigrationAllowsAuthBlock: after migration 3 a workflow can be
// blocked as auth, the other kinds still hold, and the foreign keys that
// refer to workflows are intact.
func TestMigrationAllowsAuthBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "k.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	exec := func(q string) error { _, err := db.ExecContext(ctx, q); return err }
	if err := exec(`INSERT INTO workflows (id, name, created_at, updated_at) VALUES (1, 'a', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if err := exec(`UPDATE workflows SET block_kind = 'auth' WHERE id = 1`); err != nil {
		t.Fatalf("block_kind auth: %v", err)
	}
	if err := exec(`UPDATE workflows SET block_kind = 'nonsense' WHERE id = 1`); err == nil {
		t.Error("the CHECK no longer holds")
	}
	if err := exec(`INSERT INTO script_versions VALUES (9, 1, '1', 'deploy', 'a.js', 'x', '{}', 1)`); err == nil {
		t.Error("a script version of no workflow was stored: foreign keys are broken")
	}
	var ok string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check = %q, %v", ok, err)
	}
}
