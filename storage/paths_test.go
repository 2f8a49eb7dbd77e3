package storage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// SQLite opens a "file:" URI: its path ends at '?' or '#' and "%HH" in it is
// decoded. A database whose name holds one of them must still be the file
// that is opened, locked, synced and backed up.
func TestOddPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"a b.db", "ü €.db", "notes#1.db", "what?.db", "100%41.db", "x%2fy.db", "C#/keep.db"} {
		t.Run("a database named "+name+" is that file and no other", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			db, err := Open(ctx, Opts{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "w", time.Now()); return err }); err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(path)
			var names []string
			ents, err := os.ReadDir(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				names = append(names, e.Name())
			}
			want := []string{base, base + "-shm", base + "-wal", base + ".lock"}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("the database's folder holds %q, want %q", names, want)
			}
			// the busy timeout, the first parameter, is set too
			var busy int
			if err := db.wc.conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy); err != nil || busy != 10000 {
				t.Fatalf("busy_timeout = %d (%v), want 10000", busy, err)
			}
			backup := filepath.Join(dir, "back#up?%41.db")
			if err := db.Backup(ctx, backup); err != nil {
				t.Fatal(err)
			}
			if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "after", time.Now()); return err }); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if v, err := FileVersion(ctx, path); err != nil || v != SchemaVersion() {
				t.Fatalf("FileVersion = %d (%v), want %d", v, err, SchemaVersion())
			}
			if v, err := CheckBackup(ctx, backup); err != nil || v != SchemaVersion() {
				t.Fatalf("CheckBackup = %d (%v), want %d", v, err, SchemaVersion())
			}
			if err := Restore(ctx, backup, path); err != nil {
				t.Fatal(err)
			}
			db, err = Open(ctx, Opts{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n := count(t, db, `SELECT COUNT(*) FROM workflows`); n != 1 {
				t.Fatalf("the restored database holds %d workflows, want the backup's 1", n)
			}
		})
	}
}
