// Package files is the connector for plain files under configured roots:
// list and read, and three mutations (write, append, move) that are
// reconciled by looking at the disk.
//
// Paths are relative to the first root, or absolute inside any root. A path
// that resolves outside every root, lexically or through a symlink, is a
// permission error. Paths in results are relative (slash-separated) for the
// first root and absolute for the others, so a result can always be passed
// back as a parameter and means the same file.
package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"keep/connectors"
)

// Config configures the files connector. Zero values take the defaults.
type Config struct {
	// Roots are the only trees the connector may touch; a leading "~" is
	// the user's home. Relative paths are resolved against the first.
	// Default: ["~/Keep"].
	Roots []string
	// MaxFileSize caps a file read, written or appended to, in bytes.
	// Default: 10 MiB, the size of one connector result (DESIGN §8).
	MaxFileSize int64
	// Protected are the host's own files (its database, log, config), never
	// read, written, moved or listed whatever the roots. Nil: none.
	Protected *connectors.Protected
}

// DefaultMaxFileSize is MaxFileSize's default.
const DefaultMaxFileSize = 10 << 20

// Connector reads and changes files under its roots.
type Connector struct {
	roots     []string // absolute, cleaned, as configured (not symlink-resolved)
	maxSize   int64
	protected *connectors.Protected
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns a files connector. The roots need not exist yet: write
// creates them.
func New(cfg Config) (*Connector, error) {
	if len(cfg.Roots) == 0 {
		cfg.Roots = []string{"~/Keep"}
	}
	if cfg.MaxFileSize <= 0 {
		cfg.MaxFileSize = DefaultMaxFileSize
	}
	c := &Connector{maxSize: cfg.MaxFileSize, protected: cfg.Protected}
	for _, r := range cfg.Roots {
		abs, err := expandRoot(r)
		if err != nil {
			return nil, err
		}
		c.roots = append(c.roots, abs)
	}
	return c, nil
}

func expandRoot(r string) (string, error) {
	if r == "" {
		return "", fmt.Errorf("files: empty root")
	}
	if r == "~" || strings.HasPrefix(r, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("files: expand root %q: %w", r, err)
		}
		r = filepath.Join(home, r[1:])
	}
	abs, err := filepath.Abs(r)
	if err != nil {
		return "", fmt.Errorf("files: root %q: %w", r, err)
	}
	return abs, nil
}

// Roots returns the absolute roots, first one first.
func (c *Connector) Roots() []string { return append([]string(nil), c.roots...) }

// Name is "files".
func (c *Connector) Name() string { return "files" }

// InputTypes: a producer watching a folder registers each file as an input.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"files": {"file"}}
}

