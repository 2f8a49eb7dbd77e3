package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/mcp/mcptest"
)

func filesystem(t *testing.T, dir string, trust bool) *Connector {
	t.Helper()
	c, err := New(Config{Name: "fs", Command: mcptest.Bin(t, "mcp-server-filesystem"), Args: []string{dir},
		TrustHints: trust, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The reference filesystem server marks its reads readOnlyHint and
// write_file idempotentHint: keep believes that only when the config says
// trust_hints, and then a write whose outcome was lost may be made again.
func TestFilesystemServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("without trust_hints every tool is a mutation", func(t *testing.T) {
		k := kinds(filesystem(t, dir, false))
		if k["read_text_file"] != connectors.Mutate || k["list_directory"] != connectors.Mutate || k["write_file"] != connectors.Mutate {
			t.Fatalf("kinds = %v", k)
		}
	})

	c := filesystem(t, dir, true)
	k := kinds(c)
	if k["read_text_file"] != connectors.Read || k["list_directory"] != connectors.Read || k["write_file"] != connectors.Mutate || k["move_file"] != connectors.Mutate {
		t.Fatalf("kinds with trust_hints = %v: readOnlyHint tools are reads, the rest mutations", k)
	}

	note := filepath.Join(dir, "note.txt")
	if _, err := c.Do(ctx, connectors.Call{Method: "write_file", Params: map[string]any{"path": note, "content": "hello"}, IdempotencyKey: "k1"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(note); err != nil || string(b) != "hello" {
		t.Fatalf("note.txt = %q, %v", b, err)
	}
	got, err := c.Do(ctx, connectors.Call{Method: "read_text_file", Params: map[string]any{"path": note}})
	if err != nil || !strings.Contains(got.(map[string]any)["text"].(string), "hello") {
		t.Fatalf("read_text_file = %v, %v", got, err)
	}

	t.Run("a path outside the allowed folder is the server's refusal: failed, nothing written", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "x.txt")
		_, err := c.Do(ctx, connectors.Call{Method: "write_file", Params: map[string]any{"path": outside, "content": "no"}})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v (%s), want logic", err, connectors.ClassOf(err))
		}
		if _, err := os.Stat(outside); err == nil {
			t.Fatal("the server wrote outside its folder")
		}
	})

	t.Run("an uncertain write_file (idempotentHint, trusted) is settled by writing again", func(t *testing.T) {
		call := connectors.Call{Method: "write_file", Params: map[string]any{"path": note, "content": "again"}, IdempotencyKey: "k2"}
		if v, _, err := c.Reconcile(ctx, call); v != connectors.Applied || err != nil {
			t.Fatalf("Reconcile = %v, %v", v, err)
		}
		if b, _ := os.ReadFile(note); string(b) != "again" {
			t.Fatalf("note.txt = %q after the write was made again", b)
		}
		// move_file is not idempotent: the person is asked
		mv := connectors.Call{Method: "move_file", Params: map[string]any{"source": note, "destination": note + ".old"}}
		if _, _, err := c.Reconcile(ctx, mv); err != connectors.ErrCannotCheck {
			t.Fatalf("move_file: %v, want ErrCannotCheck (ask the person)", err)
		}
	})
}

// issue 39: server-filesystem's search_files answers a miss as
// {"content": "No matches found"}, which is not empty. A move_file whose
// outcome was lost is settled only by the match the script gave: the miss
// asks the person, the file found where it was moved to is a yes.
func TestFilesystemMoveReconciledOnlyByMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := filesystem(t, dir, true)
	src, dst := filepath.Join(dir, "a.txt"), filepath.Join(dir, "moved.txt")
	if err := os.WriteFile(src, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	move := func(rec map[string]any) connectors.Call {
		return connectors.Call{Method: "move_file", IdempotencyKey: "k1",
			Params: map[string]any{"source": src, "destination": dst, "reconcile": rec}}
	}
	search := map[string]any{"tool": "search_files", "args": map[string]any{"path": dir, "pattern": "moved.txt"},
		"match": map[string]any{"content": dst}}

	t.Run("the move never happened: the prose miss asks the person, it is not applied", func(t *testing.T) {
		v, r, err := c.Reconcile(ctx, move(search))
		if v != connectors.Unknown || r != nil || !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("Reconcile = %v, %v, %v; want the person asked", v, r, err)
		}
		if !strings.Contains(err.Error(), "No matches found") {
			t.Fatalf("the question does not say what the read answered: %v", err)
		}
	})

	t.Run("without match, a read that answers anything asks the person", func(t *testing.T) {
		noMatch := map[string]any{"tool": "search_files", "args": search["args"]}
		if v, _, err := c.Reconcile(ctx, move(noMatch)); v != connectors.Unknown || !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("Reconcile = %v, %v; want the person asked", v, err)
		}
	})

	t.Run("a reconcile field keep cannot use is refused before the move is sent", func(t *testing.T) {
		for _, rec := range []map[string]any{
			{"tool": "search_files", "args": search["args"], "matches": search["match"]},
			{"tool": "move_file"},
			{"args": search["args"]},
		} {
			_, err := c.Do(ctx, move(rec))
			if connectors.ClassOf(err) != connectors.Logic {
				t.Fatalf("reconcile %v: %v (%s), want a logic error", rec, err, connectors.ClassOf(err))
			}
			if _, serr := os.Stat(src); serr != nil {
				t.Fatalf("reconcile %v: the move was sent anyway", rec)
			}
		}
	})

	t.Run("the move happened: the read holds the match, applied", func(t *testing.T) {
		if _, err := c.Do(ctx, move(search)); err != nil {
			t.Fatal(err)
		}
		if v, r, err := c.Reconcile(ctx, move(search)); v != connectors.Applied || r == nil || err != nil {
			t.Fatalf("Reconcile = %v, %v, %v", v, r, err)
		}
	})
}
