// Package storage owns keep's SQLite file: opening it with the pragmas the
// ledger's durability needs, the embedded migrations, and typed stores.
//
// One writer connection takes every write in an immediate transaction, so
// writes never deadlock on lock upgrades; a separate read pool serves the TUI
// and the CLI without waiting behind the writer (WAL).
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite" // the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"keep/storage/userpath"
)

// ErrNotFound is returned when a row asked for by id does not exist.
var ErrNotFound = errors.New("not found")

// ErrClosed is what every read and write after Close is (errors.Is): a
// *ClosedError naming the file.
var ErrClosed = errors.New("storage: database closed")

// ClosedError is a read or write asked of the database after Close:
// database/sql says only "sql: database is closed", which names neither
// the file nor whose database it was.
type ClosedError struct{ Path string }

func (e *ClosedError) Error() string {
	return fmt.Sprintf("keep's database %s was closed (keep is stopping, or this engine let go of it): the read or write was not done", e.Path)
}

func (e *ClosedError) Is(target error) bool { return target == ErrClosed }

// closedError is what a read or write after Close returns.
func (db *DB) closedError() error { return &ClosedError{Path: db.path} }

// sqlClosed says whether err is database/sql's own refusal of a closed pool
// or connection (the first is not exported, so it is known by its text).
func sqlClosed(err error) bool {
	return err != nil && (errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed")
}

// Opts configures Open.
type Opts struct {
	// Path of the database file; its directory is created if missing.
	Path string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// NoLock skips the exclusive file lock. Only read-only tools that never
	// run an engine (and tests of the lock itself) should set it.
	NoLock bool
}

// DB is an open keep database.
type DB struct {
	path    string
	w       *sql.DB
	wc      *heldConn // w's one connection, held (held.go)
	r       *sql.DB
	rstmts  *stmtCache  // the read pool's statements
	readers heldReaders // r's connections ReadTx keeps (held.go)
	lock    *fileLock
	logger  *slog.Logger

	// queue: writes waiting to be committed together (batch.go)
	queue writeQueue
	// wmu serialises writes, and the reads of ReadLatest, on wc; disk
	// syncs outside it.
	wmu sync.Mutex
	// closed: Close has begun; no write or ReadLatest starts on wc after
	// it (under wmu)
	closed bool
	// disk: what of the log is on disk (sync.go).
	disk durability
	// pages written to the log since the last checkpoint, and the writer
	// connection's count of pages written when last read (checkpoint.go)
	logPages, pagesWritten int
	// pages written to the log since Open (PagesWritten)
	pagesTotal atomic.Int64
	// commits of each kind so far (Commits)
	syncedCommits, unsyncedCommits atomic.Int64
	// told every statement, while a test counts them (CountStatements)
	onStatement statementHook
	// runIDs: the last run id handed out (NewRunID)
	runIDs atomic.Int64
}

// Open opens (creating if needed) the database at opts.Path, takes the
// exclusive engine lock and runs pending migrations. A second Open of the
// same file while the first holds the lock fails with *LockedError.
func Open(ctx context.Context, opts Opts) (_ *DB, err error) {
	// a disk with no room shows at open as SQLite's "disk I/O error",
	// wherever it is met: said once, here, for what it is
	defer func() {
		if abs, aerr := filepath.Abs(opts.Path); err != nil && aerr == nil {
			err = damaged(abs, diskFull(abs, err))
		}
	}()
	if opts.Path == "" {
		return nil, errors.New("storage: empty database path")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	path, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	// before the lock file, or anything else, is made beside it
	if err := CheckFile(ctx, path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("storage: create data directory: %w", err)
	}
	given := path
	if path = realPath(path); path != given {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("storage: create data directory: %w", err)
		}
	}
	db := &DB{path: path, logger: opts.Logger.With("component", "storage")}
	db.disk.init(path)
	if !opts.NoLock {
		if db.lock, err = acquireLocks(given, path); err != nil {
			return nil, err
		}
	}
	if err := ownerOnly(path); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.open(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := migrate(ctx, db.w); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	var maxRun int64
	if err := db.w.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM runs`).Scan(&maxRun); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	db.runIDs.Store(maxRun)
	if err := db.holdWriter(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	// the migrations committed on the writer directly: on disk before use
	if err := db.disk.syncTo(db.disk.wrote()); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// realPath is the absolute path with its symbolic links resolved. SQLite
// follows a link to the database and names its -wal and -shm after the
// file it finds; the lock and the log keep syncs must be named after that
// file too, or an engine opened through a link and one opened through the
// file's own path take two locks on one database, and the log synced is a
// name that does not exist. A file not there yet resolves through its
// folder. (The lock of the path as given is taken too: acquireLocks.)
func realPath(abs string) string {
	if p, err := userpath.RealPath(abs); err == nil {
		return p
	}
	return abs // the open fails on it, and says why
}

// pageSize is the page size keep creates a database with. Every commit
// writes each page it touched to the log whole, and an item's three
// commits touch about 25 pages, nearly all a leaf of a table or an index
// holding one small changed row: at 2 KiB a commit writes and syncs about
// half the bytes of SQLite's default 4 KiB, for no slower reads over a long
// history (engine/benchmark/README.md). A database made with another size
// keeps it: the size is fixed when the file is created.
const pageSize = 2048

// busyTimeoutMS is how long a connection waits for a lock another holds.
const busyTimeoutMS = 10000

func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	if !writer {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "foreign_keys(1)")
	// NORMAL: a commit is written to the log without waiting for the disk;
	// Write then syncs the log (sync.go), so a mutation's in_flight row is
	// on disk before the external call starts, as synchronous FULL would
	// have it, while commits of workflows running at once share one sync.
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		// the writer checkpoints when storage says so (checkpoint.go), after
		// the effects the log records have synced
		q.Add("_pragma", "wal_autocheckpoint(0)")
		// before anything creates the file's first page; the driver runs
		// its pragmas sorted by name, so journal_mode, which writes that
		// page, is set by open instead
		q.Add("_pragma", fmt.Sprintf("page_size(%d)", pageSize))
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return FileURI(path) + "?" + q.Encode()
}

// uriEscaper escapes what SQLite would read as more than a name in a URI's
// path: it ends the path at '?' or '#' and decodes "%HH", so "notes#1.db"
// would open "notes" — another file than the one the lock, the syncs of the
// log and the permissions are about — and the driver cuts its own
// parameters at the first '?'.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// FileURI is the URI that opens the file at path, whatever its name; a
// caller opening a keep database with database/sql itself (the benchmarks)
// appends its "?" parameters to it.
func FileURI(path string) string { return "file:" + uriEscaper.Replace(path) }

func (db *DB) open(ctx context.Context) error {
	w, err := openSQL(dsn(db.path, true))
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	db.w = w
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("storage: %s: journal mode is %q, want wal", db.path, mode)
	}
	r, err := openSQL(dsn(db.path, false))
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	// Four for reads through Read, and those ReadTx keeps (held.go).
	r.SetMaxOpenConns(4 + maxHeldReaders)
	// Keep every reader open: a closed connection takes the statements
	// prepared on it along, and they would be prepared again.
	r.SetMaxIdleConns(4 + maxHeldReaders)
	db.r = r
	db.rstmts = newStmtCache(r, &db.onStatement, db.path)
	return nil
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close waits for the write or ReadLatest under way, makes what was
// committed durable (Sync), closes both pools and releases the lock. Writes
// and ReadLatest after it fail with ErrClosed; a second Close does nothing.
func (db *DB) Close() error {
	// A write or a ReadLatest under way steps through statements of the
	// writer's connection: closing them under it would free what it reads
	// (a fault, not an error). Close waits for it, and nothing starts on
	// the connection after.
	db.wmu.Lock()
	was := db.closed
	db.closed = true
	db.wmu.Unlock()
	if was {
		return nil
	}
	var errs []error
	errs = append(errs, db.Sync(context.Background()))
	errs = append(errs, db.closeReaders())
	if db.rstmts != nil {
		errs = append(errs, db.rstmts.close())
	}
	if db.wc != nil {
		errs = append(errs, db.wc.close())
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if db.lock != nil {
		errs = append(errs, db.lock.release())
	}
	return errors.Join(errs...)
}

// queryer is what the read pool's statement cache and a held connection
// (held.go) offer.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) row
}

// sqlQueryer is what database/sql's pools and connections offer.
type sqlQueryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q runs typed reads, either on the read pool or inside a transaction.
// Both run their queries as statements prepared once and reused
// (stmts.go).
type Q struct{ q queryer }

// Tx is one write transaction. Every typed write lives on Tx, so the engine
// can put several of them into one atomic change; its reads (the embedded Q)
// see the transaction's own writes.
type Tx struct {
	Q
	tq    *heldConn // the writer's, shared by the writes of one batch
	db    *DB
	after []func()
}

// AfterCommit runs fn once the transaction has committed, never when it
// rolls back: a transition announces its move only once the move is durable.
func (tx *Tx) AfterCommit(fn func()) { tx.after = append(tx.after, fn) }

// Read returns the reader for queries outside a transaction. A cancelled
// context fails the reads after it; a read under way runs to its end (they
// are short, and watching each one's context took a goroutine a read).
func (db *DB) Read() Q { return Q{q: db.rstmts} }

// Write runs fn in one immediate transaction on the writer connection and
// commits it if fn returns nil. Writes that arrive together may share the
// transaction (batch.go), each in a savepoint of its own: fn's error rolls
// back fn's writes only. A context that has ended fails the write before fn
// runs, and a statement given one; a statement under way runs to its end.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.write(ctx, true, fn)
}

// WriteUnsynced is Write without waiting for the disk: the commit reaches
// the operating system, so a killed keep keeps it, but a power cut may
// take it, and with it only what was committed after it (the log is
// replayed in order). The next synced commit, or Sync, makes it durable.
// It is for checkpoints whose loss only makes keep redo work it may redo,
// or check with a service what a durable in_flight row says it asked —
// never for what must be on disk before an external call.
func (db *DB) WriteUnsynced(ctx context.Context, fn func(tx *Tx) error) error {
	return db.write(ctx, false, fn)
}

// write runs fn in one immediate transaction and, for a synced write, syncs
// the log once the writer lock is free (sync.go). A failed sync leaves the
// commit in the log but reports it failed: the caller acts as if it had
// not committed, so nothing external follows a commit that may not last.
func (db *DB) write(ctx context.Context, synced bool, fn func(tx *Tx) error) error {
	r, err := db.submit(ctx, synced, fn)
	if err != nil {
		return db.fileError(err)
	}
	if synced {
		if err := db.disk.syncTo(r.n); err != nil {
			return diskFull(db.path, err)
		}
	}
	// after the writer is free: a hook may write again
	for _, fn := range r.after {
		fn()
	}
	return nil
}

// Commits counts the writes committed so far (several may share one
// transaction, batch.go): synced, those that waited for the disk, and
// unsynced, those that did not.
func (db *DB) Commits() (synced, unsynced int64) {
	return db.syncedCommits.Load(), db.unsyncedCommits.Load()
}

// SyncAfter takes the step that makes an external effect durable (an
// appended file's sync) and runs it now, alongside: no sync of the log
// from here on, ours or a checkpoint's, starts before it has succeeded.
// The caller registers it before it commits a record of the effect, so the
// record never reaches the disk before the effect. If it fails, every sync
// from then on fails: the record may be in the log, and must not be taken
// as durable.
func (db *DB) SyncAfter(sync func() error) { db.disk.after(sync) }

// Unsynced says whether a commit may still be waiting for the disk.
func (db *DB) Unsynced() bool { return db.disk.pending() }

// Sync makes every commit so far durable, if an unsynced one may not be:
// the engine calls it when it has nothing more to do, so a commit left
// unsynced never waits for the disk longer than the work that followed it.
// It syncs the write-ahead log file itself — the one file a commit goes to
// — which needs no transaction and writes nothing new.
func (db *DB) Sync(ctx context.Context) error {
	db.disk.mu.Lock()
	n := db.disk.written
	db.disk.mu.Unlock()
	return db.disk.syncTo(n)
}

// Exec runs a statement inside the transaction. It exists for stores kept
// in other files of this package and for tests; other packages use the
// typed methods.
func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.tq.ExecContext(ctx, query, args...)
}

// fileError adds the database's path to an error SQLite gives about its
// file — full disk, I/O, damage, no write access — so that "database or
// disk is full" says which disk, whichever write met it. Other errors are
// about the write, and are left as they are.
func (db *DB) fileError(err error) error {
	if full := diskFull(db.path, err); full != err {
		return full
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w: keep cannot write its database %s: the file or its folder is read-only to this user (make both writable, e.g. chmod u+w); nothing was changed", err, db.path)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return damaged(db.path, err)
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return fmt.Errorf("%w (database %s)", err, db.path)
	}
	return err
}

// damaged says of an error SQLite gives for a damaged file (cut short,
// overwritten in part) that the database at path is what is damaged, and
// what to do: "database disk image is malformed" alone reads, after
// "backup to FILE", as if the backup were, and names no way out.
func damaged(path string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	if c := se.Code() & 0xff; c != sqlite3.SQLITE_CORRUPT && c != sqlite3.SQLITE_NOTADB {
		return err
	}
	return fmt.Errorf("%w: the database %s is damaged (cut short, or overwritten in part); keep leaves it as it is: "+
		"put a backup in its place with keep restore FILE (it keeps the damaged file as %s.before-restore)", err, path, filepath.Base(path))
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
