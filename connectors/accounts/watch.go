package accounts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watch calls signedIn with the accounts that were signed in anew each
// time another process replaces the credentials file (keep auth login
// while a daemon or the TUI holds the engine), until ctx ends. It waits on
// inotify: nothing polls.
func (s *Store) Watch(ctx context.Context, signedIn func(names []string)) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("watching the credentials file: %w", err)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return fmt.Errorf("watching the credentials file: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return fmt.Errorf("watching the credentials file: %w", err)
	}
	// a non-blocking descriptor goes through the runtime's poller, so
	// Close below ends a Read in progress
	ino := os.NewFile(uintptr(fd), "inotify")
	seen := s.signInTimes()
	go func() {
		<-ctx.Done()
		ino.Close()
	}()
	go func() {
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		base := filepath.Base(s.path)
		for {
			n, err := ino.Read(buf)
			if err != nil {
				return
			}
			ours := false
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := indexZero(name); i >= 0 {
					name = name[:i]
				}
				ours = ours || string(name) == base
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
			if !ours {
				continue
			}
			now := s.signInTimes()
			var changed []string
			for name, t := range now {
				if !t.Equal(seen[name]) {
					changed = append(changed, name)
				}
			}
			seen = now
			if len(changed) > 0 {
				signedIn(changed)
			}
		}
	}()
	return nil
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// signInTimes reads when each account was last signed in, for accounts
// whose sign-in is usable.
func (s *Store) signInTimes() map[string]time.Time {
	f, _, err := readFile(s.path)
	out := map[string]time.Time{}
	if err != nil {
		return out
	}
	for name, e := range f.Accounts {
		if e.Refused == "" && !e.SignedInAt.IsZero() {
			out[name] = e.SignedInAt
		}
	}
	return out
}
