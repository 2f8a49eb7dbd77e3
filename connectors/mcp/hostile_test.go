package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"keep/connectors"
)

// rawServer is an MCP server over stdio written by hand on the wire, as a
// careless or hostile one may be: it answers the handshake and tools/list
// as the protocol says, and each tool does something the SDK's server
// would never let it (KEEP_MCP_TEST_SERVER=raw).
func rawServer() {
	if os.Getenv("RAW_STUBBORN") == "1" {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
		mu.Unlock()
	}
	answer := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	obj := map[string]any{"type": "object"}
	tools := []any{}
	for _, n := range []string{"count", "flood", "malformed", "stderr", "pid", "spawn", "garbage", "deep", "slow", "hang", "closeout", "closein", "shed", "ask"} {
		tools = append(tools, map[string]any{"name": n, "inputSchema": obj})
	}
	tools = append(tools, map[string]any{"name": "shed_idempotent", "inputSchema": obj, "annotations": map[string]any{"idempotentHint": true}})
	var lists atomic.Int64
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					N    int    `json:"n"`
					Wait string `json:"wait"`
				} `json:"arguments"`
				Meta struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue // a notification, or an answer
		}
		n := m.Params.Arguments.N
		switch m.Method {
		case "initialize":
			answer(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo": map[string]any{"name": "raw", "version": "1"}})
		case "ping":
			answer(m.ID, map[string]any{})
		case "tools/list":
			lists.Add(1)
			switch os.Getenv("RAW_LIST") {
			case "hang": // never answers a listing
				continue
			case "endless": // a page of one new tool after another, without end
				var p struct {
					Params struct {
						Cursor string `json:"cursor"`
					} `json:"params"`
				}
				_ = json.Unmarshal(in.Bytes(), &p)
				i, _ := strconv.Atoi(p.Params.Cursor)
				answer(m.ID, map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("t%d", i), "inputSchema": obj}}, "nextCursor": fmt.Sprint(i + 1)})
				continue
			case "loop": // empty pages, each naming the same next one
				answer(m.ID, map[string]any{"tools": []any{}, "nextCursor": "again"})
				continue
			case "fat": // pages of one tool with a description of a MiB, without end
				answer(m.ID, map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("t%d", lists.Load()), "inputSchema": obj,
					"description": strings.Repeat("d", 1<<20)}}, "nextCursor": fmt.Sprint(lists.Load())})
				continue
			}
			answer(m.ID, map[string]any{"tools": tools})
		case "tools/call":
			switch m.Params.Name {
			case "count":
				answer(m.ID, text(fmt.Sprint(lists.Load())))
			case "slow": // answers when the file named wait appears
				go func() {
					for {
						if _, err := os.Stat(m.Params.Arguments.Wait); err == nil {
							answer(m.ID, text("done"))
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
				}()
			case "hang": // says it has begun, and never answers
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": m.Params.Meta.ProgressToken, "progress": 0}})
			case "shed", "shed_idempotent": // puts the call off (SEP-2322's load shedding)
				answer(m.ID, map[string]any{"resultType": "input_required"})
			case "ask": // runs only once the client answers a question
				answer(m.ID, map[string]any{"resultType": "input_required", "inputRequests": map[string]any{
					"sure": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "Delete all 40 files?",
						"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}}})
			case "closein": // stops listening, answers, and runs on
				os.Stdin.Close()
				answer(m.ID, text("deaf"))
			case "closeout": // hangs up its output, and runs on
				os.Stdout.Close()
			case "flood":
				for range n {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				}
				answer(m.ID, text("flooded"))
			case "malformed":
				answer(m.ID, map[string]any{"content": "not a list"})
			case "stderr":
				for i := range n {
					fmt.Fprintf(os.Stderr, "line %d of the flood\n", i)
				}
				answer(m.ID, text("said"))
			case "pid":
				answer(m.ID, text(fmt.Sprint(os.Getpid())))
			case "deep": // a result nested past what a JSON reader follows
				depth := 20000
				if d, err := strconv.Atoi(os.Getenv("RAW_DEEP")); err == nil {
					depth = d
				}
				mu.Lock()
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":{"a":%s%s}}}`+"\n",
					m.ID, strings.Repeat("[", depth), strings.Repeat("]", depth))
				out.Flush()
				mu.Unlock()
			case "spawn":
				cmd := exec.Command("sleep", "600")
				cmd.Stderr = os.Stderr // and holds the server's stderr open
				_ = cmd.Start()
				answer(m.ID, text(fmt.Sprint(cmd.Process.Pid)))
			case "garbage":
				mu.Lock()
				out.WriteString("Debug: this is no JSON\n")
				out.Flush()
				mu.Unlock()
				answer(m.ID, text("ok"))
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "no such tool"}})
			}
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
	if os.Getenv("RAW_STUBBORN") == "1" {
		time.Sleep(10 * time.Minute) // deaf to the end of its input
	}
}

