package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"keep/storage/userpath"
)

// ownerOnly makes the database file and its -wal and -shm 0600 before
// SQLite opens them. SQLite creates a new database 0644 (less the umask)
// and gives its -wal and -shm the database's own mode, so creating the file
// 0600 first is what keeps all three from others; a file an older keep
// left readable is tightened.
func ownerOnly(path string) error {
	if err := userpath.Check("database", path); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return fmt.Errorf("storage: create %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := tighten(p); err != nil {
			return err
		}
	}
	return nil
}

// tighten takes group and other access off p, if p exists.
func tighten(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("storage: make %s private: %w", p, err)
	}
	return nil
}
