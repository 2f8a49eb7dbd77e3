package daemon

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"keep/engine"
)

// TestSiteGet gets hold of the engine as a command, the TUI and the daemon
// do, on a real database: in-process when nothing else runs, through the
// socket once a daemon does.
func TestSiteGet(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ks") // short: the socket sits beside the db
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	opts := SiteOpts{DBPath: filepath.Join(dir, "keep.db"), ConfigPath: filepath.Join(dir, "config.toml")}

	t.Run("a command with nothing running opens the engine here", func(t *testing.T) {
		s := NewSite(opts)
		defer s.Close()
		g, err := s.Get(ctx, ForCommand)
		if err != nil {
			t.Fatal(err)
		}
		if g.Engine == nil || g.API.Info().Mode == "attached" {
			t.Fatalf("got %+v, want an engine opened here", g.API.Info())
		}
	})

	// the daemon, as keep --daemon runs it
	var stderr bytes.Buffer
	dctx, stop := context.WithCancel(ctx)
	ds := NewSite(SiteOpts{DBPath: opts.DBPath, ConfigPath: opts.ConfigPath, Stderr: &stderr})
	done := make(chan error, 1)
	go func() { done <- ds.RunDaemon(dctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
		ds.Close()
	})
	// A command waits for a daemon starting (DB.starting) rather than
	// failing: this Get returns once it answers.
	if err := AwaitStart(ctx, opts.DBPath, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if c, ok := Attach(opts.DBPath); ok {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never answered; it said %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}

	for _, want := range []Want{ForCommand, ForFrontEnd} {
		s := NewSite(opts)
		g, err := s.Get(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		if g.Engine != nil || g.API.Info().Mode != "attached" {
			t.Errorf("want %d: got %+v, want the daemon's client", want, g.API.Info())
		}
		if err := g.Stop(ctx, time.Second); err != nil {
			t.Errorf("stopping an attached engine: %v", err)
		}
		s.Close()
	}
	t.Run("a second daemon is refused, naming the first", func(t *testing.T) {
		s := NewSite(opts)
		defer s.Close()
		_, err := s.Get(ctx, ForDaemon)
		var le *engine.LockedError
		if !errors.As(err, &le) || le.PID != os.Getpid() {
			t.Fatalf("a second daemon: %v, want the database locked by pid %d", err, os.Getpid())
		}
	})
}
