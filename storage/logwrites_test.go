package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// logWritesSeen replaces the real write of the log with one that records
// each write's length (and fails it while fail says so) for the test's
// length. Not parallel: the hook is the process's.
func logWritesSeen(t *testing.T, fail func() bool) *[]int {
	t.Helper()
	var seen []int
	real := logWrite
	logWrite = func(tls *libc.TLS, methods, pFile, z uintptr, n int32, off int64) int32 {
		seen = append(seen, int(n))
		if fail != nil && fail() {
			return sqlite3.SQLITE_IOERR_WRITE
		}
		return real(tls, methods, pFile, z, n, off)
	}
	t.Cleanup(func() { logWrite = real })
	return &seen
}

// addAnswers adds n answers of 200 bytes each: some tens of pages.
func addAnswers(tx *Tx, n int) error {
	for range n {
		if err := insertAnswer(tx, "'"+strings.Repeat("x", 200)+"'"); err != nil {
			return err
		}
	}
	return nil
}

func countAnswers(t *testing.T, q interface {
	QueryRow(string, ...any) *sql.Row
}) int {
	t.Helper()
	var n int
	if err := q.QueryRow(`SELECT count(*) FROM answers`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLogWritesGathered: a commit's frames reach the log in two writes —
// every frame but the last, with the last one's header, then its page —
// not two a page (its header, then the page).
func TestLogWritesGathered(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	seen := logWritesSeen(t, nil)
	if err := db.Write(ctx, func(tx *Tx) error { return addAnswers(tx, 100) }); err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 2 {
		t.Fatalf("the commit reached the log in %d writes (%v), want two", len(*seen), *seen)
	}
	const frame = frameHeader + pageSize
	if n := (*seen)[0]; (n-frameHeader)%frame != 0 || n/frame < 5 {
		t.Fatalf("the first write holds %d bytes: want five frames of %d bytes or more and a header", n, frame)
	}
	if n := (*seen)[1]; n != pageSize {
		t.Fatalf("the second write holds %d bytes, want the last frame's page, %d", n, pageSize)
	}
}

// TestGatheredCommitsSeenAtOnce: each commit is in the log file when Write
// returns, for a connection that reads the file through SQLite's own VFS,
// as another process would.
func TestGatheredCommitsSeenAtOnce(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	other, err := sql.Open("sqlite", "file:"+db.Path()+"?vfs=unix&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := 1; i <= 20; i++ {
		if err := db.Write(ctx, func(tx *Tx) error { return addAnswers(tx, i) }); err != nil {
			t.Fatal(err)
		}
		if got, want := countAnswers(t, other), i*(i+1)/2; got != want {
			t.Fatalf("after commit %d another connection sees %d answers, want %d", i, got, want)
		}
	}
}

// TestGatheredWriteErrorFailsTheCommit: when the gathered write fails, the
// commit fails with it — nothing of it is seen, by this process or
// another — and the next commit goes through.
func TestGatheredWriteErrorFailsTheCommit(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	if err := db.Write(ctx, func(tx *Tx) error { return addAnswers(tx, 3) }); err != nil {
		t.Fatal(err)
	}
	failing := true
	seen := logWritesSeen(t, func() bool { return failing })
	err := db.Write(ctx, func(tx *Tx) error { return addAnswers(tx, 50) })
	if err == nil {
		t.Fatal("the commit whose log write failed returned no error")
	}
	if len(*seen) == 0 {
		t.Fatal("the failing write was never made")
	}
	failing = false
	other, err := sql.Open("sqlite", "file:"+db.Path()+"?vfs=unix&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if n := countAnswers(t, other); n != 3 {
		t.Fatalf("after the failed commit another connection sees %d answers, want 3", n)
	}
	if n := countAnswers(t, db.r); n != 3 {
		t.Fatalf("after the failed commit a reader sees %d answers, want 3", n)
	}
	if err := db.Write(ctx, func(tx *Tx) error { return addAnswers(tx, 4) }); err != nil {
		t.Fatalf("the commit after a failed one: %v", err)
	}
	var check string
	if err := other.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	if n := countAnswers(t, other); n != 7 {
		t.Fatalf("another connection sees %d answers, want 7", n)
	}
	db.Close()
	again, err := Open(ctx, Opts{Path: db.Path()})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := countAnswers(t, again.r); n != 7 {
		t.Fatalf("reopened, the database holds %d answers, want 7", n)
	}
}

// TestGatheringIsEveryConnections: keep's VFS is the process's default
// once storage has opened a database: a connection opened by name alone
// gathers its log writes too.
func TestGatheringIsEveryConnections(t *testing.T) {
	db := openWithWorkflow(t)
	c, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := logWritesSeen(t, nil)
	if _, err := c.Exec(`INSERT INTO answers(workflow_id, subject, subject_id, answer, answered_by, created_at)
		SELECT id, 'x', 1, zeroblob(20000), 'user', 0 FROM workflows LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 2 {
		t.Fatalf("a connection opened by name wrote its commit in %d writes (%v), want two", len(*seen), *seen)
	}
}

// committedCopy copies the database and its log as they are in their files
// now — not the shared index beside them, which SQLite rebuilds from the
// log, checking each frame's checksum — and counts the rows of t in the
// copy: what a power cut now, or another process opening the files, would
// find committed.
func committedCopy(t *testing.T, path, table string) int {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "copy.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "copy.db")+"?vfs=unix")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatalf("the copy of the files: %v", err)
	}
	return n
}

// TestEveryCommitIsInTheFiles: when a commit returns, all of it is in the
// log file — its pages, and its last frame's header with the checksum that
// makes SQLite count it — whatever its size: commits of 1 to 150 pages,
// across every way the gathering buffer fills (from the log's start, after
// its header, or after other commits), and commits that spilled pages to
// the log early and wrote some again (SQLite then rewrites their frames
// and headers in place). Another connection in the process reads each
// commit whole meanwhile.
func TestEveryCommitIsInTheFiles(t *testing.T) {
	registerGatheringVFS()
	path := filepath.Join(t.TempDir(), "t.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(2048)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	// keep's page size, set before the log's mode writes the first page
	if _, err := w.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	r, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.Exec(`CREATE TABLE pages (id INTEGER PRIMARY KEY, body BLOB)`); err != nil {
		t.Fatal(err)
	}
	var size int
	if err := w.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil || size != pageSize {
		t.Fatalf("page size %d (%v), want %d", size, err, pageSize)
	}
	// each commit replaces the table's rows with n rows of a page each
	// (1,800 bytes fill a page of 2,048 on their own)
	commit := func(what string, n int, after ...string) {
		t.Helper()
		tx, err := w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		stmts := append([]string{`DELETE FROM pages`, fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO pages(body) SELECT randomblob(1800) FROM s`, n)}, after...)
		for _, s := range stmts {
			if _, err := tx.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var seen int
		if err := r.QueryRow(`SELECT count(*) FROM pages WHERE length(body) = 1800`).Scan(&seen); err != nil {
			t.Fatalf("%s: another connection reading it: %v", what, err)
		}
		if seen != n {
			t.Fatalf("%s: another connection sees %d rows, want %d", what, seen, n)
		}
		if got := committedCopy(t, path, "pages"); got != n {
			t.Fatalf("%s: the files hold %d rows, want %d", what, got, n)
		}
	}
	// a cache of ten pages spills a commit of hundreds to the log before
	// it ends; pages written again after the spill are rewritten in place
	if _, err := w.Exec(`PRAGMA cache_size = 10`); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		commit(fmt.Sprintf("spilling commit %d", i), 200+i,
			fmt.Sprintf(`UPDATE pages SET body = randomblob(1800) WHERE id > (SELECT max(id) FROM pages) - %d`, 150+i))
	}
	if _, err := w.Exec(`PRAGMA cache_size = -2000`); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 150; n++ {
		if n%2 == 0 {
			// the next commit starts the log again, after its header
			if _, err := w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
		}
		commit(fmt.Sprintf("a commit of %d pages", n), n)
	}
}
