package connectors

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"keep/storage/userpath"
)

// Place is a folder keep writes its own files into. What is keep's is
// decided by where a path lies, not by its name, so a file a later feature
// writes there is out of every workflow's reach without anyone listing it:
//
//   - every file directly in Dir (of any name and kind: a database, its
//     WAL, lock and socket, a log, a config, credentials, service.env, a
//     file keep has not written yet) is keep's;
//   - a folder directly in Dir is keep's, with all it holds, when its name
//     starts with Own (keep names its caches after the database:
//     keep.db.feeds, keep.db.mcp), or always with Whole;
//   - any other folder in Dir is the person's: keep creates none there, so
//     one is theirs (the offline demo's folder beside the database, which
//     keep hands the demo workflow as a files root, or a root the person
//     keeps beside their config).
//
// The folders of a place are not keep's because a database or a config
// may be put in a folder of the person's (--db ~/keep.db): claiming every
// subfolder there would take their whole home away from every workflow,
// while claiming its files costs them only the files beside keep's.
type Place struct {
	Dir string
	// Own is the prefix of keep's own folders in Dir; "" claims none.
	Own string
	// Whole claims everything under Dir (a cache folder of keep's own).
	Whole bool
	// Why names the place for a person: "beside keep's database".
	Why string
}

// Protected is the set of keep's places, which connectors taking paths
// refuse. A nil *Protected protects nothing. It is safe for concurrent use.
type Protected struct {
	places []place
}

type place struct {
	// dirs is the folder as given and with symlinks resolved, so a path
	// through either spelling matches.
	dirs  []string
	own   string
	whole bool
	why   string
}

// NewProtected returns the set of places; relative folders are made
// absolute against the working directory, empty ones are ignored.
func NewProtected(places ...Place) (*Protected, error) {
	p := &Protected{}
	for _, pl := range places {
		if pl.Dir == "" {
			continue
		}
		abs, err := filepath.Abs(pl.Dir)
		if err != nil {
			return nil, fmt.Errorf("keep's folder %q: %w", pl.Dir, err)
		}
		e := place{dirs: []string{abs}, own: pl.Own, whole: pl.Whole, why: pl.Why}
		if real, err := RealPath(abs); err == nil && real != abs {
			e.dirs = append(e.dirs, real)
		}
		p.places = append(p.places, e)
	}
	return p, nil
}

// Check refuses path (absolute) when it is keep's, directly, through a
// symlink (its own or a parent's), or as a hard link to one of keep's
// files. The error is a Permission error naming the path and the place.
func (p *Protected) Check(path string) error {
	return p.check(path, false)
}

// CheckTree is Check that also refuses a folder holding one of keep's
// places: moving or removing it would take keep's files with it.
func (p *Protected) CheckTree(path string) error {
	return p.check(path, true)
}

// Hides reports whether a listing should leave path out: the caller passes
// a path whose folder is already symlink-resolved.
func (p *Protected) Hides(path string) bool {
	return p.Hider(filepath.Dir(filepath.Clean(path)))(filepath.Base(path))
}

// Hider is Hides for the entries of one folder dir (symlink-resolved), the
// folder looked at once: a listing asks it for each name.
func (p *Protected) Hider(dir string) func(name string) bool {
	if p == nil || len(p.places) == 0 {
		return func(string) bool { return false }
	}
	dir = filepath.Clean(dir)
	if onProcess(dir) {
		return func(string) bool { return true }
	}
	at := p.folderPlaces(dir)
	return func(name string) bool {
		path := filepath.Join(dir, name)
		if _, ok := p.match(path, false); ok {
			return true
		}
		for _, s := range at {
			if s.e.keeps(s.spelling, path) {
				return true
			}
		}
		return false
	}
}

// spelled is a place reached under another name than its own: a folder
// that is the place's folder itself (a bind mount of it, a case variant on
// a disk that folds case, a second mount of its disk), which comparing
// names cannot see.
type spelled struct {
	e        *place
	spelling string
}

