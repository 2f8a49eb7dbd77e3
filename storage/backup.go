package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	if err := notOwnFile(dbPath, path); err != nil {
		return err
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
	// VACUUM INTO writes the copy under a rollback journal beside it,
	// which a failure (a full disk) leaves behind: that goes too, unless
	// it was there before, and so is not this backup's to remove
	journal := path + "-journal"
	_, err = os.Lstat(journal)
	journalBefore := err == nil
	done := false
	defer func() {
		if !done {
			os.Remove(path)
			if !journalBefore {
				os.Remove(journal)
			}
		}
	}()
	c, err := openSQL(FileURI(dbPath) + "?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		// the copy is a new empty file: damage met is the database's
		return damaged(dbPath, fmt.Errorf("storage: backup to %s: %w", path, err))
	}
	// VACUUM INTO syncs the copy, but it writes it under a rollback
	// journal beside it and removes the journal at its commit without
	// syncing the folder: a power cut after "wrote" could bring the journal
	// back, hot, and the next open would roll the backup back to the empty
	// file it began as. Nor is the copy's own name on disk before its
	// folder is synced. The backup is written once both are.
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("storage: backup to %s: sync its folder: %w", path, err)
	}
	done = true
	return nil
}

// notOwnFile refuses a backup path among keep's own files beside the
// database at dbPath, by the paths as given or through symbolic links:
// every name there that begins with the database's (SQLite's -wal, -shm
// and -journal; keep's .lock, .engine, .starting, .sock, .restoring, and
// whatever keep names after the database next) and keep.log with its
// rotations (DESIGN §16: keep's files by place). A backup written to one
// is lost without a word: SQLite deletes a -wal or a -journal that is not
// a log of the database when it next opens it (the backup's own connection
// does, as it closes), a restore removes a .restoring left behind, a
// daemon writes its pid over .engine and refuses to start beside a .sock
// that is not a socket, and appends its log to keep.log. The rule is the
// names' form, not a list of them, so that a file keep adds there later is
// covered.
func notOwnFile(dbPath, path string) error {
	db, err := filepath.Abs(dbPath)
	if err != nil {
		return fmt.Errorf("storage: backup: %w", err)
	}
	for _, base := range []string{db, realPath(db)} {
		dir, name := filepath.Dir(base), filepath.Base(base)
		for _, t := range []string{path, realPath(path)} {
			if filepath.Dir(t) != dir {
				continue
			}
			if n := filepath.Base(t); strings.HasPrefix(n, name) || strings.HasPrefix(n, ownLog) {
				return fmt.Errorf("storage: backup: %s is one of keep's own files beside its database %s "+
					"(every name there beginning %s, and %s), which SQLite or keep may remove or overwrite; write the backup to a file of its own", path, db, name, ownLog)
			}
		}
	}
	return nil
}

// ownLog is the daemon's log beside the database, and the start of its
// rotations' names.
const ownLog = "keep.log"

