package engine

import (
	"os"
	"path/filepath"
	"testing"

	"keep/connectors"
)

// A database (or a config) named through a link is keep's where the link
// leads as well as where it is: SQLite follows the link, so the real file
// and its -wal are the database a workflow must not reach. Found from
// outside: --db home/k.db → data/keep.db left data/keep.db readable by a
// workflow whose root held data.
func TestKeepsFilesNamedThroughALinkAreKeepsWhereTheyLead(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	for _, sub := range []string{"home", "data", "etc", "conf"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"data/keep.db", "conf/keep.toml"} {
		if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(d, "data", "keep.db"), filepath.Join(d, "home", "k.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d, "conf", "keep.toml"), filepath.Join(d, "etc", "keep.toml")); err != nil {
		t.Fatal(err)
	}
	p, err := connectors.NewProtected(KeepPlaces(filepath.Join(d, "home", "k.db"), filepath.Join(d, "etc", "keep.toml"), "")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"data/keep.db", "data/keep.db-wal", "data/keep.db.lock", "home/k.db", "home/keep.log", "conf/keep.toml", "etc/keep.toml"} {
		if p.Check(filepath.Join(d, f)) == nil {
			t.Errorf("%s is reachable by a workflow", f)
		}
	}
	if err := p.Check(filepath.Join(d, "data", "notes", "a.txt")); err != nil {
		t.Errorf("a folder of the person's beside the real database is refused: %v", err)
	}
}
