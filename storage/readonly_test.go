package storage

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// A database keep may not write (the file or its folder read-only to the
// user keep runs as) says so, where, and what to do, rather than SQLite's
// "attempt to write a readonly database" after whatever tried to write.
// (Tests run as root, which writes through a file's mode: the refusal is
// SQLite's own, from a connection opened read-only.)
func TestAReadOnlyDatabaseSaysSo(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ro, err := sql.Open("sqlite", "file:"+filepath.ToSlash(db.Path())+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.Exec(`INSERT INTO meta(key, value) VALUES ('x', 'y')`)
	if err == nil {
		t.Fatal("a read-only connection wrote")
	}
	got := db.fileError(err).Error()
	if !strings.Contains(got, db.Path()) || !strings.Contains(got, "read-only to this user") || !strings.Contains(got, "nothing was changed") {
		t.Fatalf("a read-only database: %q, want its path, that it is read-only and that nothing changed", got)
	}
}
