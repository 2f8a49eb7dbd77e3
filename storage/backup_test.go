package storage

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/engine/enginetest/kit"
)

func TestBackupRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a backup taken under writes is consistent and restores whole", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		wid := int64(0)
		if err := db.Write(ctx, func(tx *Tx) error { wid, err = tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
			t.Fatal(err)
		}
		// a writer inserting an input per transaction while the backup runs
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var written atomic.Int64
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := int64(1); ; id++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := db.Write(ctx, func(tx *Tx) error {
					return tx.InsertInput(ctx, &Input{ID: id, WorkflowID: wid, Source: "s", Type: "t", ExternalID: string(rune('a'+id%26)) + time.Now().String(), Title: "x", CreatedAt: time.Now()})
				}); err != nil {
					t.Error(err)
					return
				}
				written.Store(id)
			}
		}()
		kit.Until(t, kit.Timeout, "the writer has 50 inputs in", func() bool { return written.Load() >= 50 })
		backup := filepath.Join(dir, "backup.db")
		err = db.Backup(ctx, backup)
		close(stop)
		kit.WaitGroup(t, &wg, kit.Timeout)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup file: %v, mode %v, want 0600", err, fi.Mode())
		}
		if v, err := CheckBackup(ctx, backup); err != nil || v != SchemaVersion() {
			t.Fatalf("CheckBackup = %d, %v", v, err)
		}
		if err := db.Backup(ctx, backup); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("a second backup over the first: %v, want a refusal", err)
		}
		// the snapshot's counters agree with its rows: one transaction
		bdb, err := sql.Open("sqlite", "file:"+backup+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var rows, counted int
		bdb.QueryRow(`SELECT COUNT(*) FROM inputs`).Scan(&rows)
		bdb.QueryRow(`SELECT total FROM input_counts`).Scan(&counted)
		bdb.Close()
		if rows < 50 || rows != counted {
			t.Fatalf("backup holds %d inputs and counts %d, want the same, at least 50", rows, counted)
		}

		if err := Restore(ctx, backup, path); err == nil {
			t.Fatal("restore while an engine holds the database succeeded")
		} else if le := (*LockedError)(nil); !errors.As(err, &le) {
			t.Fatalf("restore while held: %v, want a LockedError", err)
		}
		db.Close()
		if err := Restore(ctx, backup, path); err != nil {
			t.Fatal(err)
		}
		db, err = Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if n := count(t, db, `SELECT COUNT(*) FROM inputs`); n != rows {
			t.Fatalf("restored database holds %d inputs, the backup %d", n, rows)
		}
		if _, err := os.Stat(path + ".before-restore"); err != nil {
			t.Fatalf("the replaced database was not kept: %v", err)
		}
	})

	t.Run("a file that is not a sound keep database is refused and nothing changes", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		junk := filepath.Join(dir, "junk.db")
		os.WriteFile(junk, []byte(strings.Repeat("not a database ", 500)), 0o600)
		if err := Restore(ctx, junk, path); err == nil {
			t.Fatal("restored a file that is not a database")
		}
		newer := filepath.Join(dir, "newer.db")
		ndb, err := Open(ctx, Opts{Path: filepath.Join(dir, "n", "keep.db")})
		if err != nil {
			t.Fatal(err)
		}
		ndb.wc.conn.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, 'future', '')`)
		if err := ndb.Backup(ctx, newer); err != nil {
			t.Fatal(err)
		}
		ndb.Close()
		if err := Restore(ctx, newer, path); err == nil || !strings.Contains(err.Error(), "use a newer keep") {
			t.Fatalf("restoring a newer schema: %v, want a refusal naming the versions", err)
		}
		if _, err := os.Stat(path + ".before-restore"); err == nil {
			t.Fatal("a refused restore moved the database aside")
		}
	})
}