// CheckBackup opens a backup read-only and returns its schema version once
// it passes integrity_check and is not newer than this binary knows.
func CheckBackup(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	if err := userpath.Check("backup", path); err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	c, err := openSQL(FileURI(path) + "?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("storage: %s: %w", path, err)
	}
	defer c.Close()
	var check string
	if err := c.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil {
		// a backup cut short or damaged starts as an SQLite file does, and
		// is told apart from a file that is no database at all: the one
		// calls for an earlier backup, the other for the right file
		if sqliteFile(path) {
			return 0, fmt.Errorf("storage: %s is a damaged database (cut short, or overwritten in part), not a backup to restore: %w", path, err)
		}
		return 0, fmt.Errorf("storage: %s is not a keep database: %w", path, err)
	}
	if check != "ok" {
		return 0, fmt.Errorf("storage: %s fails its integrity check: %s", path, check)
	}
	// golang-migrate, Rails and others keep a schema_migrations with a
	// version too: the version alone let another program's database
	// replace keep's, which keep then refused to open. keep's has a name
	// and applied_at as well (CheckFile asks the same of --db), and its
	// first migration is 1.
	var keepColumns int
	if err := c.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('schema_migrations')
		WHERE name IN ('version', 'name', 'applied_at')`).Scan(&keepColumns); err != nil {
		return 0, fmt.Errorf("storage: %s is not a keep database: %w", path, err)
	}
	if keepColumns != 3 {
		return 0, fmt.Errorf("storage: %s is not a keep database (an SQLite database of something else: its schema_migrations is not keep's)", path)
	}
	var v int
	if err := c.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("storage: %s is not a keep database (no schema version): %w", path, err)
	}
	if v < 1 {
		return 0, fmt.Errorf("storage: %s is not a keep database (its schema_migrations is empty: it holds nothing to restore)", path)
	}
	if known := SchemaVersion(); v > known {
		return v, fmt.Errorf("storage: %s is at schema version %d but this keep binary knows only up to %d: use a newer keep", path, v, known)
	}
	return v, nil
}

// sqliteFile says whether the file at path begins as an SQLite database.
func sqliteFile(path string) bool {
	f, err := userpath.Open("backup", path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == sqliteMagic
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
	// the locks Open takes, and the file itself: a link to the database
	// stays one
	given := path
	path = realPath(path)
	lock, err := acquireLocks(given, path)
	if err != nil {
		return err
	}
	defer lock.release()
	if _, err := CheckBackup(ctx, from); err != nil {
		return err
	}
	tmp := path + ".restoring"
	// the copy starts by removing what is at tmp: given the copy an
	// interrupted restore left there, it removed the file it was to copy
	if fromInfo, err := os.Stat(from); err == nil {
		if tmpInfo, err := os.Stat(tmp); err == nil && os.SameFile(fromInfo, tmpInfo) {
			return fmt.Errorf("storage: restore: %s is where restore copies a backup to, left by a restore that was interrupted; "+
				"move it elsewhere and restore from there (or from the backup it was copied from)", from)
		}
	}
	if err := copyWhole(ctx, from, tmp); err != nil {
		removeDatabase(tmp)
		return fmt.Errorf("storage: restore: %w", err)
	}
	// what goes in place is the copy, not the file checked above: one
	// that changed while it was copied (a database another engine still
	// writes, a backup still being written) may be torn
	if _, err := CheckBackup(ctx, tmp); err != nil {
		removeDatabase(tmp)
		return fmt.Errorf("storage: restore: %s changed while it was copied, and the copy does not check; nothing was replaced: %w", from, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(tmp + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			removeDatabase(tmp)
			return fmt.Errorf("storage: restore: %w", err)
		}
	}
	if _, err := os.Stat(path); err == nil {
		if err := keepAside(ctx, path); err != nil {
			removeDatabase(tmp)
			return fmt.Errorf("storage: restore: keep the current database aside: %w", err)
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
	// the folder holds every name this changed: the database kept aside,
	// the restored one in its place, its old log removed
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("storage: restore: sync the folder of %s: %w", path, err)
	}
	return nil
}

// keepAside moves the database at path to path + ".before-restore", whole.
// Its log is folded into it first, so the file kept aside holds every
// commit by itself. A database SQLite cannot checkpoint (damaged: the one
// a restore is often for) goes aside as it is, its -wal beside it, which
// SQLite reads along with it: a restore is never refused for the state of
// the file it replaces, and loses nothing of it. A file kept aside by an
// earlier restore moves on to the first free ".before-restore.N": it may
// be the only copy of what was there before both.
func keepAside(ctx context.Context, path string) error {
	aside := path + ".before-restore"
	if _, err := os.Lstat(aside); err == nil {
		for n := 1; ; n++ {
			older := aside + "." + strconv.Itoa(n)
			if _, err := os.Lstat(older); err == nil {
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if err := renameDatabase(aside, older); err != nil {
				return err
			}
			break
		}
	}
	_ = checkpoint(ctx, path) // on failure the log goes along
	return renameDatabase(path, aside)
}

// renameDatabase renames the file at from and its -wal, if that holds
// anything, to to; a -shm is rebuilt from the log, so it is removed. The
// log goes first: killed in between, from is left an older database, not
// a log without its file, which the next open would replay onto a new one.
func renameDatabase(from, to string) error {
	if fi, err := os.Stat(from + "-wal"); err == nil && fi.Size() > 0 {
		if err := os.Rename(from+"-wal", to+"-wal"); err != nil {
			return err
		}
	}
	if err := os.Rename(from, to); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(from + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// copyWhole copies the database at from to a new file at to, with what
// its log holds. A database an engine did not close (killed, or copied
// while it ran) keeps commits in its -wal that its main file lacks, and
// may even be half-way through a checkpoint: CheckBackup reads it through
// the log, and a copy of the main file alone would restore an older
// database, or a torn one, in its place. So the log is copied beside the
// copy and folded into it, as opening from would.
func copyWhole(ctx context.Context, from, to string) error {
	// a log left by a restore that was killed would be replayed onto
	// this copy
	removeDatabase(to)
	if err := copyFile(ctx, from, to); err != nil {
		return err
	}
	fi, err := os.Stat(from + "-wal")
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if err := copyFile(ctx, from+"-wal", to+"-wal"); err != nil {
		return err
	}
	if err := checkpoint(ctx, to); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(to + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// removeDatabase removes the file at path and its -wal and -shm, as far as
// they exist.
func removeDatabase(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

func checkpoint(ctx context.Context, path string) error {
	c, err := openSQL(FileURI(path) + "?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint of %s: %w", path, err)
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

// syncDir syncs a folder whose names a backup or a restore changed, at the
// end of it (syncdir_unix.go); tests replace it to see which folders are
// synced, and when.
var syncDir = syncDirectory

// FileVersion reads the schema version of the database at path without
// opening it as an engine (no lock, no migration).
func FileVersion(ctx context.Context, path string) (int, error) {
	if err := userpath.Check("database", path); err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	c, err := openSQL(FileURI(path) + "?mode=ro&_pragma=busy_timeout(10000)")
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
