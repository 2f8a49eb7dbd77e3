package storage

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// noTxMarker opens a migration that cannot run in a transaction (VACUUM,
// some pragmas). Such a migration must be safe to run twice: a crash
// between it and its record in schema_migrations runs it again.
const noTxMarker = "-- keep:no-transaction"

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded files named NNN_name.sql in order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %q is not named NNN_name.sql", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations are not numbered 1..n: found %d at position %d", m.version, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// migrate applies each pending migration in its own transaction. A database
// that has seen a migration newer than this binary knows is refused: running
// an old binary on it could misread every table.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrateWith(ctx, db, ms)
}

// migrateWith applies the pending ones of ms (a test passes fewer, to play
// an older binary).
func migrateWith(ctx context.Context, db *sql.DB, ms []migration) error {
	return migrateSteps(ctx, db, ms, nil)
}

// migrateSteps is migrateWith, calling before (if not nil) ahead of each
// migration's transaction: a test plays another keep there. The version is
// read again inside each migration's immediate transaction, so a keep that
// migrated the file meanwhile (through another name of it: a hard link, a
// bind mount, which the lock file does not join) is seen, and no migration
// runs twice.
func migrateSteps(ctx context.Context, db *sql.DB, ms []migration, before func(m migration)) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrations table: %w", err)
	}
	current, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	for current < len(ms) {
		if err := newerThan(current, ms); err != nil {
			return err
		}
		m := ms[current]
		if before != nil {
			before(m)
		}
		if strings.HasPrefix(m.sql, noTxMarker) {
			if err := migrateOutsideTx(ctx, db, m); err != nil {
				return err
			}
			if current, err = schemaVersion(ctx, db); err != nil {
				return err
			}
			continue
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
		var now int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&now); err != nil {
			tx.Rollback()
			return fmt.Errorf("read schema version: %w", err)
		}
		if now != current {
			// another keep migrated while this one waited for the lock
			tx.Rollback()
			current = now
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		if strings.Contains(m.sql, "writable_schema") {
			// the stored schema was edited in place: a new schema cookie
			// makes every connection, this one too, read it again
			if err := bumpSchemaVersion(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
		current++
	}
	return newerThan(current, ms)
}

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// newerThan refuses a database that has seen a migration newer than ms.
func newerThan(current int, ms []migration) error {
	if current > len(ms) {
		return fmt.Errorf("the database is at schema version %d but this keep binary knows only up to %d: use a newer keep", current, len(ms))
	}
	return nil
}

func migrateOutsideTx(ctx context.Context, db *sql.DB, m migration) error {
	if _, err := db.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
	}
	// OR IGNORE: such a migration is safe to run twice, and another keep
	// may have run and recorded it meanwhile
	if _, err := db.ExecContext(ctx, `INSERT OR IGNORE INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("migration %d: %w", m.version, err)
	}
	return nil
}

// Version is the schema version the database is at.
func (db *DB) Version(ctx context.Context) (int, error) {
	if db.readClosed() {
		return 0, db.closedError()
	}
	var v int
	if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("storage: read schema version: %w", err)
	}
	return v, nil
}

func bumpSchemaVersion(ctx context.Context, tx *sql.Tx) error {
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&v); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA schema_version = %d`, v+1))
	return err
}
