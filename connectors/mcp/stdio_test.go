package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also a real MCP server over stdio, built with the SDK,
// when started with KEEP_MCP_TEST_SERVER=1: keep starts it as it starts any
// stdio server.
func TestMain(m *testing.M) {
	switch os.Getenv("KEEP_MCP_TEST_SERVER") {
	case "1":
		stdioServer()
		return
	case "raw":
		rawServer() // hostile_test.go
		return
	case "keep":
		keepHelper() // hostile_test.go
		return
	}
	os.Exit(m.Run())
}

type sizeArgs struct {
	Size int    `json:"size,omitempty"`
	Wait string `json:"wait,omitempty"` // a file whose appearance ends the call
	Name string `json:"name,omitempty"`
}

func stdioServer() {
	srv := sdk.NewServer(&sdk.Implementation{Name: "keep-test", Version: "1"}, nil)
	obj := map[string]any{"type": "object", "properties": map[string]any{
		"size": map[string]any{"type": "integer"}, "wait": map[string]any{"type": "string"}, "name": map[string]any{"type": "string"}}}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	args := func(req *sdk.CallToolRequest) sizeArgs {
		var a sizeArgs
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a
	}
	srv.AddTool(&sdk.Tool{Name: "big", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(strings.Repeat("x", args(req).Size)), nil
	})
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for {
			if _, err := os.Stat(args(req).Wait); err == nil {
				return text("done"), nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	// progress reports progress size times, 20 ms apart, then answers
	srv.AddTool(&sdk.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i := range args(req).Size {
			err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1)})
			if err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		return text("done"), nil
	})
	srv.AddTool(&sdk.Tool{Name: "add_tool", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		name := args(req).Name
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(name), nil
		})
		return text("added " + name), nil
	})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

// testServer is a connector to the test binary as a stdio server.
func testServer(t *testing.T, edit func(*Config)) *Connector {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "t", Command: self, Env: map[string]string{"KEEP_MCP_TEST_SERVER": "1"}, CacheDir: t.TempDir()}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// issue 42: a stdio server's answer over the size limit fails that call
// only; a call in flight beside it goes on, and so does the session.
func TestOversizedAnswerFailsItsCallOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testServer(t, func(cfg *Config) { cfg.MaxMessage = 64 << 10; cfg.Reads = []string{"big", "slow"} })
	release := filepath.Join(t.TempDir(), "release")

	var wg sync.WaitGroup
	var slowRes any
	var slowErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		slowRes, slowErr = c.Do(ctx, connectors.Call{Method: "slow", Params: map[string]any{"wait": release}})
	}()
	_, err := c.Do(ctx, connectors.Call{Method: "big", Params: map[string]any{"size": 1 << 20}})
	if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "over keep's limit") {
		t.Fatalf("the oversized answer: %v (%s), want a logic failure naming the limit", err, connectors.ClassOf(err))
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if slowErr != nil || slowRes.(map[string]any)["text"] != "done" {
		t.Fatalf("the call in flight beside it: %v, %v", slowRes, slowErr)
	}
	small, err := c.Do(ctx, connectors.Call{Method: "big", Params: map[string]any{"size": 10}})
	if err != nil || small.(map[string]any)["text"] != "xxxxxxxxxx" {
		t.Fatalf("the session after it: %v, %v", small, err)
	}
	if fails, _ := c.StartFailures(); fails != 0 {
		t.Fatalf("the server was started again (%d failures)", fails)
	}
}

// issue 42: notifications/tools/list_changed refreshes the list, and the
// watchers are told.
func TestToolListChangedRefreshes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testServer(t, nil)
	told := make(chan struct{}, 8)
	c.OnToolsChanged(func() { told <- struct{}{} })
	if err := c.AwaitTools(ctx); err != nil {
		t.Fatal(err)
	}
	<-told // the list became known
	if _, err := c.Do(ctx, connectors.Call{Method: "add_tool", Params: map[string]any{"name": "fresh"}}); err != nil {
		t.Fatal(err)
	}
	<-told // the server said its tools changed
	if _, err := c.tool(ctx, "fresh"); err != nil {
		t.Fatalf("after list_changed: %v", err)
	}
	if cached, ok := c.loadCache(); !ok || !slicesHasTool(cached, "fresh") {
		t.Fatal("the refreshed list is not cached")
	}
}

