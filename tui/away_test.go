package tui

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
	"keep/engine/daemon"
)

// The TUI knows the daemon's away error by its method alone.
var _ engineAway = (*daemon.AwayError)(nil)

// A daemon stopped under an open TUI: the status line says in words that
// keep's engine is not running, on which database, how to start it and
// that the screen comes back by itself; the transport's "dial unix …"
// goes to the log, not the screen. Once a daemon serves the database
// again, the next read takes the sentence away.
func TestTheStatusLineSaysTheEngineIsNotRunningInWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRealEngine(t)
	r.Write("inbox/a.txt", "alpha")
	r.Deploy("notes", []byte(copyWorkflow))
	r.Drain()

	// its own short folder: t.TempDir() paths overflow a socket's name
	sockDir, err := os.MkdirTemp("", "kt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "keep.db.sock")
	srv, err := daemon.Serve(ctx, r.API, sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := daemon.Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })

	var logged bytes.Buffer
	m := New(client, Options{Now: r.Clock.Now, NoColor: true, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	m.noTimers = true
	h := &harness{t: t, m: m}
	h.run(m.Init())
	h.send(tea.WindowSizeMsg{Width: 240, Height: 40})
	if n := len(h.m.at.all); n != 1 {
		t.Fatalf("%d cards, want the approval:\n%s", n, h.screen())
	}

	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// what listen sends when the news stream ends
	h.send(notifyMsg(api.Notification{Kind: api.NoteChanged, Text: "the engine went away; listening again when it is back"}))
	status := func() string { return h.m.statusLine() }
	for _, want := range []string{"keep's engine is not running", homePath(r.DBPath), "keep --daemon", "keep service install", "reconnects by itself"} {
		if !strings.Contains(status(), want) {
			t.Errorf("the status line does not say %q:\n%s", want, status())
		}
	}
	// on an 80-column terminal the line is cut: what is wrong and how to
	// mend it come first
	h.send(tea.WindowSizeMsg{Width: 80, Height: 40})
	if !strings.Contains(h.screen(), "keep's engine is not running: start it with keep --daemon") {
		t.Errorf("at 80 columns the screen does not say how to start the engine:\n%s", h.screen())
	}
	h.send(tea.WindowSizeMsg{Width: 240, Height: 40})
	for _, raw := range []string{"dial unix", "connection refused", "no such file", "daemon:"} {
		if strings.Contains(h.screen(), raw) {
			t.Errorf("the screen shows the transport's %q:\n%s", raw, h.screen())
		}
	}
	if !strings.Contains(logged.String(), sock) || !strings.Contains(logged.String(), "dial unix") {
		t.Errorf("the log does not keep the raw cause naming %s:\n%s", sock, logged.String())
	}

	// an action tried meanwhile says it was not done, and why, in the same words
	h.keys("1", "R")
	if s := status(); !strings.Contains(s, "nothing done") || !strings.Contains(s, "keep's engine is not running") || strings.Contains(s, "dial unix") {
		t.Errorf("run now while the engine is away says:\n%s", s)
	}

	srv2, err := daemon.Serve(ctx, r.API, sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv2.Close(ctx) })
	h.send(notifyMsg(api.Notification{Kind: api.NoteChanged, Text: "the engine is back; everything is read again"}))
	if s := status(); strings.Contains(s, "not running") {
		t.Fatalf("once the engine is back the status line still says:\n%s", s)
	}
}
