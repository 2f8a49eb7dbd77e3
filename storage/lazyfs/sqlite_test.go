//go:build linux

package lazyfs

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

func TestSQLiteAcrossCuts(t *testing.T) {
	l, _, mnt := mountForTest(t)
	path := filepath.Join(mnt, "x.db")
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)"
	for round := 0; round < 3; round++ {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS t (n INTEGER)`); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := db.Exec(`INSERT INTO t VALUES (?)`, round); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != round+1 {
			t.Fatalf("round %d: %d rows, %v", round, n, err)
		}
		// the process dies without closing
		db.SetMaxIdleConns(0)
		if err := l.Cut(); err != nil {
			t.Fatal(err)
		}
		_ = db
	}
}
