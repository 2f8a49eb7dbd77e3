package sheets

import (
	"context"
	"os"
	"path/filepath"

	"keep/connectors"
)

// fileOps are the file system calls around the rename, replaceable in tests
// to fail at each step of an atomic write.
type fileOps struct {
	write   func(f *os.File, data []byte) error
	rename  func(from, to string) error
	syncDir func(dir string) error
}

func osOps() fileOps {
	return fileOps{
		write: func(f *os.File, data []byte) error {
			_, err := f.Write(data)
			return err
		},
		rename:  os.Rename,
		syncDir: syncDir,
	}
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// change says what a mutation did to a table: which record it wrote, whether
// it appended that record, and whether the header changed too. A file is
// rewritten whole; a Google sheet gets only the changed rows.
type change struct {
	row      int
	appended bool
	header   bool
}

// save writes t back where it came from.
func (c *Connector) save(ctx context.Context, loc location, t *table, ch change) error {
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
	dir := filepath.Dir(loc.file)
	if !t.exists {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return classifyIO("create the directory of "+loc.label, err)
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(loc.file)+".keep-*")
	if err != nil {
		return classifyIO("create a temporary file for "+loc.label, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(f.Name())
		}
	}()
	err = c.ops.write(f, data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), t.mode)
	}
	if err != nil {
		return classifyIO("write "+loc.label, err)
	}
	// Last chance to give up with nothing done: the host's deadline, or
	// another program having written the sheet since we read it.
	if err := ctx.Err(); err != nil {
		return &connectors.Error{Class: connectors.Transient, Err: err}
	}
	fi, err := os.Stat(loc.file)
	if err != nil && !os.IsNotExist(err) {
		return classifyIO("stat "+loc.label, err)
	}
	if stampOf(fi) != t.stamp {
		return connectors.Errorf(connectors.Transient, "%s changed while it was being written; try again", loc.label)
	}
	// A failed rename normally means nothing happened, but an I/O error can
	// leave it done: reconciliation can tell cheaply, so don't guess.
	renamed = true
	if err := c.ops.rename(f.Name(), loc.file); err != nil {
		if _, serr := os.Stat(f.Name()); serr == nil {
			os.Remove(f.Name())
		}
		return connectors.Errorf(connectors.Uncertain, "replace %s: %w", loc.label, err)
	}
	if err := c.ops.syncDir(dir); err != nil {
		return connectors.Errorf(connectors.Uncertain, "sync the directory of %s: %w", loc.label, err)
	}
	return nil
}
