package sheets

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"keep/connectors"
	"keep/connectors/files"
)

// fileOps are the file system calls around the rename, replaceable in tests
// to fail at each step of an atomic write. Names are in dir, a folder
// opened with connectors.OpenBeneath.
type fileOps struct {
	write   func(f *os.File, data []byte) error
	rename  func(dir *os.File, from, to string) error
	syncDir func(dir *os.File) error
}

func osOps() fileOps {
	return fileOps{
		write: func(f *os.File, data []byte) error {
			_, err := f.Write(data)
			return err
		},
		rename: func(dir *os.File, from, to string) error {
			if err := unix.Renameat(int(dir.Fd()), from, int(dir.Fd()), to); err != nil {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
			}
			return nil
		},
		syncDir: func(dir *os.File) error { return dir.Sync() },
	}
}

// change says what a mutation did to a table: which record it wrote, whether
// it appended that record, and whether the header changed too. A file is
// rewritten whole; a Google sheet gets only the changed rows.
type change struct {
	row      int
	appended bool
	header   bool
	// headerFrom is the first header cell the mutation wrote (the cells
	// before it were there already); cols, for an update, the record's
	// cells it set. A Google sheet gets only these: its other cells were
	// read as formatted text, and written back they would replace a
	// formula by its result and a number by text.
	headerFrom int
	cols       []int
	// typed are the record's cells a Google sheet gets as numbers or
	// booleans (typed), by column.
	typed map[int]any
}

// save writes t back where it came from.
// ch.row is where the record is afterwards: Google may put an appended
// row elsewhere than last.
func (c *Connector) save(ctx context.Context, loc location, t *table, ch *change) error {
	if loc.google != nil {
		return c.saveGoogle(ctx, loc, t, ch)
	}
	return c.saveFile(ctx, loc, t)
}

// saveFile renders t and replaces the sheet file with it atomically.
func (c *Connector) saveFile(ctx context.Context, loc location, t *table) error {
	data, err := t.render()
	if err != nil {
		return connectors.Errorf(connectors.Internal, "render %s: %w", loc.label, err)
	}
	if int64(len(data)) > c.maxSize {
		return connectors.Errorf(connectors.Logic, "%s would grow to %d bytes, past the limit of %d", loc.label, len(data), c.maxSize)
	}
	return c.writeAtomic(ctx, loc, data, t)
}

// writeAtomic writes data to a temporary file beside the sheet, syncs it and
// renames it over the sheet, so a reader (or a crash) sees the old file or
// the new one, never half of one. Every failure before the rename leaves the
// sheet untouched and is definite; from the rename on, the new file may be in
// place, so failures are Uncertain and reconciliation re-reads the file.
func (c *Connector) writeAtomic(ctx context.Context, loc location, data []byte, t *table) error {
	// Walked to, not opened by name: a folder on the way swapped for a link
	// since locate checked it cannot take the write out of the roots.
	if !t.exists {
		if err := os.MkdirAll(loc.root, 0o755); err != nil {
			return classifyIO("create the directory of "+loc.label, err)
		}
	}
	dir, err := connectors.OpenBeneath(loc.root, filepath.Dir(loc.file), !t.exists)
	if err != nil {
		return classifyIO("open the directory of "+loc.label, err)
	}
	defer dir.Close()
	name := filepath.Base(loc.file)
	f, tmp, err := createTemp(dir)
	if err != nil {
		return classifyIO("create a temporary file for "+loc.label, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			unix.Unlinkat(int(dir.Fd()), tmp, 0)
		}
	}()
	err = c.ops.write(f, data)
	if err == nil {
		err = f.Chmod(t.mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return classifyIO("write "+loc.label, err)
	}
	// Last chance to give up with nothing done: the host's deadline, or
	// another program having written the sheet since we read it.
	if err := ctx.Err(); err != nil {
		return &connectors.Error{Class: connectors.Transient, Err: err}
	}
	var fi fs.FileInfo
	if sf, err := connectors.OpenAt(dir, name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0); err == nil {
		fi, err = sf.Stat()
		sf.Close()
		if err != nil {
			return classifyIO("stat "+loc.label, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return classifyIO("stat "+loc.label, err)
	}
	if stampOf(fi) != t.stamp {
		return connectors.Errorf(connectors.Transient, "%s changed while it was being written; try again", loc.label)
	}
	// A failed rename normally means nothing happened, but an I/O error can
	// leave it done: reconciliation can tell cheaply, so don't guess.
	renamed = true
	if err := c.ops.rename(dir, tmp, name); err != nil {
		var st unix.Stat_t
		if unix.Fstatat(int(dir.Fd()), tmp, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			unix.Unlinkat(int(dir.Fd()), tmp, 0)
		}
		return connectors.Errorf(connectors.Uncertain, "replace %s: %w", loc.label, err)
	}
	if err := c.ops.syncDir(dir); err != nil {
		return connectors.Errorf(connectors.Uncertain, "sync the directory of %s: %w", loc.label, err)
	}
	return nil
}

// createTemp makes a new file in dir, named as the files connector names
// its own, so that a files.list of a folder both connectors reach (their
// roots are one by default) leaves it out.
func createTemp(dir *os.File) (*os.File, string, error) {
	for range 100 {
		name := files.TempName()
		f, err := connectors.OpenAt(dir, name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, name, err
		}
	}
	return nil, "", &os.PathError{Op: "create a temporary file", Path: dir.Name(), Err: fs.ErrExist}
}
