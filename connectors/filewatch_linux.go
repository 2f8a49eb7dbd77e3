package connectors

import (
	"context"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchFolder calls seen for each file named base in dir that is closed
// after a write or renamed in, until ctx ends. It asks inotify for those
// two events alone: the folder may hold the database, whose log is written
// at every commit, and a watch that woke for each write (fsnotify's, which
// cannot be narrowed) would cost the engine a wake-up a commit.
func watchFolder(ctx context.Context, dir, base string, seen func()) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return err
	}
	// a non-blocking descriptor goes through the runtime's poller, so
	// Close ends a Read in progress
	ino := os.NewFile(uintptr(fd), "inotify")
	context.AfterFunc(ctx, func() { ino.Close() })
	go func() {
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		for {
			n, err := ino.Read(buf)
			if err != nil {
				return
			}
			if namesIn(buf[:n], base) {
				seen()
			}
		}
	}()
	return nil
}

// namesIn says whether one of the inotify events in buf is about base, or
// is the queue's overflow (events were lost: base may have changed).
func namesIn(buf []byte, base string) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			return true
		}
		name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if string(name) == base {
			return true
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	return false
}
