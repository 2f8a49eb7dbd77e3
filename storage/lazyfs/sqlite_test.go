//go:build linux

package lazyfs

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestSQLiteAcrossCuts: a WAL commit at synchronous FULL survives a cut, one
// at synchronous OFF (never synced) does not, and the file stays sound. The
// commits are made by a child process that the cut kills, as a power cut
// would: a process still holding the mount could not let it go.
func TestSQLiteAcrossCuts(t *testing.T) {
	l, _, mnt := mountForTest(t)
	path := filepath.Join(mnt, "x.db")
	count := func() int {
		var n int
		var check string
		ans := inChild(t, "count", path)
		if _, err := fmt.Sscan(ans, &n, &check); err != nil || check != "ok" {
			t.Fatalf("the counting child says %q (%v)", ans, err)
		}
		return n
	}
	commitThenCut := func(sync string, n int) {
		t.Helper()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), lazyfsChild+"=writer", "LAZYFS_ARG="+sync+"|"+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		m, _ := out.Read(buf)
		if !strings.Contains(string(buf[:m]), "committed") {
			t.Fatalf("the writer says %q", buf[:m])
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err := l.Cut(); err != nil {
			t.Fatal(err)
		}
		if got := count(); got != n {
			t.Fatalf("after a commit at synchronous %s and a cut: %d rows, want %d", sync, got, n)
		}
	}
	commitThenCut("FULL", 1)
	commitThenCut("OFF", 1) // lost
	commitThenCut("FULL", 2)
}

func init() {
	children["count"] = countRows
	children["writer"] = func(arg string) (string, error) {
		sync, path, _ := strings.Cut(arg, "|")
		sqliteWriter(path, sync)
		return "", nil
	}
}

// countRows is the child that reads the database at path: its rows and its
// integrity check.
func countRows(path string) (string, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		return "", err
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil {
		return "", err
	}
	return fmt.Sprint(n, " ", check), nil
}

// sqliteWriter commits one row and waits to be killed.
func sqliteWriter(path, sync string) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous("+sync+")")
	if err == nil {
		for _, q := range []string{`CREATE TABLE IF NOT EXISTS t (n INTEGER)`, `INSERT INTO t VALUES (1)`} {
			if _, err = db.Exec(q); err != nil {
				break
			}
		}
	}
	if err != nil {
		os.Stdout.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("committed\n")
	select {}
}
