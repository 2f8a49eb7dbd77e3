package files

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

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
	what := "write " + t.shown()
	dir, name, err := t.folder(false, true)
	if err != nil {
		return nil, fail(what, err)
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	mode := fs.FileMode(0o644)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, 0); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, connectors.Errorf(connectors.Logic, "%s exists and is not a regular file", t.shown())
		}
		mode = fs.FileMode(st.Mode).Perm() // keep the owner's choice
	}
	tmp, err := createTemp(dir)
	if err != nil {
		return nil, fail(what, err)
	}
	tmpName := filepath.Base(tmp.Name())
	// Until the rename, nothing the user can see has changed: every failure
	// removes the temporary file and is classified as "not done".
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			unix.Unlinkat(dfd, tmpName, 0)
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
	if err := unix.Renameat(dfd, tmpName, dfd, name); err != nil {
		err = &os.LinkError{Op: "rename", Old: tmp.Name(), New: t.abs, Err: err}
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

// TempName is a new name for the temporary file of a write that renames
// it into place (this connector's write, a sheet's): list leaves out every
// name of this form, which is half a write until the rename, or what a
// crash left of one, never a file of the person's.
func TempName() string {
	return fmt.Sprintf(".keep-%d.tmp", rand.Uint64())
}

// isTemp says whether name is one TempName gives.
func isTemp(name string) bool {
	digits, ok := strings.CutPrefix(name, ".keep-")
	if digits, ok = strings.CutSuffix(digits, ".tmp"); !ok || digits == "" {
		return false
	}
	return strings.Trim(digits, "0123456789") == ""
}

// createTemp makes a new temporary file in dir, for write's rename.
func createTemp(dir *os.File) (*os.File, error) {
	for range 100 {
		name := TempName()
		f, err := connectors.OpenAt(dir, name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "create a temporary file", Path: dir.Name(), Err: fs.ErrExist}
}

// syncDir makes a rename in dir durable. Some systems cannot sync a
// directory (EINVAL); that is no reason to call the write uncertain.
func syncDir(dir *os.File) error {
	if err := dir.Sync(); err != nil && !errors.Is(err, errInval) {
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
	dir, name, err := t.folder(true, true) // a new file, maybe in a new folder
	if err != nil {
		return nil, fail(what, err)
	}
	f, err := openLeased(dir, name, openNoWait|os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	defer dir.Close()
	if err != nil {
		return nil, fail(what, err)
	}
	// Every check is on the file opened, which is the one written.
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
	} else if info.Size()+int64(len(content)) > c.maxSize {
		f.Close()
		return nil, connectors.Errorf(connectors.Logic, "%s would grow past the %d bytes allowed", t.shown(), c.maxSize)
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
	syncOf := func(h *os.File) func() error {
		return func() error {
			err := h.Sync()
			if cerr := h.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("%s: sync: %w", what, err)
			}
			return nil
		}
	}
	sync := syncOf(f)
	if syncLater != nil {
		// Held for the later sync, the file is read-only to keep: a handle
		// open for writing is a writer at work to every list (writing.go),
		// keep's own included, and the next run would find the file gone.
		// A sync through any handle of the file syncs its data.
		if ro := sameFileReadOnly(dir, name, info); ro != nil {
			f.Close()
			syncLater(syncOf(ro))
			return res, nil
		}
		if err := sync(); err != nil {
			return nil, connectors.Errorf(connectors.Uncertain, "%w", err)
		}
		return res, nil
	}
	if err := sync(); err != nil {
		return nil, connectors.Errorf(connectors.Uncertain, "%w", err)
	}
	return res, nil
}

// move: {from, to} → {path: to}. Never overwrites: an existing to is a
// logic error, and the rename itself refuses to replace one that appeared
// since (RENAME_NOREPLACE, where the file system has it).
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
	// from's own name is moved, a link included, not what it leads to.
	fromDir, fromName, err := from.folder(false, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, connectors.Errorf(connectors.Logic, "no such file: %s", from.shown())
	} else if err != nil {
		return nil, fail(what, err)
	}
	defer fromDir.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(fromDir.Fd()), fromName, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, fs.ErrNotExist) {
		return nil, connectors.Errorf(connectors.Logic, "no such file: %s", from.shown())
	} else if err != nil {
		return nil, fail(what, err)
	}
	toDir, toName, err := to.folder(false, true)
	if err != nil {
		return nil, fail(what, err)
	}
	defer toDir.Close()
	if err := unix.Fstatat(int(toDir.Fd()), toName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return nil, connectors.Errorf(connectors.Logic, "%s: %s already exists", what, to.shown())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fail(what, err)
	}
	if err := renameNoReplace(fromDir, fromName, toDir, toName); err != nil {
		err = &os.LinkError{Op: "rename", Old: from.abs, New: to.abs, Err: err}
		switch {
		case errors.Is(err, errIO):
			return nil, connectors.Errorf(connectors.Uncertain, "%s: %w", what, err)
		case errors.Is(err, fs.ErrExist):
			return nil, connectors.Errorf(connectors.Logic, "%s: %s already exists", what, to.shown())
		}
		return nil, fail(what, err)
	}
	for _, d := range []*os.File{fromDir, toDir} {
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

// sameFileReadOnly opens name in dir read-only, if it is still the file
// info describes (not replaced since); nil otherwise.
func sameFileReadOnly(dir *os.File, name string, info os.FileInfo) *os.File {
	ro, err := connectors.OpenAt(dir, name, openNoWait|os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	if now, err := ro.Stat(); err != nil || !os.SameFile(now, info) {
		ro.Close()
		return nil
	}
	return ro
}
