package files

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

// A file copied into a folder in place (cp, a download) is there, with a
// size, from its first write: a workflow that took it then would read half
// of it, and nothing would tell it the rest came. So list leaves out a file
// still being written, and read refuses one for now. Where the kernel can
// say whether a file is open for writing (Linux: writing_linux.go) its word
// decides; where it cannot, a file changed within the last settle is taken
// to be still being written.
//
// Whoever lists learns through connectors.Call.Unfinished that something
// was left out: no event follows the writer's close (fsnotify reports the
// writes, not the close), so a watch must look again on its own.

// settle is how long a file must have gone unchanged to be taken as
// finished where the kernel cannot say whether it is still open for
// writing.
const settle = time.Second

// recentlyChanged is the settle rule: st changed within settle of now, on
// either side (a file's time is the kernel's coarse clock, a tick behind
// now at most; one set far ahead, by touch or a copy that keeps times, is
// not being written for all that, and must not be left out for ever).
func recentlyChanged(st *unix.Stat_t, now time.Time) bool {
	d := now.Sub(time.Unix(st.Mtim.Unix()))
	return d > -settle && d < settle
}

// openLeased is connectors.OpenAt for writing with openNoWait, asked again
// for a moment while the open is refused with EWOULDBLOCK: that is a
// lease on the file (a list's probe holds one for two system calls, a
// file server for longer), which an open that may not wait is refused.
func openLeased(dir *os.File, name string, flags int, perm os.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := connectors.OpenAt(dir, name, flags, perm)
		if !errors.Is(err, unix.EWOULDBLOCK) || try == 100 {
			return f, err
		}
		time.Sleep(time.Millisecond)
	}
}
