package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a second engine on the same file is refused naming the holder's pid", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = Open(ctx, Opts{Path: path})
		var le *LockedError
		if !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), "pid") {
			t.Fatalf("second open: %v, want a LockedError naming pid %d", err, os.Getpid())
		}
		db.Close()
		db2, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatalf("open after the holder closed: %v", err)
		}
		db2.Close()
	})

	t.Run("a new database runs in WAL with synchronous NORMAL, foreign keys on and keep's page size", func(t *testing.T) {
		t.Parallel()
		db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "1", "foreign_keys": "1", "page_size": strconv.Itoa(pageSize)} {
			var got string
			if err := db.wc.conn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
				t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
			}
		}
	})

	t.Run("a database newer than the binary is refused clearly", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.wc.conn.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, 'future', '')`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, err = Open(ctx, Opts{Path: path})
		if err == nil || !strings.Contains(err.Error(), "schema version 999") || !strings.Contains(err.Error(), "newer keep") {
			t.Fatalf("open of a newer database: %v", err)
		}
	})

	t.Run("a database the binary cannot open says which file, and is left as it was", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		newer := filepath.Join(dir, "newer.db")
		db, err := Open(ctx, Opts{Path: newer})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.wc.conn.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, 'future', '')`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		// a page of a table damaged: the schema reads, its rows do not
		damaged := filepath.Join(dir, "damaged.db")
		db, err = Open(ctx, Opts{Path: damaged})
		if err != nil {
			t.Fatal(err)
		}
		var root int64
		if err := db.wc.conn.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_schema WHERE name = 'schema_migrations'`).Scan(&root); err != nil {
			t.Fatal(err)
		}
		size, err := db.PageSize(ctx)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		b, err := os.ReadFile(damaged)
		if err != nil {
			t.Fatal(err)
		}
		for i := (root - 1) * size; i < root*size; i++ {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(damaged, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{newer, damaged} {
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(ctx, Opts{Path: path})
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("open of %s: %v, want an error naming the file", filepath.Base(path), err)
			}
			if after, err := os.ReadFile(path); err != nil || string(after) != string(before) {
				t.Errorf("a refused open changed %s (%v)", filepath.Base(path), err)
			}
		}
	})

	t.Run("reservations are append-only history", func(t *testing.T) {
		t.Parallel()
		db, err := Open(ctx, Opts{Path: filepath.Join(t.TempDir(), "keep.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, stmt := range []string{`UPDATE reservations SET run_id = 2`, `DELETE FROM reservations`} {
			if _, err := db.wc.conn.ExecContext(ctx, stmt); err != nil {
				t.Fatal(err) // no rows: the triggers fire per row, so also try with one
			}
		}
		_, err = db.wc.conn.ExecContext(ctx, `
			INSERT INTO workflows(id, name, created_at, updated_at) VALUES (1, 'w', 0, 0);
			INSERT INTO topics(workflow_id, name) VALUES (1, 't');
			INSERT INTO runs(id, workflow_id, handler, handler_type, script_version, phase, status, created_at, updated_at)
				VALUES (1, 1, 'c', 'consumer', 1, 'prepared', 'committed', 0, 0);
			INSERT INTO events(id, workflow_id, topic, message_id, payload, created_at, updated_at) VALUES (1, 1, 't', 'm', '{}', 0, 0);
			INSERT INTO reservations(run_id, event_id, created_at) VALUES (1, 1, 0);`)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{`UPDATE reservations SET created_at = 5`, `DELETE FROM reservations`} {
			if _, err := db.wc.conn.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s: %v, want refused as append-only", stmt, err)
			}
		}
	})
}

// TestARefusalNamesAHolderStillWritingItsPID: a holder writes its pid just
// after it takes the lock; a second engine refused in between named no one
// ("held by another keep engine", seen from two `keep approve` at once), or
// the pid a killed holder left behind.
func TestARefusalNamesAHolderStillWritingItsPID(t *testing.T) {
	t.Parallel()
	for _, left := range []string{"", "999999999\n"} {
		path := filepath.Join(t.TempDir(), "keep.db.lock")
		if err := os.WriteFile(path, []byte(left), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		// the holder's pid lands a moment after its lock
		go func() {
			time.Sleep(20 * time.Millisecond)
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}()
		_, err = acquireLock(path)
		var le *LockedError
		if !errors.As(err, &le) || le.PID != os.Getpid() {
			t.Errorf("with %q in the lock file: %v, want a LockedError naming pid %d", left, err, os.Getpid())
		}
		f.Close()
	}
}
