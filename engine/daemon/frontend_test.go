package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFrontEndEngineIsServed (issue 42): the engine a front end (the TUI)
// gets on a database no daemon holds answers on the socket beside it, so
// another keep process attaches to it as to a daemon's; once it stops,
// nothing answers there.
func TestFrontEndEngineIsServed(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kfe") // short: the socket sits beside the db
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	opts := SiteOpts{DBPath: filepath.Join(dir, "keep.db"), ConfigPath: filepath.Join(dir, "config.toml")}

	s := NewSite(opts)
	defer s.Close()
	g, err := s.Get(ctx, ForFrontEnd)
	if err != nil {
		t.Fatal(err)
	}
	if g.Engine == nil || g.API.Info().Mode == "attached" {
		t.Fatalf("got %+v, want an engine of the front end's own", g.API.Info())
	}
	c, ok := Attach(opts.DBPath)
	if !ok {
		t.Fatal("nothing answers on the socket beside the front end's engine")
	}
	if info := c.Info(); info.PID != os.Getpid() || info.DBPath != opts.DBPath {
		t.Errorf("attached to %+v, want the front end's engine (pid %d) on %s", info, os.Getpid(), opts.DBPath)
	}
	if _, err := c.Workflows(ctx); err != nil {
		t.Errorf("workflows through the front end's engine: %v", err)
	}
	c.Close()
	// a command beside the front end gets its engine, not one of its own
	cs := NewSite(opts)
	cg, err := cs.Get(ctx, ForCommand)
	if err != nil {
		t.Fatal(err)
	}
	if cg.Engine != nil || cg.API.Info().Mode != "attached" {
		t.Errorf("a command beside the front end got %+v, want its client", cg.API.Info())
	}
	cg.Stop(ctx, time.Second)
	cs.Close()

	if err := g.Stop(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if c, ok := Attach(opts.DBPath); ok {
		c.Close()
		t.Error("the socket still answers after the front end's engine stopped")
	}
}