// rawTestServer is a connector to rawServer.
func rawTestServer(t *testing.T, edit func(*Config)) *Connector {
	t.Helper()
	return testServer(t, func(cfg *Config) {
		cfg.Env["KEEP_MCP_TEST_SERVER"] = "raw"
		if edit != nil {
			edit(cfg)
		}
	})
}

// pidOf is the pid of the server behind c, as it says itself.
func pidOf(t *testing.T, c *Connector) string {
	t.Helper()
	r, err := c.Do(context.Background(), connectors.Call{Method: "pid"})
	if err != nil {
		t.Fatal(err)
	}
	return r.(map[string]any)["text"].(string)
}

// A server that answers a call with what is no tool result (content not a
// list), or prints a line that is no JSON on its stdout, fails that call
// at most: the calls beside it go on, and the same server serves the next.
// Before, the SDK's decoding error marked the session down without closing
// it: the next call started a second server, and the first ran on beside
// it and past Close; a stray line ended the session and every call in
// flight with it (each mutation among them uncertain).
func TestAnUnreadableAnswerFailsItsCallOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := rawTestServer(t, func(cfg *Config) { cfg.Reads = []string{"pid", "slow", "garbage"} })
	pid := pidOf(t, c)
	release := filepath.Join(t.TempDir(), "release")
	slow := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, connectors.Call{Method: "slow", Params: map[string]any{"wait": release}})
		slow <- err
	}()

	_, err := c.Do(ctx, connectors.Call{Method: "malformed", IdempotencyKey: "k1"})
	if connectors.ClassOf(err) != connectors.Uncertain {
		t.Fatalf("a mutation answered with no tool result: %v (%s), want uncertain: it answered, keep cannot read what", err, connectors.ClassOf(err))
	}
	if again := pidOf(t, c); again != pid {
		t.Fatalf("the server was replaced after the answer that is no tool result (pid %s, then %s)", pid, again)
	}
	res, err := c.Do(ctx, connectors.Call{Method: "garbage"})
	if err != nil || res.(map[string]any)["text"] != "ok" {
		t.Fatalf("a call after a line that is no JSON: %v, %v", res, err)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the call in flight beside them: %v", err)
	}
	if again := pidOf(t, c); again != pid {
		t.Fatalf("the server was replaced (pid %s, then %s)", pid, again)
	}
	if fails, _ := c.StartFailures(); fails != 0 {
		t.Fatalf("%d failed starts", fails)
	}
}

// A server may send notifications/tools/list_changed without end: keep
// lists its tools again one listing at a time, with one more when any came
// meanwhile. Before, each notification sent a tools/list of its own (2000
// notifications, 2000 listings at once), and an older listing finishing
// last could put an outdated list in place of a newer one.
func TestAListChangedFloodIsOneListingAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := rawTestServer(t, func(cfg *Config) { cfg.Reads = []string{"count", "flood"} })
	if _, err := c.Do(ctx, connectors.Call{Method: "flood", Params: map[string]any{"n": 2000}}); err != nil {
		t.Fatal(err)
	}
	lists, last := "", ""
	for range 40 { // until the listings are over
		r, err := c.Do(ctx, connectors.Call{Method: "count"})
		if err != nil {
			t.Fatal(err)
		}
		if lists = r.(map[string]any)["text"].(string); lists == last {
			break
		}
		last = lists
		time.Sleep(50 * time.Millisecond)
	}
	if n, _ := strconv.Atoi(lists); n > 5 {
		t.Fatalf("2000 list_changed notifications made %d tools/list requests", n)
	}
	if !c.Known() {
		t.Fatal("the tool list is not known")
	}
}

