package files

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"keep/connectors"
)

// openNoWait is added to every open of a path a workflow names: the kind of
// file is only known once it is open, and opening a FIFO without it waits
// for a writer (or reader) that may never come, holding the run for ever.
// On a regular file O_NONBLOCK changes nothing but an open for writing
// while another holds a lease on it (refused, not waited for: openLeased);
// O_NOCTTY keeps a terminal device from becoming keep's.
const openNoWait = unix.O_NONBLOCK | unix.O_NOCTTY

// list: {dir, glob, unfinished} → [{path, name, size, modified}], regular
// files only, sorted by name, those still being written left out
// (writing.go), each one told to unfinished when it is set, unless the
// script asked for them (unfinished: true; each marked so). A missing dir
// is an error.
func (c *Connector) list(p map[string]any, unfinished func()) (any, error) {
	dir, err := optionalString(p, "dir", ".")
	if err != nil {
		return nil, err
	}
	glob, err := optionalString(p, "glob", "*")
	if err != nil {
		return nil, err
	}
	if _, err := path.Match(glob, ""); err != nil {
		return nil, connectors.Errorf(connectors.Logic, "bad glob %q: %w", glob, err)
	}
	// asked for: a file held open for ever (a live log) is listed too,
	// marked, and no watch waits for its writer to be done
	withUnfinished, err := connectors.Bool(p, "unfinished")
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(map[string]any{"dir": dir}, "dir")
	if err != nil {
		return nil, err
	}
	d, err := connectors.OpenBeneath(t.realRoot, t.real, false)
	if errors.Is(err, fs.ErrNotExist) {
		// not an empty list: a mistyped folder would read as "nothing
		// there" for ever
		return nil, connectors.Errorf(connectors.Logic, "list %s: no such folder (make it, or fix the dir)", t.shown())
	}
	if err != nil {
		return nil, fail("list "+t.shown(), err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fail("list "+t.shown(), err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	out := []any{}
	hides := c.protected.Hider(t.real)
	now := time.Now()
	for _, e := range entries {
		// The host's own files are not there as far as a script can tell.
		if hides(e.Name()) {
			continue
		}
		// Symlinks are left out rather than followed: one may point out of
		// the root, and listing its size would leak what is there.
		if !e.Type().IsRegular() || isTemp(e.Name()) {
			continue
		}
		if ok, _ := path.Match(glob, e.Name()); !ok {
			continue
		}
		if !utf8.ValidString(e.Name()) {
			// A path reaches a script as a string, its odd bytes replaced:
			// passed back, it names no file, or another one. Left out, the
			// file would wait in the folder for ever unseen.
			child := c.child(t, e.Name())
			return nil, connectors.Errorf(connectors.Logic,
				"list %s: the name of %q is not UTF-8, so a workflow cannot name it: rename it", t.shown(), child.shown())
		}
		// Looked at in the folder opened, not by name (DirEntry.Info).
		var st unix.Stat_t
		err := unix.Fstatat(int(d.Fd()), e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG) {
			continue // removed or replaced since ReadDir
		}
		if err != nil {
			return nil, fail("list "+t.shown(), err)
		}
		writing := beingWritten(int(d.Fd()), e.Name(), &st, now)
		if writing && !withUnfinished {
			if unfinished != nil {
				unfinished()
			}
			continue
		}
		child := c.child(t, e.Name())
		entry := map[string]any{
			"path":     child.shown(),
			"name":     e.Name(),
			"size":     st.Size,
			"modified": modified(time.Unix(st.Mtim.Unix())),
		}
		if writing {
			entry["unfinished"] = true
		}
		out = append(out, entry)
	}
	return out, nil
}

// ListedFolder is list's folder, as its real path (connectors.FolderLister):
// list reads every entry the folder holds, and a glob only filters them.
func (c *Connector) ListedFolder(method string, params map[string]any) (string, bool) {
	if method != "list" {
		return "", false
	}
	dir, err := optionalString(params, "dir", ".")
	if err != nil {
		return "", false
	}
	t, err := c.resolve(map[string]any{"dir": dir}, "dir")
	if err != nil {
		return "", false
	}
	real, err := connectors.RealPath(t.abs)
	if err != nil {
		return "", false
	}
	return real, true
}

func (c *Connector) child(t target, name string) target {
	abs := filepath.Join(t.abs, name)
	rel, _ := within(c.roots[t.root], abs)
	return target{abs: abs, root: t.root, rel: rel}
}

func modified(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// read: {path} → {path, content, size, modified}.
func (c *Connector) read(p map[string]any) (any, error) {
	t, err := c.resolve(p, "path")
	if err != nil {
		return nil, err
	}
	// unfinished: the script reads a file it knows is written on (a live
	// log) as it stands
	asItStands, err := connectors.Bool(p, "unfinished")
	if err != nil {
		return nil, err
	}
	data, info, err := c.readFile(t, !asItStands)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(data) {
		// Content crosses the contract as a string; bytes that are not
		// UTF-8 would be silently replaced on the way to the script.
		return nil, connectors.Errorf(connectors.Logic, "%s is not UTF-8 text", t.shown())
	}
	return map[string]any{
		"path":     t.shown(),
		"content":  string(data),
		"size":     int64(len(data)),
		"modified": modified(info.ModTime()),
	}, nil
}

// readFile reads a regular file up to the size cap; finished refuses, as
// transient, one another process has open for writing (writing.go).
func (c *Connector) readFile(t target, finished bool) ([]byte, fs.FileInfo, error) {
	d, name, err := t.folder(true, false)
	var f *os.File
	if err == nil {
		f, err = connectors.OpenAt(d, name, openNoWait|os.O_RDONLY, 0)
		d.Close()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, connectors.Errorf(connectors.Logic, "no such file: %s", t.shown())
	}
	if err != nil {
		return nil, nil, fail("read "+t.shown(), err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fail("read "+t.shown(), err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, connectors.Errorf(connectors.Logic, "%s is not a regular file", t.shown())
	}
	if finished && stillWritten(f) {
		return nil, nil, connectors.Errorf(connectors.Transient, "%s is still being written by another process", t.shown())
	}
	// Read one byte past the cap: the file may have grown since Stat.
	data, err := io.ReadAll(io.LimitReader(f, c.maxSize+1))
	if err != nil {
		return nil, nil, fail("read "+t.shown(), err)
	}
	if int64(len(data)) > c.maxSize {
		return nil, nil, connectors.Errorf(connectors.Logic, "%s is larger than the %d bytes allowed", t.shown(), c.maxSize)
	}
	return data, info, nil
}