func slicesHasTool(tools []*sdk.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// issue 42: a server that does not answer its handshake costs nothing to
// what only reads the catalog; the listing goes on in the background, and
// repeated failed starts are counted with their error.
func TestAServerThatHangsCostsMethodsNoWait(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c, err := New(Config{Name: "hang", Command: "sleep", Args: []string{"600"}, Timeout: time.Hour, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if m := c.Methods(); m != nil {
		t.Fatalf("methods = %v", m)
	}
	c.mu.Lock()
	listing := c.listing != nil
	c.mu.Unlock()
	if !listing {
		t.Fatal("Methods returned without a listing under way: it waited for the server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.AwaitTools(ctx); err == nil || !strings.Contains(err.Error(), "not listed yet") {
		t.Fatalf("AwaitTools on a cancelled context = %v", err)
	}
}

func TestStartFailuresAreCounted(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c, err := New(Config{Name: "gone", Command: filepath.Join(t.TempDir(), "no-such-server"), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		err := c.AwaitTools(context.Background())
		if err == nil {
			t.Fatal("a server that does not exist was listed")
		}
		if n, last := c.StartFailures(); n != i || last == nil || !strings.Contains(last.Error(), "no-such-server") {
			t.Fatalf("after %d tries: %d, %v", i, n, last)
		}
		clock.Add(time.Hour) // past the back-off
	}
}

// issue 42: a tool that reports progress is not cut at timeout (each
// notification moves the deadline on), up to max_timeout in all.
func TestProgressExtendsTheDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := testServer(t, func(cfg *Config) {
		cfg.Timeout, cfg.MaxTimeout, cfg.Reads = 300*time.Millisecond, 5*time.Minute, []string{"progress", "slow"}
	})
	// 2 s of work, in steps well inside the timeout
	res, err := c.Do(ctx, connectors.Call{Method: "progress", Params: map[string]any{"size": 100}})
	if err != nil || res.(map[string]any)["text"] != "done" {
		t.Fatalf("a tool reporting progress for 2 s under a 300 ms timeout: %v, %v", res, err)
	}
	// without progress, the timeout holds
	_, err = c.Do(ctx, connectors.Call{Method: "slow", Params: map[string]any{"wait": filepath.Join(t.TempDir(), "never")}})
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("a silent tool: %v", err)
	}

	capped := testServer(t, func(cfg *Config) {
		cfg.Timeout, cfg.MaxTimeout, cfg.Reads = 300*time.Millisecond, 600*time.Millisecond, []string{"progress"}
	})
	_, err = capped.Do(ctx, connectors.Call{Method: "progress", Params: map[string]any{"size": 100000}})
	if err == nil || !strings.Contains(err.Error(), "at most 600ms in all") {
		t.Fatalf("progress without end: %v, want it cut at max_timeout", err)
	}
}

// A server that never answers the handshake costs a caller without a
// deadline of its own (keep mcp tools, a command) at most Timeout, not
// forever, and nothing was sent. Before, Connect ran under the caller's
// context alone, and held every other caller of the server on startMu.
func TestAHandshakeIsBoundedByTimeout(t *testing.T) {
	t.Parallel()
	c, err := New(Config{Name: "mute", Command: "sleep", Args: []string{"600"}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), connectors.Call{Method: "anything", IdempotencyKey: "k"})
		done <- err
	}()
	select {
	case err := <-done:
		if connectors.ClassOf(err) != connectors.Transient || !notSent(err) {
			t.Fatalf("a mute server: %v (%s), want transient, not sent", err, connectors.ClassOf(err))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a call to a server mute in its handshake did not return")
	}
}
