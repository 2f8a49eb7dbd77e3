package storage

// A commit's frames reach the log in two writes.
//
// SQLite writes each page of a commit to the write-ahead log as two writes,
// the frame's 24-byte header and then the page: a commit of 13 pages is 26
// system calls, and as a frame is 2,072 bytes long, the kernel's page
// cache is touched three times a frame where once would do. keep's files
// are opened through SQLite's own VFS with one change: a log's writes that
// follow one another are gathered in a buffer, and written as one write
// when a commit frame's header comes (with it), or when a write does not
// follow the last or would overfill the buffer, or before anything reads,
// sizes, truncates, syncs or closes the log. The write after a commit
// frame's header, that frame's page, goes to the file at once.
//
// So every byte SQLite wrote before and with a commit frame's header is in
// the file when the header's write returns, and the frame's page when its
// own does, before SQLite makes the commit visible to any reader (the
// write's error is the commit's). That holds whatever order SQLite writes
// a commit in: frames appended, or, after a commit spilled pages early,
// pages rewritten in place and the headers' checksums after them, the
// commit frame's header last and no page after it. What reaches the file,
// and in what order, is what SQLite wrote; only the number of writes
// changes. A process killed with frames in the buffer loses frames no
// commit included, as a kill between two of SQLite's own writes would.

import (
	"database/sql"
	"encoding/binary"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

const (
	// frameHeader is the size of a frame's header in the log; its bytes
	// 4..8 hold the database's size after a commit, zero in a frame that
	// does not end one (https://sqlite.org/fileformat.html, "WAL file").
	frameHeader = 24
	// gatherMax bounds the buffer: SQLite's unix VFS writes at most this
	// much in one call (it masks a write's length with 0x1ffff), so a
	// commit larger than this writes in pieces.
	gatherMax = 1<<17 - 1
)

// The C-side objects live outside the Go heap (package variables and
// libc's memory), as SQLite keeps their addresses.
var (
	gatherOnce sync.Once
	gatherVFS  sqlite3.Tsqlite3_vfs
	realVFS    uintptr // SQLite's default VFS, which does the work
	// logMethods are the real methods of the first log opened, with the
	// writes gathered; a log whose real methods differ is left as opened
	logMethods  sqlite3.Tsqlite3_io_methods
	realMethods uintptr
	methodsOnce sync.Once

	logs sync.Map // a log's sqlite3_file address → *logFile

	// logWrite is the real write of a log's bytes; a test may fail it
	logWrite = callWrite
)

// logFile is one open log's buffer: n bytes at buf, for offset off.
type logFile struct {
	real uintptr // the file's real io methods
	buf  uintptr
	cap  int
	n    int
	off  int64
	// page: the last write was a commit frame's header, so the next is
	// that frame's page, the commit's last bytes
	page bool
}

// registerGatheringVFS makes keep's VFS SQLite's default, once: every
// connection of this process, whoever opens it, gathers its log writes.
func registerGatheringVFS() {
	gatherOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		realVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if realVFS == 0 {
			return
		}
		gatherVFS = *(*sqlite3.Tsqlite3_vfs)(cptr(realVFS))
		gatherVFS.FpNext = 0
		name, err := libc.CString("keep")
		if err != nil {
			return
		}
		gatherVFS.FzName = name
		*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&gatherVFS.FxOpen)) = gatherOpen
		if sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&gatherVFS)), 1) != sqlite3.SQLITE_OK {
			gatherVFS = sqlite3.Tsqlite3_vfs{}
		}
	})
}

// gatherOpen is the real open; a log (and only a log) gets the gathering
// methods.
func gatherOpen(tls *libc.TLS, _ uintptr, zName uintptr, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	real := (*sqlite3.Tsqlite3_vfs)(cptr(realVFS)).FxOpen
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&real)))(tls, realVFS, zName, pFile, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK || flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		return rc
	}
	f := (*sqlite3.Tsqlite3_file)(cptr(pFile))
	methodsOnce.Do(func() { setLogMethods(f.FpMethods) })
	if f.FpMethods == 0 || f.FpMethods != realMethods {
		return rc
	}
	logs.Store(pFile, &logFile{real: f.FpMethods})
	f.FpMethods = uintptr(unsafe.Pointer(&logMethods))
	return rc
}

