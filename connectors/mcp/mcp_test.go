package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"keep/connectors"
	"keep/connectors/mcp/mcptest"
)

// syncBuf is a log buffer the server's stderr goroutine writes to.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func memory(t *testing.T, cache string, log *syncBuf) *Connector {
	t.Helper()
	var logger *slog.Logger
	if log != nil {
		logger = slog.New(slog.NewTextHandler(log, nil))
	}
	c, err := New(Config{Name: "memory", Command: mcptest.Bin(t, "mcp-server-memory"),
		Env:   map[string]string{"MEMORY_FILE_PATH": t.TempDir() + "/memory.jsonl"},
		Reads: []string{"read_graph", "search_nodes", "open_nodes"}, CacheDir: cache, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// kinds are the methods once the tool list is known (Methods alone lists
// in the background and answers without waiting).
func kinds(c *Connector) map[string]connectors.Kind {
	if err := c.AwaitTools(context.Background()); err != nil {
		panic(err)
	}
	out := map[string]connectors.Kind{}
	for _, m := range c.Methods() {
		out[m.Name] = m.Kind
	}
	return out
}

func TestMemoryServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cache := t.TempDir()
	log := &syncBuf{}
	c := memory(t, cache, log)

	k := kinds(c)
	if k["search_nodes"] != connectors.Read || k["read_graph"] != connectors.Read || k["create_entities"] != connectors.Mutate || k["delete_entities"] != connectors.Mutate {
		t.Fatalf("kinds = %v: reads are the configured ones, every other tool a mutation", k)
	}
	ann := map[string]any{"entities": []any{map[string]any{"name": "Ann", "entityType": "person", "observations": []any{"likes tea"}}}}
	res, err := c.Do(ctx, connectors.Call{Method: "create_entities", Params: ann, IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.(map[string]any)["text"].(string); !strings.Contains(s, "Ann") {
		t.Fatalf("create_entities result = %v", res)
	}
	found, err := c.Do(ctx, connectors.Call{Method: "search_nodes", Params: map[string]any{"query": "Ann"}})
	if err != nil || !strings.Contains(found.(map[string]any)["text"].(string), "likes tea") {
		t.Fatalf("search_nodes = %v, %v", found, err)
	}

	t.Run("reconcile: the named read holding match means it happened, finding nothing that it did not, anything else asks", func(t *testing.T) {
		withRec := func(q string, match any) connectors.Call {
			rec := map[string]any{"tool": "search_nodes", "args": map[string]any{"query": q}}
			if match != nil {
				rec["match"] = match
			}
			return connectors.Call{Method: "create_entities", Params: map[string]any{"entities": ann["entities"], "reconcile": rec}}
		}
		annMatch := map[string]any{"entities": []any{map[string]any{"name": "Ann"}}}
		if v, r, err := c.Reconcile(ctx, withRec("Ann", annMatch)); v != connectors.Applied || r == nil || err != nil {
			t.Fatalf("Ann: %v %v %v", v, r, err)
		}
		if v, _, err := c.Reconcile(ctx, withRec("Nobody", annMatch)); v != connectors.NotApplied || err != nil {
			t.Fatalf("Nobody: %v %v", v, err)
		}
		// "tea" finds Ann, but the script looks for Bob: not a yes
		bob := map[string]any{"entities": []any{map[string]any{"name": "Bob"}}}
		if v, _, err := c.Reconcile(ctx, withRec("tea", bob)); v != connectors.Unknown || !errors.Is(err, connectors.ErrCannotCheck) || !strings.Contains(err.Error(), "does not hold reconcile.match") {
			t.Fatalf("an answer without the match: %v %v, want the person asked", v, err)
		}
		// something found, and nothing said what to look for: not a yes either
		if v, _, err := c.Reconcile(ctx, withRec("Ann", nil)); v != connectors.Unknown || !errors.Is(err, connectors.ErrCannotCheck) || !strings.Contains(err.Error(), "no match") {
			t.Fatalf("without match: %v %v, want the person asked", v, err)
		}
		bad := connectors.Call{Method: "create_entities", Params: map[string]any{"reconcile": map[string]any{"tool": "delete_entities"}}}
		if _, _, err := c.Reconcile(ctx, bad); connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "not a read") {
			t.Fatalf("a mutation as reconcile.tool: %v", err)
		}
		if _, _, err := c.Reconcile(ctx, connectors.Call{Method: "create_entities", Params: ann}); err != connectors.ErrCannotCheck {
			t.Fatalf("without reconcile and without trusted hints: %v, want ErrCannotCheck (ask the person)", err)
		}
	})

	t.Run("a call the server refuses is a logic failure", func(t *testing.T) {
		_, err := c.Do(ctx, connectors.Call{Method: "create_entities", Params: map[string]any{"entities": "not a list"}})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("err = %v (%s), want logic", err, connectors.ClassOf(err))
		}
		_, err = c.Do(ctx, connectors.Call{Method: "no_such_tool"})
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "create_entities") {
			t.Fatalf("unknown tool: %v", err)
		}
	})

	t.Run("the tool list is cached, so another keep knows the tools without starting the server", func(t *testing.T) {
		c2 := memory(t, cache, nil)
		if k2 := kinds(c2); k2["create_entities"] != connectors.Mutate {
			t.Fatalf("cached kinds = %v", k2)
		}
		c2.mu.Lock()
		started := c2.sess != nil
		c2.mu.Unlock()
		if started {
			t.Fatal("listing methods from the cache started the server")
		}
	})

	t.Run("Close stops the server and its stderr is in the log", func(t *testing.T) {
		c.mu.Lock()
		proc := c.proc
		c.mu.Unlock()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := proc.Signal(syscall.Signal(0)); err == nil {
			t.Fatal("the server still runs after Close")
		}
		if !strings.Contains(log.String(), "server stderr") || !strings.Contains(log.String(), "Knowledge Graph") {
			t.Fatalf("log = %s", log.String())
		}
		if want := fmt.Sprintf(`msg="server started" component=mcp server=memory pid=%d`, proc.Pid); !strings.Contains(log.String(), want) {
			t.Fatalf("keep.log does not name the server's own pid (%q): %s", want, log.String())
		}
		if _, err := c.Do(ctx, connectors.Call{Method: "search_nodes", Params: map[string]any{"query": "x"}}); !notSent(err) {
			t.Fatalf("a call after Close: %v", err)
		}
	})
}

