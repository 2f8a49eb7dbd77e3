// Package userpath opens the files a person names on the command line
// (a backup, a database, a config file) so that what is not a regular file
// is refused at once: opening a named pipe blocks until someone writes to
// it, and a device never ends, so either would hang keep where neither a
// context nor SIGTERM reaches.
package userpath

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Check refuses path when it exists and is not a regular file; what names
// the file in the message ("backup", "database"). A missing file is not
// its concern: the caller says what that means.
func Check(what, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return regular(what, path, fi)
}

// Open opens path for reading: stat first, then open with O_NONBLOCK (the
// file may have become a pipe since; such an open returns at once), then
// the opened file is checked again.
func Open(what, path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := regular(what, path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(what, path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile is os.ReadFile through Open.
func ReadFile(what, path string) ([]byte, error) {
	f, err := Open(what, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return b, nil
}

func regular(what, path string, fi fs.FileInfo) error {
	if m := fi.Mode(); !m.IsRegular() {
		return fmt.Errorf("%s %s is not a regular file (it is %s)", what, path, Kind(m))
	}
	return nil
}

// Kind names what a file is, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