func setLogMethods(real uintptr) {
	if real == 0 {
		return
	}
	realMethods = real
	logMethods = *(*sqlite3.Tsqlite3_io_methods)(cptr(real))
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&logMethods.FxClose)) = logClose
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&logMethods.FxRead)) = logRead
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&logMethods.FxWrite)) = logWriteAt
	*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&logMethods.FxTruncate)) = logTruncate
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&logMethods.FxSync)) = logSync
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&logMethods.FxFileSize)) = logFileSize
	*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&logMethods.FxFileControl)) = logFileControl
}

func logOf(pFile uintptr) *logFile {
	v, _ := logs.Load(pFile)
	return v.(*logFile)
}

func methods(real uintptr) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(cptr(real))
}

func callWrite(tls *libc.TLS, real, pFile, z uintptr, n int32, off int64) int32 {
	fn := methods(real).FxWrite
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fn)))(tls, pFile, z, n, off)
}

// flush writes what l holds; its error is the caller's to return.
func (l *logFile) flush(tls *libc.TLS, pFile uintptr) int32 {
	if l.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n := l.n
	l.n = 0
	return logWrite(tls, l.real, pFile, l.buf, int32(n), l.off)
}

func logWriteAt(tls *libc.TLS, pFile uintptr, z uintptr, amt int32, off int64) int32 {
	l := logOf(pFile)
	size := int(amt)
	src := unsafe.Slice((*byte)(cptr(z)), size)
	page := l.page
	commit := size == frameHeader && binary.BigEndian.Uint32(src[4:8]) != 0
	l.page = false
	if l.n > 0 && (off != l.off+int64(l.n) || l.n+size > gatherMax) {
		if rc := l.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if size > gatherMax || page || !l.fits(tls, size) {
		// on its own, after what the buffer holds: a commit frame's page
		// (its header flushed the buffer), or a write too large for it
		if rc := l.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
		rc := logWrite(tls, l.real, pFile, z, amt, off)
		l.page = commit && rc == sqlite3.SQLITE_OK
		return rc
	}
	if l.n == 0 {
		l.off = off
	}
	copy(unsafe.Slice((*byte)(cptr(l.buf+uintptr(l.n))), size), src)
	l.n += size
	if !commit {
		return sqlite3.SQLITE_OK
	}
	rc := l.flush(tls, pFile)
	l.page = rc == sqlite3.SQLITE_OK
	return rc
}

// fits makes room in the buffer for size bytes more; false when there is
// no memory for it.
func (l *logFile) fits(tls *libc.TLS, size int) bool {
	if l.n+size <= l.cap {
		return true
	}
	c := max(2*l.cap, 64<<10, l.n+size)
	p := libc.Xrealloc(tls, l.buf, uint64(c))
	if p == 0 {
		return false
	}
	l.buf, l.cap = p, c
	return true
}

// flushed is the open log at pFile with its buffer written: what any
// method but a write does first.
func flushed(tls *libc.TLS, pFile uintptr) (*logFile, int32) {
	l := logOf(pFile)
	return l, l.flush(tls, pFile)
}

func logRead(tls *libc.TLS, pFile uintptr, z uintptr, amt int32, off int64) int32 {
	l, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	fn := methods(l.real).FxRead
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fn)))(tls, pFile, z, amt, off)
}

func logTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	l, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	fn := methods(l.real).FxTruncate
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&fn)))(tls, pFile, size)
}

func logSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	l, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	fn := methods(l.real).FxSync
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&fn)))(tls, pFile, flags)
}

func logFileSize(tls *libc.TLS, pFile uintptr, pSize uintptr) int32 {
	l, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	fn := methods(l.real).FxFileSize
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFile, pSize)
}

func logFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	l, rc := flushed(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	fn := methods(l.real).FxFileControl
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFile, op, pArg)
}

func logClose(tls *libc.TLS, pFile uintptr) int32 {
	l := logOf(pFile)
	rc := l.flush(tls, pFile)
	fn := methods(l.real).FxClose
	if crc := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = crc
	}
	if l.buf != 0 {
		libc.Xfree(tls, l.buf)
	}
	logs.Delete(pFile)
	return rc
}

// openSQL opens a database handle of keep's, its log writes gathered.
func openSQL(dsn string) (*sql.DB, error) {
	registerGatheringVFS()
	return sql.Open("sqlite", dsn)
}

// cptr is the address u, which is C memory (libc's, or a package
// variable handed to SQLite), as a pointer: the Go heap never holds it.
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