// fakeClock is the edge of the machine: the back-off reads it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) Add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func TestEverythingServerKilledMidCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c, err := New(Config{Name: "everything", Command: mcptest.Bin(t, "mcp-server-everything"), Args: []string{"stdio"},
		TrustHints: true, BackoffBase: time.Minute, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var once sync.Once
	c.progress = func() {
		once.Do(func() {
			c.mu.Lock()
			p := c.proc
			c.mu.Unlock()
			_ = p.Kill()
		})
	}
	k := kinds(c)
	if k["get-sum"] != connectors.Read || k["toggle-simulated-logging"] != connectors.Mutate {
		t.Fatalf("with trust_hints, readOnlyHint tools are reads: %v", k)
	}
	sum, err := c.Do(ctx, connectors.Call{Method: "get-sum", Params: map[string]any{"a": 2, "b": 3}})
	if err != nil || !strings.Contains(sum.(map[string]any)["text"].(string), "5") {
		t.Fatalf("get-sum = %v, %v", sum, err)
	}

	// a mutation (no hints trusted for it) that the server dies during
	c.cfg.Reads, c.cfg.TrustHints = nil, false
	_, err = c.Do(ctx, connectors.Call{Method: "trigger-long-running-operation", Params: map[string]any{"duration": 60, "steps": 60}, IdempotencyKey: "k"})
	if connectors.ClassOf(err) != connectors.Uncertain {
		t.Fatalf("killed mid-call: %v (%s), want uncertain", err, connectors.ClassOf(err))
	}
	_, err = c.Do(ctx, connectors.Call{Method: "get-sum", Params: map[string]any{"a": 1, "b": 1}})
	var ce *connectors.Error
	if !errors.As(err, &ce) || !ce.NotSent || ce.RetryAfter <= 0 {
		t.Fatalf("a call during the back-off: %v, want transient, not sent, with a retry-after", err)
	}
	clock.Add(2 * time.Minute)
	c.progress = nil
	if _, err := c.Do(ctx, connectors.Call{Method: "get-sum", Params: map[string]any{"a": 1, "b": 1}}); err != nil {
		t.Fatalf("after the back-off the server starts again: %v", err)
	}
}
