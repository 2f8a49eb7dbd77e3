package files

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"keep/connectors"
)

// target is a path resolved against the roots.
type target struct {
	abs  string // absolute, cleaned, under root lexically
	root int    // index into Connector.roots
	rel  string // slash-separated, relative to the root; "." for the root

	// Where resolve found abs leads, as real paths (no links), checked to
	// be inside realRoot. Every use walks these with
	// connectors.OpenBeneath, never abs, so what is used is what was
	// checked. Empty in targets resolve did not make.
	realRoot   string
	real       string // abs, its last link followed too
	realParent string // abs's folder: where abs itself (a link, say) is renamed; "" for a root
}

// shown is how results, scopes and messages name the file: relative for
// the first root (the form a script passes in), absolute for the others
// (a relative path would mean the first root).
func (t target) shown() string {
	if t.root == 0 {
		return t.rel
	}
	return t.abs
}

// lexical resolves p against the roots without touching the disk.
func (c *Connector) lexical(p string) (target, bool) {
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
	} else {
		abs = filepath.Join(c.roots[0], p)
	}
	for i, r := range c.roots {
		if rel, ok := within(r, abs); ok {
			return target{abs: abs, root: i, rel: rel}, true
		}
	}
	return target{abs: abs}, false
}

// within reports whether abs is root or below it, and its relative path.
func within(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// scope names p for grants and previews; it never fails, since a grant
// check must always have something to compare, and a path outside the roots
// shows as its absolute form, which no root-relative grant matches.
func (c *Connector) scope(p string) string {
	if p == "" {
		return ""
	}
	t, ok := c.lexical(p)
	if !ok {
		return t.abs
	}
	return t.shown()
}

// resolve resolves the path parameter key and checks that it stays inside
// its root once symlinks are followed. The deepest part of the path that
// exists is resolved (the file itself if it exists, else its nearest
// existing parent), so a symlinked directory or a symlinked file pointing
// out of the root is caught; parts that do not exist yet cannot be links.
// The host's own files are refused wherever they are.
func (c *Connector) resolve(params map[string]any, key string) (target, error) {
	return c.resolveWith(params, key, c.protected.Check)
}

// resolveTree is resolve for a path that takes what is below it along (the
// source of a move): a folder holding one of the host's files is refused.
func (c *Connector) resolveTree(params map[string]any, key string) (target, error) {
	return c.resolveWith(params, key, c.protected.CheckTree)
}

func (c *Connector) resolveWith(params map[string]any, key string, guard func(string) error) (target, error) {
	p, err := requiredString(params, key)
	if err != nil {
		return target{}, err
	}
	t, ok := c.lexical(p)
	if !ok {
		return target{}, c.outside(p)
	}
	real, err := connectors.RealPath(t.abs)
	if err != nil {
		return target{}, fail("resolve "+t.shown(), err)
	}
	root, err := connectors.RealPath(c.roots[t.root])
	if err != nil {
		return target{}, fail("resolve root "+c.roots[t.root], err)
	}
	if _, ok := within(root, real); !ok {
		return target{}, c.outside(p)
	}
	if t.rel != "." {
		// A link at abs itself is moved or replaced, not followed, by move
		// and write: the folder holding it must be inside the root too.
		parent, err := connectors.RealPath(filepath.Dir(t.abs))
		if err != nil {
			return target{}, fail("resolve "+t.shown(), err)
		}
		if _, ok := within(root, parent); !ok {
			return target{}, c.outside(p)
		}
		t.realParent = parent
	}
	if err := guard(t.abs); err != nil {
		return target{}, err
	}
	t.realRoot, t.real = root, real
	return t, nil
}

// folder opens, without following any link, the folder a use of t works
// in, and gives the name to use there: t's real parent and t's own name
// (write and move replace or rename that name, a link included) or, with
// followed, the folder and name of what t leads to (what read and append
// use). create makes missing folders.
func (t target) folder(followed, create bool) (*os.File, string, error) {
	dir, name := t.realParent, filepath.Base(t.abs)
	if followed {
		dir, name = filepath.Dir(t.real), filepath.Base(t.real)
	}
	if t.rel == "." || dir == "" {
		return nil, "", &os.PathError{Op: "open", Path: t.abs, Err: syscall.EISDIR}
	}
	if create {
		// The roots need not exist until something is written.
		if err := os.MkdirAll(t.realRoot, 0o755); err != nil {
			return nil, "", err
		}
	}
	f, err := connectors.OpenBeneath(t.realRoot, dir, create)
	if err != nil {
		return nil, "", err
	}
	return f, name, nil
}

func (c *Connector) outside(p string) error {
	return connectors.Errorf(connectors.Permission, "path %q is outside the files roots (%s)", p, strings.Join(c.roots, ", "))
}
