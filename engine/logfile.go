package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"gopkg.in/natefinch/lumberjack.v2"
)

// logBackups is how many rotated keep.log files are kept beside it.
const logBackups = 3

// OpenLog returns a logger writing to path (keep.log), rotated when it
// passes maxMB megabytes, with logBackups older files kept beside it. The
// closer releases the file.
func OpenLog(path string, maxMB int, level slog.Level) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	if maxMB < 1 {
		maxMB = 1
	}
	// lumberjack creates keep.log and its backups 0600 (a log may name
	// workflows, files and addresses), but appends to an existing one with
	// the mode it has, and rotates into that mode: one an older keep left
	// readable is made private first
	if err := privateLog(path); err != nil {
		return nil, nil, err
	}
	w := &lumberjack.Logger{Filename: path, MaxSize: maxMB, MaxBackups: logBackups}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), w, nil
}

func privateLog(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		// a link planted where keep.log goes would have every line appended
		// to its target (lumberjack opens by name, following links)
		return fmt.Errorf("%s is not a file of keep's own (%s): keep writes its log only to a regular file there; remove it and start again", path, fi.Mode().Type())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(path, fi.Mode().Perm()&0o700)
	}
	return nil
}