// Methods lists list, read, write, append and move.
//
// The scope of every method is the path it touches, as results show it
// (relative to the first root, absolute elsewhere); for move it is both
// from and to (connectors.PathsScope): a move takes a file away from one
// place and puts it, over nothing, in another, so a grant on a folder
// decides what may leave it and what may arrive in it, and a deny on
// either end holds.
func (c *Connector) Methods() []connectors.Method {
	scope := func(key string) func(map[string]any) string {
		return func(p map[string]any) string { return c.scope(str(p, key)) }
	}
	check := func(key string) func(map[string]any) string {
		return func(p map[string]any) string { return "look at " + c.shownScope(str(p, key)) }
	}
	pathArg := connectors.Arg{Name: "path", Type: "string", Required: true,
		Doc: "relative to the first of [connectors.files] roots, or absolute inside one of them"}
	contentArg := connectors.Arg{Name: "content", Type: "string", Required: true, Doc: "UTF-8 text"}
	written := "{ path: string, size: number }"
	return []connectors.Method{
		{Name: "list", Kind: connectors.Read, Scope: scope("dir"), ScopeKind: connectors.ScopePath,
			Doc: "Lists the regular files of a folder (not recursive; symlinks left out; a file another process still has open for writing left out until it is closed, so a file copied in is never seen half-written; on macOS, one changed in the last second); a missing folder is an error that names it, never [], so make the folder first.",
			Args: []connectors.Arg{
				{Name: "dir", Type: "string", Doc: `the folder, like path (default ".", the first root)`},
				{Name: "glob", Type: "string", Doc: `a pattern on the file name, like "*.txt" (default "*")`},
				{Name: "unfinished", Type: "boolean", Doc: "true: list files still open for writing too (a live log), each with unfinished: true; they may be half-written"},
			},
			Result:  "Array<{ path: string, name: string, size: number, modified: string, unfinished?: boolean }>",
			Example: `const notes = await ctx.files.list({ dir: "inbox", glob: "*.txt" })`},
		{Name: "read", Kind: connectors.ReadByID, Scope: scope("path"), ScopeKind: connectors.ScopePath,
			Doc: "Reads a UTF-8 text file. One another process still has open for writing is refused for now (\"PATH is still being written by another process\", a transient error: the run is tried again later), unless unfinished is true.",
			Args: []connectors.Arg{pathArg,
				{Name: "unfinished", Type: "boolean", Doc: "true: read it as it stands even while another process writes it (a live log)"}},
			Result:  "{ path: string, content: string, size: number, modified: string }",
			Example: `const { content } = await ctx.files.read({ path: "inbox/a.txt" })`},
		{Name: "write", Kind: connectors.Mutate, Scope: scope("path"), ScopeKind: connectors.ScopePath, Check: check("path"),
			Preview:   func(p map[string]any) string { return c.previewContent("write", p) },
			Doc:       "Writes a whole file atomically (a temporary file renamed over it), creating its folder.",
			Args:      []connectors.Arg{pathArg, contentArg},
			Result:    written,
			Reconcile: "reads the file: it holds exactly the content (applied) or not (not applied, written again)",
			Example:   `await ctx.files.write({ path: "out/summary.txt", content: prepared.data.text })`},
		{Name: "append", Kind: connectors.Mutate, Scope: scope("path"), ScopeKind: connectors.ScopePath, Check: check("path"),
			Preview: func(p map[string]any) string { return c.previewContent("append to", p) },
			Doc:     "Appends text to a file, creating it; size is the file's size after. A file with other names (hard links) is refused: they may be outside the roots.",
			Args:    []connectors.Arg{pathArg, contentArg},
			Result:  written,
			Reconcile: "reads the file: ending with the content, found nowhere before, is applied; the content nowhere in it not applied; " +
				"anything else (the same content appended before, say) is put to you",
			Example: `await ctx.files.append({ path: "log.csv", content: prepared.data.name + "\n" })`},
		{Name: "move", Kind: connectors.Mutate, ScopeKind: connectors.ScopePath,
			Scope: func(p map[string]any) string {
				return connectors.PathsScope(c.scope(str(p, "from")), c.scope(str(p, "to")))
			},
			Doc: "Moves (renames) a file inside the roots; the target must not exist.",
			Args: []connectors.Arg{
				{Name: "from", Type: "string", Required: true, Doc: "the file to move, like path"},
				{Name: "to", Type: "string", Required: true, Doc: "where it goes, like path"},
			},
			Result:    "{ path: string }",
			Reconcile: "looks for both files: only the target there is applied, only the source not applied",
			Example:   `await ctx.files.move({ from: "inbox/a.txt", to: "done/a.txt" })`,
			Check: func(p map[string]any) string {
				return fmt.Sprintf("look for %s and %s", c.shownScope(str(p, "from")), c.shownScope(str(p, "to")))
			},
			Preview: func(p map[string]any) string {
				return fmt.Sprintf("move %s → %s", c.shownScope(str(p, "from")), c.shownScope(str(p, "to")))
			}},
	}
}

// Do performs one method.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	if err := ctx.Err(); err != nil {
		// Nothing has been touched yet.
		return nil, connectors.Errorf(connectors.Transient, "files.%s not started: %w", call.Method, err)
	}
	p := call.Params
	switch call.Method {
	case "list":
		return c.list(p, call.Unfinished)
	case "read":
		return c.read(p)
	case "write":
		return c.write(p)
	case "append":
		return c.append(p, call.SyncLater)
	case "move":
		return c.move(p)
	default:
		return nil, connectors.Errorf(connectors.Logic, "files has no method %q (it has: list, read, write, append, move)", call.Method)
	}
}

// Hider says, for the entries of the folder dir (a real path), which are
// the host's own files: what list leaves out, and what a watch of dir must
// not wake a producer for (keep's database in a watched folder is written
// at every run's commit).
func (c *Connector) Hider(dir string) func(name string) bool {
	return c.protected.Hider(dir)
}

// Refuses is the error a call naming path (absolute) gets when path is one
// of keep's own places, nil when it is not: a watched folder is refused as
// a listing of it would be.
func (c *Connector) Refuses(path string) error { return c.protected.Check(path) }
