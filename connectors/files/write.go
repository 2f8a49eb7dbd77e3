package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"keep/connectors"
)

// write: {path, content} → {path, size}. Atomic: the content goes to a
// temporary file beside the target, is synced, and renamed over it, so a
// reader (or a crash) sees the old file or the new one, never half.
func (c *Connector) write(p map[string]any) (any, error) {
	t, content, err := c.pathAndContent(p)
	if err != nil {
		return nil, err
	}
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(t.abs); err == nil {
		if !info.Mode().IsRegular() {
			return nil, connectors.Errorf(connectors.Logic, "%s exists and is not a regular file", t.shown())
		}
		mode = info.Mode().Perm() // keep the owner's choice
	}
	dir := filepath.Dir(t.abs)
	what := "write " + t.shown()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fail(what, err)
	}
	tmp, err := os.CreateTemp(dir, ".keep-*.tmp")
	if err != nil {
		return nil, fail(what, err)
	}
	// Until the rename, nothing the user can see has changed: every failure
	// removes the temporary file and is classified as "not done".
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.WriteString(content); err != nil {
		return nil, fail(what, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return nil, fail(what, err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fail(what, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fail(what, err)
	}
	if err := os.Rename(tmp.Name(), t.abs); err != nil {
		// rename(2) is atomic, so an error normally means it did not
		// happen; EIO is the exception, where the disk may have half
		// committed it.
		if errors.Is(err, errIO) {
			return nil, connectors.Errorf(connectors.Uncertain, "%s: rename: %w", what, err)
		}
		return nil, fail(what, err)
	}
	committed = true
	if err := syncDir(dir); err != nil {
		// The new file is visible but may not survive a crash.
		return nil, connectors.Errorf(connectors.Uncertain, "%s: sync folder after rename: %w", what, err)
	}
	return map[string]any{"path": t.shown(), "size": int64(len(content))}, nil
}

// syncDir makes a rename in dir durable. Some systems cannot sync a
// directory (EINVAL); that is no reason to call the write uncertain.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errInval) {
		return err
	}
	return nil
}

// append: {path, content} → {path, size}, size being the file's new size.
// Creates the file (and its folders) if missing.
func (c *Connector) append(p map[string]any, syncLater func(func() error)) (any, error) {
	t, content, err := c.pathAndContent(p)
	if err != nil {
		return nil, err
	}
	what := "append to " + t.shown()
	if info, err := os.Stat(t.abs); err == nil {
		if !info.Mode().IsRegular() {
			return nil, connectors.Errorf(connectors.Logic, "%s exists and is not a regular file", t.shown())
		}
		if info.Size()+int64(len(content)) > c.maxSize {
			return nil, connectors.Errorf(connectors.Logic, "%s would grow past the %d bytes allowed", t.shown(), c.maxSize)
		}
	} else if err := os.MkdirAll(filepath.Dir(t.abs), 0o755); err != nil { // a new file, maybe in a new folder
		return nil, fail(what, err)
	}
	f, err := os.OpenFile(t.abs, openNoWait|os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fail(what, err)
	}
	// The Stat above was by name; what was opened is what gets written.
	if info, err := f.Stat(); err != nil {
		f.Close()
		return nil, fail(what, err)
	} else if !info.Mode().IsRegular() {
		f.Close()
		return nil, connectors.Errorf(connectors.Logic, "%s exists and is not a regular file", t.shown())
	} else if linkCount(info) > 1 {
		// Appending changes the file under every name it has, and its other
		// names may be outside the roots (a hard link leaves no trace of
		// where). write and move replace or rename this name only.
		f.Close()
		return nil, connectors.Errorf(connectors.Permission,
			"%s has other names (hard links), maybe outside the files roots (%s): appending would change the file under all of them",
			t.shown(), strings.Join(c.roots, ", "))
	}
	n, err := f.WriteString(content)
	if err != nil {
		f.Close()
		if n == 0 {
			return nil, fail(what, err)
		}
		// Part of it is in the file: neither done nor not done.
		return nil, connectors.Errorf(connectors.Uncertain, "%s: wrote %d of %d bytes: %w", what, n, len(content), err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, connectors.Errorf(connectors.Uncertain, "%s: stat after append: %w", what, err)
	}
	res := map[string]any{"path": t.shown(), "size": info.Size()}
	// The bytes are in the file as readers see it, but may not survive a
	// crash until it is synced.
	sync := func() error {
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: sync: %w", what, err)
		}
		return nil
	}
	if syncLater != nil {
		syncLater(sync) // the host syncs it alongside what follows
		return res, nil
	}
	if err := sync(); err != nil {
		return nil, connectors.Errorf(connectors.Uncertain, "%w", err)
	}
	return res, nil
}

// move: {from, to} → {path: to}. Never overwrites: an existing to is a
// logic error. The check and the rename are two steps; another process
// creating to in between would be overwritten (a portable no-replace
// rename is not in the standard library).
func (c *Connector) move(p map[string]any) (any, error) {
	from, err := c.resolveTree(p, "from")
	if err != nil {
		return nil, err
	}
	to, err := c.resolve(p, "to")
	if err != nil {
		return nil, err
	}
	what := "move " + from.shown() + " to " + to.shown()
	if from.rel == "." {
		return nil, connectors.Errorf(connectors.Logic, "%s: cannot move a root", what)
	}
	if _, err := os.Lstat(from.abs); errors.Is(err, fs.ErrNotExist) {
		return nil, connectors.Errorf(connectors.Logic, "no such file: %s", from.shown())
	} else if err != nil {
		return nil, fail(what, err)
	}
	if _, err := os.Lstat(to.abs); err == nil {
		return nil, connectors.Errorf(connectors.Logic, "%s: %s already exists", what, to.shown())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fail(what, err)
	}
	dir := filepath.Dir(to.abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fail(what, err)
	}
	if err := os.Rename(from.abs, to.abs); err != nil {
		if errors.Is(err, errIO) {
			return nil, connectors.Errorf(connectors.Uncertain, "%s: %w", what, err)
		}
		return nil, fail(what, err)
	}
	for _, d := range []string{filepath.Dir(from.abs), dir} {
		if err := syncDir(d); err != nil {
			return nil, connectors.Errorf(connectors.Uncertain, "%s: sync folder after rename: %w", what, err)
		}
	}
	return map[string]any{"path": to.shown()}, nil
}

// linkCount is the number of names a file has.
func linkCount(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
