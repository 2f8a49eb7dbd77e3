package storage

import (
	"context"
	"database/sql"
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

// TestLogWritesGathered: a commit's frames reach the log in one write, not
// two a page (its header, then the page).
func TestLogWritesGathered(t *testing.T) {
	ctx := context.Background()
	db := openWithWorkflow(t)
	seen := logWritesSeen(t, nil)
	if err := db.Write(ctx, func(tx *Tx) error { return addAnswers(tx, 100) }); err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 1 {
		t.Fatalf("the commit reached the log in %d writes (%v), want one", len(*seen), *seen)
	}
	const frame = frameHeader + pageSize
	if n := (*seen)[0]; n%frame != 0 || n/frame < 5 {
		t.Fatalf("the write holds %d bytes: want five frames of %d bytes or more", n, frame)
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
	if len(*seen) != 1 {
		t.Fatalf("a connection opened by name wrote its commit in %d writes (%v), want one", len(*seen), *seen)
	}
}
