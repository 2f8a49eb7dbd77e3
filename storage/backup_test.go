package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

	t.Run("a database an engine did not close restores with what its log holds", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		src := filepath.Join(dir, "old", "keep.db")
		db, err := Open(ctx, Opts{Path: src})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for i := range 50 {
			if err := db.Write(ctx, func(tx *Tx) error {
				_, err := tx.CreateWorkflow(ctx, "w"+strconv.Itoa(i), time.Now())
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		// what a killed engine leaves, or a copy of its folder while it
		// runs: the commits are in keep.db-wal, not yet in keep.db
		from := filepath.Join(dir, "copy.db")
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(src + suffix)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(from+suffix, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "new", "keep.db")
		if err := Restore(ctx, from, path); err != nil {
			t.Fatal(err)
		}
		rdb, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		if n := count(t, rdb, `SELECT COUNT(*) FROM workflows`); n != 50 {
			t.Fatalf("the restored database holds %d workflows, the backup 50", n)
		}
		for _, suffix := range []string{".restoring", ".restoring-wal", ".restoring-shm"} {
			if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind: %v", suffix, err)
			}
		}
	})

	t.Run("a damaged database is replaced and kept aside as it was", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		backup := filepath.Join(dir, "backup.db")
		if err := db.Backup(ctx, backup); err != nil {
			t.Fatal(err)
		}
		db.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		damaged := b[:len(b)/3]
		log := []byte(strings.Repeat("not a log ", 100))
		os.WriteFile(path, damaged, 0o600)
		os.WriteFile(path+"-wal", log, 0o600)
		if err := Restore(ctx, backup, path); err != nil {
			t.Fatalf("restoring over a damaged database: %v", err)
		}
		if v, err := FileVersion(ctx, path); err != nil || v != SchemaVersion() {
			t.Fatalf("the restored database: version %d (%v)", v, err)
		}
		if got, err := os.ReadFile(path + ".before-restore"); err != nil || !bytes.Equal(got, damaged) {
			t.Errorf("the database kept aside is not what was there before the restore (%v)", err)
		}
	})

	t.Run("a second restore keeps what the first kept aside", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "keep.db")
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		backup := filepath.Join(dir, "backup.db")
		if err := db.Backup(ctx, backup); err != nil {
			t.Fatal(err)
		}
		if err := db.Write(ctx, func(tx *Tx) error { _, err := tx.CreateWorkflow(ctx, "original", time.Now()); return err }); err != nil {
			t.Fatal(err)
		}
		db.Close()
		for range 2 {
			if err := Restore(ctx, backup, path); err != nil {
				t.Fatal(err)
			}
		}
		odb, err := Open(ctx, Opts{Path: path + ".before-restore.1", NoLock: true})
		if err != nil {
			t.Fatal(err)
		}
		defer odb.Close()
		if n := count(t, odb, `SELECT COUNT(*) FROM workflows WHERE name = 'original'`); n != 1 {
			t.Fatalf("the database the first restore replaced is gone")
		}
	})
}

