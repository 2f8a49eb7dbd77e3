package files

import (
	"path/filepath"
	"strings"

	"keep/connectors"
)

// target is a path resolved against the roots.
type target struct {
	abs  string // absolute, cleaned, under root lexically
	root int    // index into Connector.roots
	rel  string // slash-separated, relative to the root; "." for the root
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
	if err := guard(t.abs); err != nil {
		return target{}, err
	}
	return t, nil
}

func (c *Connector) outside(p string) error {
	return connectors.Errorf(connectors.Permission, "path %q is outside the files roots (%s)", p, strings.Join(c.roots, ", "))
}
