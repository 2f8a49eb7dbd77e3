package files

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openForWriting asks the kernel whether any process has the file fd (open
// read-only) open for writing: a read lease (man 2 fcntl, "Leases") is
// refused with EAGAIN exactly then. One granted is let go at once: while
// it is held a writer's open waits for it, or is refused if it may not
// wait (openLeased), and keep is sent SIGIO, which Go ignores unasked.
// known is false when the kernel would not answer: leases need the caller
// to own the file (or CAP_LEASE), and some filesystems (NFS, 9p) and
// fs.leases-enable=0 refuse them outright.
func openForWriting(fd int) (writing, known bool) {
	switch _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err {
	case nil:
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		return false, true
	case unix.EAGAIN:
		return true, true
	default:
		return false, false
	}
}

// beingWritten says whether list should leave out the regular file name of
// the folder dirfd, st its stat: one open, two fcntl and a close. Where the
// kernel cannot answer (a file of another user's, one keep may not read, a
// filesystem without leases) the settle rule decides: listing it would
// risk the half file this guards against, and leaving it out costs a
// finished file a second's wait at most.
func beingWritten(dirfd int, name string, st *unix.Stat_t, now time.Time) bool {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|openNoWait, 0)
	if err != nil {
		return recentlyChanged(st, now)
	}
	defer unix.Close(fd)
	writing, known := openForWriting(fd)
	if !known {
		return recentlyChanged(st, now)
	}
	return writing
}

// stillWritten says whether read should refuse the regular file f for now.
// Only the kernel's word refuses: a read is of a file the workflow names,
// often one it wrote itself a moment ago, and the settle rule would make
// every such read wait.
func stillWritten(f *os.File) bool {
	raw, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var writing bool
	_ = raw.Control(func(fd uintptr) { writing, _ = openForWriting(int(fd)) })
	return writing
}
