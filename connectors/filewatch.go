package connectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WatchFile calls changed each time the file at path is written or
// replaced (an editor's or keep's own atomic rename too), until ctx ends.
// It waits on inotify on the file's folder, which must exist: nothing
// polls. keep's own files that another process may change under a running
// engine (the config, credentials.json) are watched through it.
func WatchFile(ctx context.Context, path string, changed func()) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("watching %s: %w", path, err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return fmt.Errorf("watching %s: %w", path, err)
	}
	// a non-blocking descriptor goes through the runtime's poller, so
	// Close below ends a Read in progress
	ino := os.NewFile(uintptr(fd), "inotify")
	go func() {
		<-ctx.Done()
		ino.Close()
	}()
	go func() {
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		base := filepath.Base(path)
		for {
			n, err := ino.Read(buf)
			if err != nil {
				return
			}
			if namesIn(buf[:n], base) {
				changed()
			}
		}
	}()
	return nil
}

// namesIn says whether one of the inotify events in buf is about base.
func namesIn(buf []byte, base string) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
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
