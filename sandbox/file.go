package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxSourceSize caps a workflow file. A workflow is one file of handlers; a
// megabyte is far more than one needs, and the cap keeps `keep validate
// /dev/zero` from reading without end.
const MaxSourceSize = 1 << 20

// ReadFile reads a workflow file for Load. It refuses what is not a regular
// file (a directory, a device, a named pipe, a socket) and a file over
// MaxSourceSize. A named pipe is never opened for reading in blocking mode,
// so no writer on the other end can hold keep.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("workflow file: %w", err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	// O_NONBLOCK: the file may have been swapped for a pipe since the
	// Stat; opening a pipe this way returns at once.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("workflow file: %w", err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("workflow file: %w", err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxSourceSize+1))
	if err != nil {
		return nil, fmt.Errorf("workflow file %s: %w", path, err)
	}
	if len(src) > MaxSourceSize {
		return nil, tooLarge(path, int64(len(src)))
	}
	return src, nil
}

// regular refuses what is not a regular file or is too large by its size.
func regular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if !m.IsRegular() {
		return fmt.Errorf("workflow file %s is not a regular file (it is %s)", path, fileKind(m))
	}
	if fi.Size() > MaxSourceSize {
		return tooLarge(path, fi.Size())
	}
	return nil
}

func tooLarge(path string, size int64) error {
	return fmt.Errorf("workflow file %s is over the limit of %d bytes (%d KiB) for a workflow file (it has at least %d bytes)", path, MaxSourceSize, MaxSourceSize>>10, size)
}

func fileKind(m fs.FileMode) string {
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
	return "not a regular file: " + m.Type().String()
}
