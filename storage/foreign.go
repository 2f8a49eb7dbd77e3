package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"keep/storage/userpath"
)

// NotKeepError says the file at Path is there and is not a keep database:
// keep leaves it as it is and creates nothing beside it.
type NotKeepError struct {
	Path string
	Why  string // what the file is instead
}

func (e *NotKeepError) Error() string {
	return fmt.Sprintf("%s is not a keep database (%s): keep leaves it as it is; give --db (or KEEP_DB) a keep database, or a path where nothing is yet", e.Path, e.Why)
}

// sqliteMagic is how every SQLite database file starts.
const sqliteMagic = "SQLite format 3\x00"

// CheckFile says whether the file at path may be opened as keep's
// database, creating and changing nothing, so that it can be asked before
// any lock file is made beside it: a path where nothing is (keep makes its
// database there), an empty file, and an SQLite file with no tables or
// with keep's are; anything else is a *NotKeepError (or userpath's refusal
// of what is not a regular file). What it cannot read, it leaves to the
// open, which says why.
func CheckFile(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if err := userpath.Check("database", path); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if fi.Size() == 0 {
		return nil
	}
	f, err := userpath.Open("database", path)
	if err != nil {
		return nil
	}
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	f.Close()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && string(head) != sqliteMagic):
		return &NotKeepError{Path: path, Why: "it is not an SQLite file"}
	case err != nil:
		return nil
	case fi.Size() < 512: // SQLite's smallest page: a database is a page at least
		return &NotKeepError{Path: path, Why: fmt.Sprintf("an SQLite file cut short at %d bytes", fi.Size())}
	}
	tables, migrations, err := schemaOf(ctx, path)
	if err != nil || len(tables) == 0 {
		return nil
	}
	if !slices.Contains(tables, "schema_migrations") {
		if len(tables) > 5 {
			tables = append(tables[:5:5], "…")
		}
		return &NotKeepError{Path: path, Why: "an SQLite database of something else: its tables are " + strings.Join(tables, ", ")}
	}
	if !slices.Contains(migrations, "name") || !slices.Contains(migrations, "applied_at") {
		return &NotKeepError{Path: path, Why: "an SQLite database of something else: its schema_migrations is not keep's"}
	}
	return nil
}

// schemaOf reads the names of the tables of the SQLite file at path, and
// the columns of its schema_migrations, opening it immutable: no lock, no
// journal, no -wal or -shm is made beside it, and nothing is written.
func schemaOf(ctx context.Context, path string) (tables, migrations []string, err error) {
	c, err := openSQL(FileURI(path) + "?mode=ro&immutable=1")
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	names := func(query string) ([]string, error) {
		rows, err := c.QueryContext(ctx, query)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, rows.Err()
	}
	if tables, err = names(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`); err != nil {
		return nil, nil, err
	}
	if !slices.Contains(tables, "schema_migrations") {
		return tables, nil, nil
	}
	migrations, err = names(`SELECT name FROM pragma_table_info('schema_migrations')`)
	return tables, migrations, err
}