// A server's stderr goes to keep.log, but a server writing without end
// cannot fill it: past StderrLines a minute its lines are counted, and the
// count is logged when the minute is over. Before, every line was a
// record, and a flood pushed keep's own records out of the rotated log.
func TestAServersStderrFloodIsCapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := &syncBuf{}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c := rawTestServer(t, func(cfg *Config) {
		cfg.Reads, cfg.Now = []string{"stderr"}, clock.Now
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	})
	if _, err := c.Do(ctx, connectors.Call{Method: "stderr", Params: map[string]any{"n": 5000}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil { // its stderr is read to the end
		t.Fatal(err)
	}
	out := log.String()
	if n := strings.Count(out, `msg="server stderr"`); n != StderrLines {
		t.Fatalf("%d of the server's 5000 lines of stderr in the log, want %d", n, StderrLines)
	}
	if !strings.Contains(out, "floods the log") {
		t.Fatal("the log does not say that the server's lines are dropped")
	}

	t.Run("the lines dropped are counted when the minute is over", func(t *testing.T) {
		log := &syncBuf{}
		l := &lineLog{c: &Connector{cfg: Config{Now: clock.Now}, log: slog.New(slog.NewTextHandler(log, nil))}}
		fmt.Fprint(l, strings.Repeat("chatter\n", StderrLines+50))
		clock.Add(time.Minute)
		fmt.Fprint(l, "after\n")
		if out := log.String(); !strings.Contains(out, "dropped=50") || !strings.Contains(out, "line=after") {
			t.Fatalf("log = %s", out[len(out)-min(len(out), 400):])
		}
	})
}

// running says whether pid is a process that has not ended (a zombie has).
func running(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}

// gone waits a while for pid to end.
func gone(pid string) bool {
	for range 300 {
		if !running(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// A server's children stop with it: keep stops a stdio server's process
// group, not its pid alone. Before, a child the server started (npx's
// node, a helper) ran on after Close, holding the server's stderr, and
// Close waited for it until its grace periods ran out.
func TestCloseStopsWhatTheServerStarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := rawTestServer(t, func(cfg *Config) { cfg.Reads = []string{"pid", "spawn"}; cfg.Env["RAW_STUBBORN"] = "1" })
	pid := pidOf(t, c)
	r, err := c.Do(ctx, connectors.Call{Method: "spawn"})
	if err != nil {
		t.Fatal(err)
	}
	child := r.(map[string]any)["text"].(string)
	t.Cleanup(func() {
		if p, _ := strconv.Atoi(child); p > 0 {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	_ = c.Close() // "signal: killed": it would not stop otherwise
	if !gone(pid) {
		t.Fatalf("the server (pid %s) runs on after Close", pid)
	}
	if !gone(child) {
		t.Fatalf("the server's child (pid %s) runs on after Close", child)
	}
}

// keepHelper is a keep that starts a stdio server deaf to the end of its
// input and to SIGTERM, prints its pid, and waits to be killed
// (KEEP_MCP_TEST_SERVER=keep).
func keepHelper() {
	self, _ := os.Executable()
	c, err := New(Config{Name: "t", Command: self, Reads: []string{"pid"},
		Env: map[string]string{"KEEP_MCP_TEST_SERVER": "raw", "RAW_STUBBORN": "1"}})
	if err != nil {
		os.Exit(1)
	}
	r, err := c.Do(context.Background(), connectors.Call{Method: "pid"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(r.(map[string]any)["text"])
	time.Sleep(10 * time.Minute)
}

// A keep that is killed (SIGKILL, OOM) has no Close to run: its servers
// die with it all the same. Before, a server that did not stop at the end
// of its input ran on, an orphan, for as long as it liked.
func TestAServerDiesWithAKilledKeep(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	keep := exec.Command(self)
	keep.Env = append(os.Environ(), "KEEP_MCP_TEST_SERVER=keep")
	out, err := keep.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := keep.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid := strings.TrimSpace(line)
	if _, perr := strconv.Atoi(pid); err != nil || perr != nil {
		_ = keep.Process.Kill()
		t.Fatalf("the helper said %q, %v", line, err)
	}
	t.Cleanup(func() {
		if p, _ := strconv.Atoi(pid); p > 0 {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	_ = keep.Process.Kill()
	_ = keep.Wait()
	if !gone(pid) {
		t.Fatalf("the server (pid %s) outlived the keep that was killed", pid)
	}
}

// A tool may answer resultType "input_required" (SEP-2322): it has not
// run, and waits for input (a question to a person) or, asking for
// nothing, puts the call off. The SDK refuses a question keep cannot put;
// a call put off came to keep as a result, and the mutation was applied,
// with an empty result, though nothing had been done.
func TestAnAnswerThatNeedsInputIsNoResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := rawTestServer(t, func(cfg *Config) { cfg.TrustHints = true })
	_, err := c.Do(ctx, connectors.Call{Method: "ask", IdempotencyKey: "k1"})
	if connectors.ClassOf(err) != connectors.Logic {
		t.Fatalf("a tool asking a question: %v (%s), want a failure: it did not run", err, connectors.ClassOf(err))
	}
	_, err = c.Do(ctx, connectors.Call{Method: "shed", IdempotencyKey: "k2"})
	if connectors.ClassOf(err) != connectors.Transient || !strings.Contains(err.Error(), "did not run") {
		t.Fatalf("a call put off: %v (%s), want transient: sent again later", err, connectors.ClassOf(err))
	}
	// nor is it a yes when keep calls a tool trusted to be idempotent
	// again to settle an uncertain call
	if v, _, err := c.Reconcile(ctx, connectors.Call{Method: "shed_idempotent", IdempotencyKey: "k3"}); v != connectors.Unknown {
		t.Fatalf("reconciled by a call put off: %v, %v; want unknown (checked again later)", v, err)
	}
}

// hangGuard fails the test when f has not returned in a generous while:
// the calls it guards must end by keep's own bounds, not the test's.
func hangGuard[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not end", what)
		panic("unreachable")
	}
}

// A server that answers the handshake but never tools/list cannot hold a
// call forever: the listing a call needs (no list held or cached yet) is
// bounded by Timeout, as the call itself is. Before, it waited on the
// caller's context alone, and a run (or `keep mcp tools`) without a
// deadline of its own hung for good.
func TestAListingThatNeverAnswersIsBounded(t *testing.T) {
	t.Parallel()
	c := rawTestServer(t, func(cfg *Config) {
		cfg.Env["RAW_LIST"] = "hang"
		cfg.Timeout = time.Second
	})
	err := hangGuard(t, "a call to a server that never lists its tools", func() error {
		_, err := c.Do(context.Background(), connectors.Call{Method: "count", IdempotencyKey: "k"})
		return err
	})
	if err == nil || connectors.ClassOf(err) != connectors.Transient {
		t.Fatalf("a call whose tools were never listed: %v (%s), want transient, nothing done", err, connectors.ClassOf(err))
	}
	err = hangGuard(t, "listing a server that never lists its tools", func() error {
		_, err := c.Tools(context.Background())
		return err
	})
	if err == nil {
		t.Fatal("a listing that was never answered succeeded")
	}
}

// A server whose tool list never ends (a next page after every page, new
// tools or none, or pages of huge tools) is refused past keep's bounds on
// a listing: MaxTools tools, MaxMessage bytes in all, and a cursor met
// twice. Before, keep followed it as long as the caller's context let it,
// holding every tool: without a deadline, until memory ran out.
func TestAToolListWithoutEndIsRefused(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"endless", "loop", "fat"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			c := rawTestServer(t, func(cfg *Config) {
				cfg.Env["RAW_LIST"] = mode
				cfg.Timeout = 10 * time.Minute // only the bounds on a listing end it
			})
			err := hangGuard(t, "listing a tool list without end", func() error {
				_, err := c.Tools(context.Background())
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "tool list") {
				t.Fatalf("a tool list without end: %v", err)
			}
		})
	}
}

// An answer keep cannot read because it nests deeper than a JSON reader
// follows fails its call at once, as an oversized one does: the server
// answered, with what keep cannot take (a mutation is uncertain, for its
// reconcile read to settle). Before, frameCap dropped it as a line that is
// no JSON, and the call waited for an answer that had come, until its
// timeout. Valid JSON deeper than the SDK's reader takes (1000 levels,
// where encoding/json takes 10000) is no more readable: frameCap passed it
// on, and the SDK ended the session on it, every call in flight with it,
// and the server started again after a back-off.
func TestADeeplyNestedAnswerFailsItsCallAtOnce(t *testing.T) {
	t.Parallel()
	for _, depth := range []string{"20000", "1200"} {
		t.Run(depth, func(t *testing.T) {
			t.Parallel()
			c := rawTestServer(t, func(cfg *Config) {
				cfg.Reads = []string{"pid"}
				cfg.Env["RAW_DEEP"] = depth
				cfg.Timeout = 10 * time.Minute // only reading the answer ends the call
			})
			pid := pidOf(t, c)
			err := hangGuard(t, "a call answered with a deeply nested result", func() error {
				_, err := c.Do(context.Background(), connectors.Call{Method: "deep", IdempotencyKey: "k"})
				return err
			})
			if connectors.ClassOf(err) != connectors.Uncertain {
				t.Fatalf("a mutation answered with what keep cannot read: %v (%s), want uncertain", err, connectors.ClassOf(err))
			}
			if again := pidOf(t, c); again != pid {
				t.Fatalf("the server was replaced (pid %s, then %s)", pid, again)
			}
		})
	}
}

// Closing the connector cuts off the calls in flight rather than waiting
// for their answers: the SDK's Close waits for every call in flight, so a
// server that never answered held an engine stop, a redeploy or keep
// quitting for up to a call's whole timeout. The mutation cut off is
// uncertain, as the server may have acted on it. (Over HTTP the SDK's
// Close still asks the server to end the session, a DELETE it gives 5 s:
// the bound below leaves room for that, and none for the call's timeout.)
func TestClosingCutsOffACallInFlight(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		begun := make(chan struct{}, 1)
		c := rawTestServer(t, func(cfg *Config) { cfg.Timeout = 10 * time.Minute })
		c.progress = func() {
			select {
			case begun <- struct{}{}:
			default:
			}
		}
		closingCutsOff(t, c, begun)
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		t.Parallel()
		peer, ts := newHTTPPeer(t)
		c, err := New(Config{Name: "svc", URL: ts.URL, Timeout: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		begun := make(chan struct{})
		go func() {
			<-peer.entered
			close(begun)
		}()
		closingCutsOff(t, c, begun)
	})
}

// closingCutsOff calls hang, which the server never answers, closes c once
// begun says the server has the call, and checks that Close and the call
// end long before the call's timeout, the call uncertain.
func closingCutsOff(t *testing.T, c *Connector, begun <-chan struct{}) {
	t.Helper()
	called := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), connectors.Call{Method: "hang", Params: map[string]any{}, IdempotencyKey: "k"})
		called <- err
	}()
	select {
	case <-begun:
	case err := <-called:
		t.Fatalf("the call ended before Close: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server never got the call")
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for a call the server never answers (its timeout is 10 minutes)")
	}
	select {
	case err := <-called:
		if connectors.ClassOf(err) != connectors.Uncertain || !strings.Contains(err.Error(), "keep closed the connection") {
			t.Fatalf("the call Close cut off: %v (%s), want uncertain, saying keep closed the connection", err, connectors.ClassOf(err))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call went on after Close")
	}
}
