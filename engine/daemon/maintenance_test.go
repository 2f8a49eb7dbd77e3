package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/config"
	"keep/storage"
)

// serveMaintained serves b's engine as the daemon does (maintained, whole.go)
// on a socket of its own and returns a client of it.
func serveMaintained(t *testing.T, b *bundle, r engine.Retention) *Client {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "km")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "keep.db.sock")
	srv, err := Serve(context.Background(), maintainedOf(b.E, r), sock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestMaintenance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("gc through the socket applies the daemon's retention", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.E.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
			t.Fatal(err)
		}
		if err := b.E.Grant(ctx, "notes", api.GrantView{Capability: "files.append", Mode: "allow"}); err != nil {
			t.Fatal(err)
		}
		b.Write("inbox/a.txt", "a")
		b.Drain()
		c := serveMaintained(t, b, engine.Retention{Traces: time.Nanosecond, Runs: time.Nanosecond})
		rep, err := c.GC(ctx)
		if err != nil || rep.Traces == 0 || rep.BytesBefore == 0 {
			t.Fatalf("gc = %+v (%v), want the finished runs' traces pruned", rep, err)
		}
		ins, err := c.Inputs(ctx, "notes", api.Page{})
		if err != nil || len(ins) != 1 || len(ins[0].Outputs) == 0 {
			t.Fatalf("inputs after gc: %+v (%v), want the note with its output", ins, err)
		}
	})

	t.Run("a daemon that does not offer gc refuses it", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.c.GC(ctx); !errors.Is(err, engine.ErrRefused) {
			t.Fatalf("gc on a plain API: %v, want refused", err)
		}
	})

	t.Run("a backup under load restores into a working engine with nothing lost", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := b.E.Deploy(ctx, "notes.js", []byte(notesWorkflow), ""); err != nil {
			t.Fatal(err)
		}
		for _, cap := range []string{"files.append", "files.write"} {
			if err := b.E.Grant(ctx, "notes", api.GrantView{Capability: cap, Mode: "allow"}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			b.Write(fmt.Sprintf("inbox/n%02d.txt", i), "note")
		}
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		if err := b.E.Start(runCtx); err != nil {
			t.Fatal(err)
		}
		c := serveMaintained(t, b, engine.Retention{})
		if err := b.E.RunNow(ctx, "notes"); err != nil && !errors.Is(err, engine.ErrRefused) {
			t.Fatal(err)
		}
		// wait until the engine is mid-way: some notes logged, the rest to come
		deadline := time.After(30 * time.Second)
		for {
			ins, err := b.E.Inputs(ctx, "notes", api.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ins) > 0 {
				break
			}
			select {
			case <-deadline:
				t.Fatal("no input registered within 30s")
			case <-time.After(5 * time.Millisecond):
			}
		}
		backup := filepath.Join(t.TempDir(), "backup.db")
		if err := c.Backup(ctx, "relative.db"); err == nil {
			t.Fatal("a relative backup path was accepted")
		}
		if err := c.Backup(ctx, backup); err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := b.E.Stop(sctx); err != nil {
			t.Fatal(err)
		}

		// restore into a fresh place and run an engine on it
		path := filepath.Join(t.TempDir(), "restored.db")
		if err := storage.Restore(ctx, backup, path); err != nil {
			t.Fatal(err)
		}
		db, err := storage.Open(ctx, storage.Opts{Path: path, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		cfg := config.Default()
		cfg.Connectors.Files.Roots = []string{b.Root}
		reg, err := engine.Connectors(cfg, engine.ConnectorOpts{})
		if err != nil {
			t.Fatal(err)
		}
		e2, err := engine.New(ctx, engine.Opts{DB: db, Connectors: reg, Policy: engine.PolicyFrom(cfg.Policy)})
		if err != nil {
			t.Fatal(err)
		}
		before, err := e2.Inputs(ctx, "notes", api.Page{})
		if err != nil || len(before) == 0 {
			t.Fatalf("restored inputs: %d (%v), want what the backup saw", len(before), err)
		}
		// the restored engine carries on from the snapshot: every note the
		// backup had is there, and it finishes the rest
		// (a mutation in flight when the backup was taken is reconciled
		// first: a blocked workflow refuses run-now)
		dctx, dcancel := context.WithTimeout(ctx, time.Minute)
		defer dcancel()
		if err := e2.Drain(dctx); err != nil {
			t.Fatal(err)
		}
		answerReconciliations(t, e2, b.Root)
		if err := e2.Drain(dctx); err != nil {
			t.Fatal(err)
		}
		if err := e2.RunNow(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
		if err := e2.Drain(dctx); err != nil {
			t.Fatal(err)
		}
		after, err := e2.Inputs(ctx, "notes", api.Page{})
		if err != nil || len(after) != 20 {
			t.Fatalf("inputs after restore and drain: %d (%v), want 20", len(after), err)
		}
		for _, in := range after {
			if in.Status != api.InputDone {
				t.Fatalf("input %s is %s after drain, want done", in.Title, in.Status)
			}
		}
		det, err := e2.Workflow(ctx, "notes")
		if err != nil || det.Counts.InputsDone != 20 {
			t.Fatalf("status counts %+v (%v), want 20 done", det.Counts, err)
		}
	})
}

// answerReconciliations answers what a restored engine asks about a call
// that was in flight when its backup was taken, as the person would after
// looking: an append whose line the file holds happened. (The file went on
// growing after the backup, so keep cannot tell by itself.)
func answerReconciliations(t *testing.T, e *engine.Engine, root string) {
	t.Helper()
	ctx := context.Background()
	items, err := e.Attention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Kind != api.AttentionReconciliation {
			continue
		}
		var p struct{ Path, Content string }
		if err := json.Unmarshal(it.Params, &p); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(root, p.Path))
		if err != nil {
			t.Fatalf("reconciliation of %s %s: %v", it.Method, p.Path, err)
		}
		answer := api.NotHappened
		if strings.Contains(string(data), p.Content) {
			answer = api.Happened
		}
		if err := e.Resolve(ctx, it.ID, answer); err != nil {
			t.Fatal(err)
		}
	}
}
