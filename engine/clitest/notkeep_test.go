package clitest

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestDBThatIsNotKeeps: --db naming a file that is not a keep database (a
// text file, random bytes, another program's SQLite database, in rollback
// or WAL mode, a folder) is refused with an error naming it, and nothing is
// made or changed beside it: no lock file, no -wal, no mode tightened, no
// tables added; the folder reads the same after every command.
func TestDBThatIsNotKeeps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	dir := filepath.Join(e.dir, "others")
	if err := os.MkdirAll(filepath.Join(dir, "a-folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	others := map[string]string{
		"notes.txt": "not a database\n",
		"random":    strings.Repeat("\x07\xfe\x00keep?", 2000),
		"short.db":  "SQLite format 3\x00 and no more",
	}
	for name, content := range others {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]string{"rollback.db": "delete", "wal.db": "wal"} {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, name)+"?_pragma=journal_mode("+mode+")")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')`); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)

	for _, name := range []string{"notes.txt", "random", "short.db", "rollback.db", "wal.db", "a-folder"} {
		db := filepath.Join(dir, name)
		for _, args := range [][]string{{"workflows"}, {"drain"}, {"attention"}, {"--daemon"}} {
			r := e.raw(append([]string{"--db", db, "--config", e.config}, args...)...)
			if r.code != 1 || !strings.Contains(r.stderr, db) {
				t.Errorf("keep --db %s %s: want exit 1 naming the file, got %s", name, strings.Join(args, " "), r)
			}
			if name != "a-folder" && !strings.Contains(r.stderr, "is not a keep database") {
				t.Errorf("keep --db %s %s does not say it is not a keep database: %s", name, strings.Join(args, " "), r)
			}
			if after := snapshot(t, dir); after != before {
				t.Fatalf("keep --db %s %s changed the folder:\nbefore:\n%s\nafter:\n%s", name, strings.Join(args, " "), before, after)
			}
		}
	}

	// an empty file, or a path where nothing is, is where keep makes its
	// database, and one it made opens again
	for _, db := range []string{filepath.Join(e.dir, "empty.db"), filepath.Join(e.dir, "new", "keep.db")} {
		if strings.HasSuffix(db, "empty.db") {
			if err := os.WriteFile(db, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			if r := e.raw("--db", db, "--config", e.config, "workflows"); r.code != 0 {
				t.Errorf("keep --db %s workflows: %s", db, r)
			}
		}
	}
}

// snapshot is every entry of dir: name, mode, size and a hash of its bytes.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, en := range entries {
		fi, err := en.Info()
		if err != nil {
			t.Fatal(err)
		}
		sum := ""
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, en.Name()))
			if err != nil {
				t.Fatal(err)
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		fmt.Fprintf(&b, "%s %v %d %s\n", en.Name(), fi.Mode(), fi.Size(), sum)
	}
	return b.String()
}
