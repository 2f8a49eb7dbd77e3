package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"keep/storage/userpath"
)

// Backup writes a consistent copy of the database to path with VACUUM INTO.
// It reads in one transaction of its own connection, so in WAL mode it sees
// one snapshot and the writer is never held up. path must not exist.
func (db *DB) Backup(ctx context.Context, path string) error { return BackupFile(ctx, db.path, path) }

// BackupFile is Backup of the database at dbPath, open or not: reading a
// snapshot needs no engine lock.
func BackupFile(ctx context.Context, dbPath, path string) error {
	path, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	if err := userpath.Check("database", dbPath); err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	// a backup holds what the database holds: it is created 0600, empty,
	// before VACUUM INTO fills it (which takes an empty file), so it is
	// never readable by others, not even for a moment
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("storage: backup: %s already exists; not overwriting it", path)
	}
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	f.Close()
	done := false
	defer func() {
		if !done {
			os.Remove(path)
		}
	}()
	c, err := openSQL(sqliteURI(dbPath) + "?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("storage: backup to %s: %w", path, err)
	}
	done = true
	return nil
}

// CheckBackup opens a backup read-only and returns its schema version once
// it passes integrity_check and is not newer than this binary knows.
func CheckBackup(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	if err := userpath.Check("backup", path); err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	c, err := openSQL(sqliteURI(path) + "?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("storage: %s: %w", path, err)
	}
	defer c.Close()
	var check string
	if err := c.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil {
		return 0, fmt.Errorf("storage: %s is not a keep database: %w", path, err)
	}
	if check != "ok" {
		return 0, fmt.Errorf("storage: %s fails its integrity check: %s", path, check)
	}
	var v int
	if err := c.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("storage: %s is not a keep database (no schema version): %w", path, err)
	}
	if known := SchemaVersion(); v > known {
		return v, fmt.Errorf("storage: %s is at schema version %d but this keep binary knows only up to %d: use a newer keep", path, v, known)
	}
	return v, nil
}

// Restore replaces the database at path with the backup at from, after
// CheckBackup. It takes the engine lock first: while an engine holds the
// database it fails with *LockedError and changes nothing. The database
// it replaces is kept as path + ".before-restore".
func Restore(ctx context.Context, from, path string) error {
	path, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	if err := userpath.Check("database", path); err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	lock, err := acquireLock(path + ".lock")
	if err != nil {
		return err
	}
	defer lock.release()
	if _, err := CheckBackup(ctx, from); err != nil {
		return err
	}
	tmp := path + ".restoring"
	if err := copyFile(ctx, from, tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("storage: restore: %w", err)
	}
	if _, err := os.Stat(path); err == nil {
		// fold the old file's WAL into it first: the copy kept aside is then
		// whole, and no stale WAL is left to be replayed onto the backup
		if err := checkpoint(ctx, path); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Rename(path, path+".before-restore"); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("storage: restore: %w", err)
		}
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("storage: restore: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func checkpoint(ctx context.Context, path string) error {
	c, err := openSQL(sqliteURI(path) + "?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("storage: restore: checkpoint of the current database: %w", err)
	}
	return nil
}

// copyFile copies in chunks and stops between them when ctx ends (SIGTERM
// reaches a restore while it works).
func copyFile(ctx context.Context, from, to string) error {
	in, err := userpath.Open("backup", from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			out.Close()
			return err
		}
		n, rerr := in.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return err
			}
			if restoreCopied != nil {
				restoreCopied()
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return rerr
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// restoreCopied lets a test act between two chunks of a restore's copy.
var restoreCopied func()

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: restore: %w", err)
	}
	return nil
}

// FileVersion reads the schema version of the database at path without
// opening it as an engine (no lock, no migration).
func FileVersion(ctx context.Context, path string) (int, error) {
	if err := userpath.Check("database", path); err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	c, err := openSQL(sqliteURI(path) + "?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	defer c.Close()
	var v int
	if err := c.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("storage: %s: no schema version: %w", path, err)
	}
	return v, nil
}
