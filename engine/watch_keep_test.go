package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKeepsOwnFilesNeverWakeAWatch: a watched folder may hold keep's
// database (a files root beside it), and keep writes its log, its WAL and
// its lock at every run. Found from outside: roots = the database's
// folder, schedule { watch: "." }, and keep --daemon ran the producer 508
// times in 6 seconds, each run's own commit waking the next. A change to
// one of keep's files (by place: KeepPlaces, as the files connector
// refuses them) wakes nothing; the person's folder beside them does.
func TestKeepsOwnFilesNeverWakeAWatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dir := filepath.Dir(b.dbPath)
	reg, err := Connectors(b.cfg, ConnectorOpts{Now: b.clock.Now, DBPath: b.dbPath})
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := reg.Get("files")
	if !ok {
		t.Fatal("no files connector")
	}
	f := newFolders(b.e)
	f.warm = func() {}
	st := stepTimers(f)
	ws := b.e.state(1)
	f.byDir[dir] = []watcher{{ws, "p"}}
	// what add sets for a folder: the files connector's own rule of what
	// in it is keep's
	f.hides[dir] = fc.(interface {
		Hider(string) func(string) bool
	}).Hider(dir)
	for _, own := range []string{"keep.db", "keep.db-wal", "keep.db-shm", "keep.log", "keep.db.lock"} {
		f.changed(fsEvent(filepath.Join(dir, own)))
		if st.fire != nil || f.settling[watcher{ws, "p"}] != nil {
			t.Fatalf("a change to keep's %s woke the producer watching its folder", own)
		}
	}
	// every file directly in the database's folder is keep's; a folder
	// there (not named after the database) is the person's
	inbox := filepath.Join(dir, "inbox")
	if err := os.Mkdir(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	f.changed(fsEvent(inbox))
	if st.fire == nil {
		t.Fatal("a folder of the person's beside keep's files does not wake the producer")
	}
}
