package connectors

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ProtectedPath is one of the host's own files, which no connector may read
// or change whatever its roots (a user who sets roots = ["~"] has keep's
// database and config inside them).
type ProtectedPath struct {
	// Path is the file. With Prefix, every file of Path's directory whose
	// name starts with Path's base name (keep.db covers keep.db-wal,
	// keep.db-shm, keep.db.lock, keep.db.sock and any keep.db.bak).
	Path   string
	Prefix bool
	// Why names the file for a person: "keep's database".
	Why string
}

// Protected is the set of the host's own files that connectors taking paths
// refuse. A nil *Protected protects nothing. It is safe for concurrent use.
type Protected struct {
	entries []protectedEntry
}

type protectedEntry struct {
	// dirs is the file's directory as given and with symlinks resolved, so
	// a path through either spelling matches.
	dirs   []string
	base   string
	prefix bool
	why    string
	shown  string // the path as configured, for messages
}

// NewProtected returns the set of paths; relative paths are made absolute
// against the working directory, empty ones are ignored.
func NewProtected(paths ...ProtectedPath) (*Protected, error) {
	p := &Protected{}
	for _, pp := range paths {
		if pp.Path == "" {
			continue
		}
		abs, err := filepath.Abs(pp.Path)
		if err != nil {
			return nil, fmt.Errorf("protected path %q: %w", pp.Path, err)
		}
		dir := filepath.Dir(abs)
		e := protectedEntry{dirs: []string{dir}, base: filepath.Base(abs), prefix: pp.Prefix, why: pp.Why, shown: abs}
		if real, err := RealPath(dir); err == nil && real != dir {
			e.dirs = append(e.dirs, real)
		}
		p.entries = append(p.entries, e)
	}
	return p, nil
}

// Check refuses path (absolute) when it names a protected file, directly,
// through a symlink (its own or a parent's), or as a hard link to one. The
// error is a Permission error naming the path and whose file it is.
func (p *Protected) Check(path string) error {
	return p.check(path, false)
}

// CheckTree is Check that also refuses a directory holding a protected file:
// moving or removing it would take the file with it.
func (p *Protected) CheckTree(path string) error {
	return p.check(path, true)
}

// Hides reports whether a listing should leave path out. It matches names
// only (no disk access): the caller passes a path whose directory is
// already symlink-resolved.
func (p *Protected) Hides(path string) bool {
	if p == nil {
		return false
	}
	_, ok := p.match(filepath.Clean(path), false)
	return ok
}

func (p *Protected) check(path string, tree bool) error {
	if p == nil || len(p.entries) == 0 {
		return nil
	}
	abs := filepath.Clean(path)
	cands := []string{abs}
	real, err := RealPath(abs)
	if err != nil {
		return Errorf(Permission, "%s: cannot tell where it leads (%v), so it may be one of keep's own files", path, err)
	}
	if real != abs {
		cands = append(cands, real)
	}
	for _, c := range cands {
		if e, ok := p.match(c, tree); ok {
			return p.refuse(path, e, c != abs)
		}
	}
	if e, ok := p.sameFile(real); ok {
		return p.refuse(path, e, true)
	}
	return nil
}

func (p *Protected) refuse(path string, e *protectedEntry, indirect bool) error {
	how := ""
	if indirect {
		how = " (through a link)"
	}
	return Errorf(Permission, "%s is %s%s (%s): no workflow may read or change keep's own files", path, e.why, how, e.shown)
}

// match compares one path with every entry by name; with tree, a directory
// holding a protected file matches too.
func (p *Protected) match(path string, tree bool) (*protectedEntry, bool) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	for i := range p.entries {
		e := &p.entries[i]
		for _, d := range e.dirs {
			if tree && contains(path, d) {
				return e, true
			}
			if d != dir {
				continue
			}
			// Case folded: on a case-insensitive disk KEEP.DB is keep.db.
			if strings.EqualFold(name, e.base) || (e.prefix && len(name) >= len(e.base) && strings.EqualFold(name[:len(e.base)], e.base)) {
				return e, true
			}
		}
	}
	return nil, false
}

// sameFile catches a hard link to a protected file under another name: only
// a file with more than one link can be one, so the common case costs one
// stat.
func (p *Protected) sameFile(real string) (*protectedEntry, bool) {
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) == 1 {
		return nil, false
	}
	for i := range p.entries {
		e := &p.entries[i]
		var names []string
		if e.prefix {
			des, err := os.ReadDir(e.dirs[0])
			if err != nil {
				continue
			}
			for _, de := range des {
				if strings.HasPrefix(de.Name(), e.base) {
					names = append(names, de.Name())
				}
			}
		} else {
			names = []string{e.base}
		}
		for _, n := range names {
			if pfi, err := os.Stat(filepath.Join(e.dirs[0], n)); err == nil && os.SameFile(fi, pfi) {
				return e, true
			}
		}
	}
	return nil, false
}

// contains reports whether p is dir or inside it.
func contains(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// RealPath follows symlinks in the longest existing prefix of abs and
// appends the rest unchanged: a file a mutation is about to create does not
// exist yet, but its folder may be a link.
func RealPath(abs string) (string, error) {
	rest := ""
	for cur := abs; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		// ENOTDIR: a file where a directory was expected; the walk treats it
		// like a missing part and the operation itself reports it.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