// folderPlaces are the places dir is in, or is, found by what the folders
// are (device and inode), not by their names: dir and each folder above it
// compared with each place's folder. The lexical match is the fast path;
// this one is what makes a place out of reach however it is named.
func (p *Protected) folderPlaces(dir string) []spelled {
	var ids []os.FileInfo
	for i := range p.places {
		fi, err := os.Stat(p.places[i].dirs[0])
		if err != nil || !fi.IsDir() {
			fi = nil // not there (yet): nothing can be in it
		}
		ids = append(ids, fi)
	}
	var out []spelled
	for a := dir; ; {
		if fi, err := os.Stat(a); err == nil {
			for i, id := range ids {
				if id != nil && os.SameFile(fi, id) {
					out = append(out, spelled{&p.places[i], a})
				}
			}
		}
		up := filepath.Dir(a)
		if up == a {
			return out
		}
		a = up
	}
}

// matchFolder is match by what the folders are: path (real) is keep's when
// a folder it is in (dir and above) is a place's folder under another name
// and the place keeps it, or, with tree, when path is a place's folder.
func (p *Protected) matchFolder(dir, path string, tree bool) (*place, bool) {
	for _, s := range p.folderPlaces(dir) {
		if s.e.keeps(s.spelling, path) {
			return s.e, true
		}
	}
	if tree {
		for _, s := range p.folderPlaces(path) {
			if s.spelling == path {
				return s.e, true
			}
		}
	}
	return nil, false
}

func (p *Protected) check(path string, tree bool) error {
	if p == nil || len(p.places) == 0 {
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
	if onProcess(real) || onProcess(filepath.Dir(real)) {
		return Errorf(Permission, "%s is on the kernel's process file system, where keep's own process is: no workflow may read or change keep's own files", path)
	}
	if e, ok := p.matchFolder(filepath.Dir(real), real, tree); ok {
		return p.refuse(path, e, true)
	}
	if e, ok := p.sameFile(real); ok {
		return p.refuse(path, e, true)
	}
	return nil
}

func (p *Protected) refuse(path string, e *place, indirect bool) error {
	how := ""
	if indirect {
		how = " through a link"
	}
	return Errorf(Permission, "%s is%s %s (%s): no workflow may read or change keep's own files", path, how, e.why, e.dirs[0])
}

// match compares one path with every place; with tree, a folder holding a
// place matches too.
func (p *Protected) match(path string, tree bool) (*place, bool) {
	for i := range p.places {
		e := &p.places[i]
		for _, d := range e.dirs {
			if tree && contains(path, d) {
				return e, true
			}
			if e.keeps(d, path) {
				return e, true
			}
		}
	}
	return nil, false
}

// keeps reports whether path, spelled under d (one spelling of e's
// folder), is keep's.
func (e *place) keeps(d, path string) bool {
	rel, err := filepath.Rel(d, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	if e.whole {
		return true
	}
	first, rest, deeper := strings.Cut(rel, string(filepath.Separator))
	// Case folded: on a case-insensitive disk KEEP.DB.MCP is keep.db.mcp.
	if e.own != "" && len(first) >= len(e.own) && strings.EqualFold(first[:len(e.own)], e.own) {
		return true
	}
	if deeper && rest != "" {
		return false // inside a folder of the person's
	}
	// Directly in the place: keep's unless it is a folder (Lstat: a link
	// there is a file of the place, whatever it points to). A name that
	// does not exist yet is keep's too: what a workflow would create there
	// is a file beside keep's.
	fi, err := os.Lstat(path)
	return err != nil || !fi.IsDir()
}

// sameFile catches a hard link to one of keep's files under another name:
// only a file with more than one link can be one, so the common case costs
// one stat.
func (p *Protected) sameFile(real string) (*place, bool) {
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) == 1 {
		return nil, false
	}
	for i := range p.places {
		e := &p.places[i]
		found := false
		root := e.dirs[0]
		filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
			if err != nil || found {
				return filepath.SkipDir
			}
			if path == root {
				return nil
			}
			if de.IsDir() {
				if e.keeps(root, path) {
					return nil
				}
				return filepath.SkipDir
			}
			if !de.Type().IsRegular() {
				return nil
			}
			if pfi, err := os.Stat(path); err == nil && os.SameFile(fi, pfi) {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		if found {
			return e, true
		}
	}
	return nil, false
}

// contains reports whether p is dir or inside it.
func contains(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// RealPath is userpath.RealPath: where a path a connector is given leads.
func RealPath(abs string) (string, error) { return userpath.RealPath(abs) }