// TestRestoreRefusesAnotherProgramsDatabase: golang-migrate, Rails and
// others keep a schema_migrations with a version too. Such a database was
// restored in keep's place ("restored"), and every command after it said
// keep's database was not a keep database.
func TestRestoreRefusesAnotherProgramsDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.db")
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for name, schema := range map[string]string{
		"golang-migrate": `CREATE TABLE schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL);
			INSERT INTO schema_migrations VALUES (3, 0); CREATE TABLE users (id INTEGER PRIMARY KEY)`,
		"empty keep-shaped": `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
	} {
		other := filepath.Join(dir, name+".db")
		c, err := sql.Open("sqlite", other)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, schema); err != nil {
			t.Fatal(err)
		}
		c.Close()
		err = Restore(ctx, other, path)
		if err == nil || !strings.Contains(err.Error(), other+" is not a keep database") {
			t.Errorf("restoring the %s database: %v, want a refusal naming it", name, err)
		}
		if _, err := os.Stat(path + ".before-restore"); err == nil {
			t.Fatalf("restoring the %s database moved keep's aside", name)
		}
	}
	if err := CheckFile(ctx, path); err != nil {
		t.Fatalf("after the refusals keep's database is: %v", err)
	}
}

// TestRestoreChecksWhatItPutsInPlace: the backup was checked, then copied
// again: a backup that changed in between (another engine still writing
// it, a copy still arriving) went in place torn, and keep said "restored".
func TestRestoreChecksWhatItPutsInPlace(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	path := db.Path()
	dir := filepath.Dir(path)
	// more than one chunk of the copy (1 MiB), so that the backup can
	// change between its first chunk and the rest
	if err := db.Write(ctx, func(tx *Tx) error {
		wid, err := tx.CreateWorkflow(ctx, "w", time.Now())
		if err != nil {
			return err
		}
		for i := range 600 {
			if _, err := tx.exec(ctx, `INSERT INTO inputs (workflow_id, source, type, external_id, title, created_at) VALUES (?, 'files', 'file', ?, ?, 0)`,
				wid, strconv.Itoa(i), strings.Repeat("x", 4000)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if fi, err := os.Stat(backup); err != nil || fi.Size() < 2<<20 {
		t.Fatalf("the backup is %v (%v): want over 2 MiB", fi.Size(), err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	restoreCopied = func() {
		if changed {
			return
		}
		changed = true
		f, err := os.OpenFile(backup, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 256<<10), 3<<19); err != nil {
			t.Error(err)
		}
	}
	defer func() { restoreCopied = nil }()
	err = Restore(ctx, backup, path)
	if !changed {
		t.Fatal("the copy never reached a second chunk: the test changes nothing")
	}
	if err == nil || !strings.Contains(err.Error(), backup+" changed while it was copied") {
		t.Fatalf("Restore of a backup torn while copied = %v, want a refusal naming it", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the database in place was replaced")
	}
	for _, left := range []string{".before-restore", ".restoring", ".restoring-wal", ".restoring-shm"} {
		if _, err := os.Stat(path + left); err == nil {
			t.Errorf("%s was left behind", filepath.Base(path+left))
		}
	}
}

// TestRestoreOfADamagedBackupSaysSo: a backup cut short (a copy that did
// not finish, a full disk) was called "not a keep database", which sends
// the user looking for another file rather than an earlier backup.
func TestRestoreOfADamagedBackupSaysSo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	path := db.Path()
	dir := filepath.Dir(path)
	whole := filepath.Join(dir, "whole.db")
	if err := db.Backup(ctx, whole); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.db")
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(cut, b[:len(b)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Restore(ctx, cut, path); err == nil || !strings.Contains(err.Error(), cut+" is a damaged database") {
		t.Errorf("restoring a backup cut short: %v, want it called damaged", err)
	}
	if err := Restore(ctx, junk, path); err == nil || !strings.Contains(err.Error(), junk+" is not a keep database") {
		t.Errorf("restoring a file that is no database: %v, want it called so", err)
	}
	if _, err := os.Stat(path + ".before-restore"); err == nil {
		t.Fatal("a refused restore moved the database aside")
	}
}

// TestRestoreFromTheCopyAnInterruptedRestoreLeft: a restore killed after
// it moved the database aside leaves keep.db.restoring, whole, and no
// keep.db. Restoring from it removed it before copying it.
func TestRestoreFromTheCopyAnInterruptedRestoreLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	path := db.Path()
	dir := filepath.Dir(path)
	left := path + ".restoring"
	if err := db.Backup(ctx, filepath.Join(dir, "copy.db")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Rename(filepath.Join(dir, "copy.db"), left); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".before-restore"); err != nil {
		t.Fatal(err)
	}
	err := Restore(ctx, left, path)
	if err == nil || !strings.Contains(err.Error(), "move it elsewhere") {
		t.Errorf("restoring from %s: %v, want a refusal saying what to do", filepath.Base(left), err)
	}
	if v, err := CheckBackup(ctx, left); err != nil || v != SchemaVersion() {
		t.Fatalf("the copy left by the interrupted restore is gone or changed: version %d, %v", v, err)
	}
	moved := filepath.Join(dir, "moved.db")
	if err := os.Rename(left, moved); err != nil {
		t.Fatal(err)
	}
	if err := Restore(ctx, moved, path); err != nil {
		t.Fatalf("restoring from it once moved: %v", err)
	}
}

// TestBackupAmongKeepsOwnFilesIsRefusedByTheirNamesForm: keep's own
// files beside the database are told by the form of their names, the
// database's name and anything after it and keep.log's, so a file keep
// adds there later is covered with the ones it has now; a backup of
// another name beside the database is written.
func TestBackupAmongKeepsOwnFilesIsRefusedByTheirNamesForm(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	dir := filepath.Dir(db.Path())
	for _, name := range []string{"keep.db.anything-keep-writes-next", "keep.db-wal", "keep.log.3"} {
		own := filepath.Join(dir, name)
		_, was := os.Stat(own) // the open database's -wal is there
		if err := db.Backup(ctx, own); err == nil || !strings.Contains(err.Error(), "one of keep's own files") {
			t.Errorf("a backup to %s: %v, want it refused as keep's own", name, err)
		}
		if _, err := os.Stat(own); err == nil && was != nil {
			t.Errorf("a refused backup left %s", name)
		}
	}
	if err := db.Backup(ctx, filepath.Join(dir, "backup-2026.db")); err != nil {
		t.Errorf("a backup of its own name beside the database: %v", err)
	}
}
