package storage

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/schema2.db was written by the release whose newest migration is
// 2 (notes-to-csv deployed, four notes logged, a fifth waiting for
// approval), before any later migration existed. Opening it with this
// binary must migrate it without losing a row.
const fixtureSchema = 2

func copyFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schema2.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keep.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openFixture opens a copy of the fixture (migrating it), closed when the
// test ends.
func openFixture(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), Opts{Path: copyFixture(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// inputFacts reads a workflow's inputs (up to 1000) and their facts.
func inputFacts(t *testing.T, db *DB, workflow string) ([]*Input, map[int64]*InputFacts) {
	t.Helper()
	ctx := context.Background()
	w, err := db.Read().WorkflowByName(ctx, workflow)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := db.Read().Inputs(ctx, w.ID, 0, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(ins))
	for i, in := range ins {
		ids[i] = in.ID
	}
	facts, err := db.Read().InputFacts(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	return ins, facts
}

func TestUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a database of the previous schema migrates without loss", func(t *testing.T) {
		t.Parallel()
		db := openFixture(t)
		v, err := db.Version(ctx)
		if err != nil || v != SchemaVersion() || v <= fixtureSchema-1 {
			t.Fatalf("schema version after open = %d (%v), want %d", v, err, SchemaVersion())
		}
		want := map[string]int{"workflows": 1, "script_versions": 1, "runs": 10, "inputs": 5, "events": 5, "event_causes": 5,
			"reservations": 5, "mutations": 5, "run_traces": 35, "grants": 1, "event_journal": 2, "deferred_events": 1,
			"schedules": 2, "handler_state": 2}
		for table, n := range want {
			var got int
			if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&got); err != nil || got != n {
				t.Errorf("%s: %d rows (%v), want %d", table, got, err, n)
			}
		}
		ins, facts := inputFacts(t, db, "notes-to-csv")
		if len(ins) != 5 {
			t.Fatalf("inputs: %d, want 5", len(ins))
		}
		statuses := map[string]int{}
		for _, f := range facts {
			if len(f.Outputs) != 1 {
				t.Fatalf("an input has %d outputs after the upgrade, want 1", len(f.Outputs))
			}
			statuses[string(f.Outputs[0].Status)]++
		}
		if statuses["applied"] != 4 || statuses["awaiting_approval"] != 1 {
			t.Fatalf("outputs by status = %v, want 4 applied and 1 awaiting approval", statuses)
		}
		var check string
		if err := db.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity_check = %q (%v)", check, err)
		}
		// made before keep chose its page size: it keeps the one it has
		if size, err := db.PageSize(ctx); err != nil || size != 4096 || size == pageSize {
			t.Fatalf("page size = %d (%v), want the fixture's 4096", size, err)
		}
	})

	t.Run("a database left at any schema since the fixture's migrates without loss", func(t *testing.T) {
		t.Parallel()
		want := tableCounts(t, openFixture(t))
		for n := fixtureSchema + 1; n < SchemaVersion(); n++ {
			path := copyFixture(t)
			db, err := openKnowing(ctx, path, n)
			if err != nil {
				t.Fatalf("migrating the fixture to schema %d: %v", n, err)
			}
			db.Close()
			db, err = Open(ctx, Opts{Path: path})
			if err != nil {
				t.Fatalf("opening a database at schema %d: %v", n, err)
			}
			if got := tableCounts(t, db); !maps.Equal(got, want) {
				t.Errorf("from schema %d: rows by table %v, want %v", n, got, want)
			}
			var check string
			if err := db.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
				t.Errorf("from schema %d: integrity_check = %q (%v)", n, check, err)
			}
			db.Close()
		}
	})

	t.Run("a proposal's run becomes a foreign key, and a link to a run gc deleted is cleared", func(t *testing.T) {
		t.Parallel()
		path := copyFixture(t)
		db, err := openKnowing(ctx, path, 16)
		if err != nil {
			t.Fatal(err)
		}
		// run 999 is not there: an earlier gc deleted the run a repair was
		// made for, when it did not look at proposals
		if _, err := db.wc.conn.ExecContext(ctx, `INSERT INTO proposals(id, workflow_id, workflow_name, origin, file_name, source, run_id, created_at)
			VALUES (1, 1, 'notes-to-csv', 'repair', 'n.js', 'a', 5, 0), (2, 1, 'notes-to-csv', 'repair', 'n.js', 'b', 999, 0),
			(3, 1, 'notes-to-csv', 'edit', 'n.js', 'c', NULL, 0)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if db, err = Open(ctx, Opts{Path: path}); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for id, want := range map[int64]int64{1: 5, 2: 0, 3: 0} {
			if p, err := db.Read().Proposal(ctx, id); err != nil || p.RunID != want || p.Source == "" {
				t.Errorf("proposal %d after the upgrade: %+v (%v), want run %d", id, p, err, want)
			}
		}
		if got := count(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_list('proposals') WHERE "from" = 'run_id' AND "table" = 'runs'`); got != 1 {
			t.Fatal("proposals.run_id does not reference runs after the upgrade")
		}
		if got := count(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); got != 0 {
			t.Fatalf("foreign_key_check: %d dangling rows", got)
		}
	})

	t.Run("the upgraded database refuses a binary that knows fewer migrations", func(t *testing.T) {
		t.Parallel()
		path := copyFixture(t)
		db, err := Open(ctx, Opts{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		_, err = openKnowing(ctx, path, SchemaVersion()-1)
		if err == nil || !strings.Contains(err.Error(), "use a newer keep") {
			t.Fatalf("an older binary opened the upgraded database: %v", err)
		}
	})
}

// openKnowing opens path as a binary that knows only the first n
// migrations would.
func openKnowing(ctx context.Context, path string, n int) (*DB, error) {
	db := &DB{path: path, logger: slog.New(slog.DiscardHandler)}
	if err := db.open(ctx); err != nil {
		return nil, err
	}
	ms, err := migrations()
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := migrateWith(ctx, db.w, ms[:n]); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.holdWriter(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func TestIncrementalVacuum(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, path := range map[string]func(t *testing.T) string{
		"a new database":  func(t *testing.T) string { return filepath.Join(t.TempDir(), "keep.db") },
		"an upgraded one": copyFixture,
	} {
		t.Run(name+" gives freed pages back (auto_vacuum incremental)", func(t *testing.T) {
			t.Parallel()
			db, err := Open(ctx, Opts{Path: path(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var mode int
			if err := db.wc.conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
				t.Fatalf("auto_vacuum = %d (%v), want 2 (incremental)", mode, err)
			}
		})
	}
}

// tableCounts counts the rows of each of db's tables.
func tableCounts(t *testing.T, db *DB) map[string]int {
	t.Helper()
	rows, err := db.r.QueryContext(context.Background(), `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, n := range names {
		out[n] = count(t, db, `SELECT COUNT(*) FROM "`+n+`"`)
	}
	return out
}

// TestMigrateRace: two keeps migrating one older database at once (two
// the lock file does not keep apart, as Opts.NoLock would): the one that
// waited for the other's migration sees it, and neither applies a
// migration twice nor fails.
func TestMigrateRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	path := copyFixture(t)
	a := &DB{path: path, logger: slog.New(slog.DiscardHandler)}
	b := &DB{path: path, logger: slog.New(slog.DiscardHandler)}
	for _, db := range []*DB{a, b} {
		if err := db.open(ctx); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
	}
	other := false
	// a has read the version (the fixture's) when b migrates the file
	err = migrateSteps(ctx, a.w, ms, func(migration) {
		if !other {
			other = true
			if err := migrateWith(ctx, b.w, ms); err != nil {
				t.Fatalf("the other keep's migration: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("the keep that waited: %v", err)
	}
	var n, v int
	if err := a.w.QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &v); err != nil || n != len(ms) || v != len(ms) {
		t.Fatalf("schema_migrations: %d rows up to %d (%v), want %d", n, v, err, len(ms))
	}
}

// TestMigrateFailsHalfway: a migration that fails half-way leaves the
// database at the previous version, whole.
func TestMigrateFailsHalfway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	schema := func(db *DB) string {
		var s string
		if err := db.w.QueryRowContext(ctx, `SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_schema ORDER BY name)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// one that edits the stored schema in place, one that rebuilds tables
	for _, n := range []int{fixtureSchema + 1, 15, 17} {
		db := &DB{path: copyFixture(t), logger: slog.New(slog.DiscardHandler)}
		if err := db.open(ctx); err != nil {
			t.Fatal(err)
		}
		if err := migrateWith(ctx, db.w, ms[:n-1]); err != nil {
			t.Fatal(err)
		}
		before, counts := schema(db), tableCounts(t, db)
		broken := append([]migration{}, ms[:n]...)
		broken[n-1].sql += "\nSELECT no_such_function();"
		if err := migrateWith(ctx, db.w, broken); err == nil || !strings.Contains(err.Error(), "no_such_function") {
			t.Fatalf("migration %d broken half-way: %v", n, err)
		}
		if v, err := db.Version(ctx); err != nil || v != n-1 {
			t.Fatalf("after migration %d failed half-way: version %d (%v), want %d", n, v, err, n-1)
		}
		if schema(db) != before || !maps.Equal(tableCounts(t, db), counts) {
			t.Fatalf("migration %d failed half-way and left part of itself", n)
		}
		db.Close()
	}
}
