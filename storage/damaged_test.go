package storage

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damagedDatabase makes a keep database and cuts it short at half its
// size, as a disk that failed or a copy that stopped half-way leaves it.
func damagedDatabase(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keep.db")
	db, err := Open(context.Background(), Opts{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", FileURI(p))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		INSERT INTO meta(key, value) SELECT 'k' || i, hex(randomblob(200)) FROM n`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	return p
}

// A database SQLite finds damaged is named as damaged, with what to do
// about it, not as SQLite's bare "database disk image is malformed", and
// is left as it is.
func TestADamagedDatabaseSaysSoAndWhatToDo(t *testing.T) {
	t.Parallel()
	p := damagedDatabase(t)
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), Opts{Path: p})
	if err == nil {
		t.Fatal("a database cut short in half opened")
	}
	got := err.Error()
	if !strings.Contains(got, p) || !strings.Contains(got, "is damaged") || !strings.Contains(got, "keep restore") {
		t.Fatalf("opening a damaged database: %q, want its path, that it is damaged, and keep restore", got)
	}
	after, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("opening a damaged database changed it")
	}
}

// A backup of a damaged database fails naming the database as what is
// damaged: "backup to FILE: database disk image is malformed" read as if
// the backup were.
func TestABackupOfADamagedDatabaseNamesTheDatabase(t *testing.T) {
	t.Parallel()
	p := damagedDatabase(t)
	to := filepath.Join(t.TempDir(), "backup.db")
	err := BackupFile(context.Background(), p, to)
	if err == nil {
		t.Fatal("a backup of a database cut short in half was written")
	}
	if got := err.Error(); !strings.Contains(got, "the database "+p+" is damaged") {
		t.Fatalf("backing up a damaged database: %q, want it named as the damaged one", got)
	}
	if _, serr := os.Lstat(to); serr == nil {
		t.Fatalf("a failed backup left %s behind", to)
	}
}
