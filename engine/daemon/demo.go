package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"keep/engine"
	"keep/workflows"
)

// DefaultDBPath is $KEEP_DB, else $XDG_DATA_HOME/keep/keep.db, else
// ~/.local/share/keep/keep.db (DESIGN.md §2).
func DefaultDBPath() string {
	if p := os.Getenv("KEEP_DB"); p != "" {
		return p
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "keep", "keep.db")
}

// FirstRunDemo deploys the embedded demo workflow on an empty database, on
// a folder under the data directory with a first note already in its inbox,
// so a newcomer sees an input, an approval and an output, offline. It
// returns the note the front end shows, or "" when the database has
// workflows already.
func (s *Site) FirstRunDemo(ctx context.Context, e *engine.Engine) (string, error) {
	wfs, err := e.Workflows(ctx)
	if err != nil || len(wfs) > 0 {
		return "", err
	}
	f, ok := workflows.Get("demo.js")
	if !ok {
		return "", errors.New("the demo workflow is not embedded")
	}
	dir := s.DemoDir()
	inbox, done := filepath.Join(dir, "inbox"), filepath.Join(dir, "done")
	for _, d := range []string{inbox, done} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	welcome := filepath.Join(inbox, "welcome.txt")
	if _, err := os.Stat(welcome); errors.Is(err, os.ErrNotExist) {
		text := "Hello from keep!\nThis note is your first input. keep will ask you before it writes a summary of it.\n"
		if err := os.WriteFile(welcome, []byte(text), 0o600); err != nil {
			return "", err
		}
	}
	src := strings.NewReplacer(`const INBOX = "demo/inbox";`, fmt.Sprintf("const INBOX = %q;", inbox),
		`const DONE = "demo/done";`, fmt.Sprintf("const DONE = %q;", done)).Replace(string(f.Source))
	if _, err := e.Deploy(ctx, f.Name, []byte(src), "demo"); err != nil {
		return "", err
	}
	return fmt.Sprintf("Demo: drop a .txt file into %s; keep asks (Attention, key a) before writing its summary to %s", inbox, done), nil
}
