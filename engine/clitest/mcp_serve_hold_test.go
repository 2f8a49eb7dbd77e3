package clitest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"keep/engine/daemon"
	"keep/engine/enginetest/kit"
)

// keep mcp serve with no engine running said "proposals you accept
// deploy when one starts: keep --daemon", yet held the database for as
// long as the assistant kept it open (a desktop client: all day): keep
// --daemon waited for it without end, and keep workflows, attention and
// approve were refused, "held by another keep engine". It gets hold of
// the database for each call only, so the person's keep goes on beside
// it, and it serves through the daemon once one starts.
func TestMCPServeDoesNotHoldTheDatabaseBetweenCalls(t *testing.T) {
	e := newEnv(t, "ask")
	wf := e.file(e.dir, "notes.js", mcpHoldNotes)
	e.ok("deploy", wf)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var serveErr bytes.Buffer
	serve := e.command(ctx, "mcp", "serve")
	serve.Stderr = &serveErr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "assistant", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatalf("keep mcp serve: %v\nstderr: %s", err, serveErr.String())
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("%s through keep mcp serve: %v %+v", tool, err, res)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if res.IsError {
			t.Fatalf("%s through keep mcp serve: %s", tool, text)
		}
		return text
	}
	if text := call("status", map[string]any{}); !strings.Contains(text, `"engine_running": false`) {
		t.Fatalf("status with no engine: %s", text)
	}
	if text := call("workflows", nil); !strings.Contains(text, `"notes"`) {
		t.Fatalf("workflows: %s", text)
	}

	// the person's own keep, beside the assistant's
	if r := e.keep("workflows"); r.code != 0 || !strings.Contains(r.stdout, "notes") {
		t.Fatalf("keep workflows beside keep mcp serve: %s", r)
	}

	d := e.command(ctx, "--daemon")
	var derr bytes.Buffer
	d.Stderr = &derr
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	defer func() {
		_ = d.Process.Signal(syscall.SIGTERM)
		kit.Wait(t, exited, kit.Timeout)
	}()
	sock := daemon.SocketPath(e.db)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the daemon exited: %v\nstderr: %s", err, derr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never started beside keep mcp serve (no socket after 30s); stderr: %s", derr.String())
		}
	}

	// the same server now serves through the daemon, and what it proposes
	// waits there for the person
	if text := call("status", map[string]any{}); !strings.Contains(text, `"engine_running": true`) {
		t.Errorf("status once the daemon runs: %s", text)
	}
	if text := call("propose", map[string]any{"file_name": "notes.js", "source": strings.Replace(mcpHoldNotes, `"hi"`, `"hello"`, 1),
		"reason": "say hello"}); !strings.Contains(text, `"id": "p`) {
		t.Fatalf("propose: %s", text)
	}
	if r := e.keep("attention"); r.code != 0 || !strings.Contains(r.stdout, "say hello") {
		t.Errorf("the proposal is not in the daemon's attention: %s", r)
	}
}

const mcpHoldNotes = `export default Keep.workflow({
  name: "notes",
  topics: { note: {} },
  producers: { scan: { publishes: ["note"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "files", type: "file", id: "a", title: "Note a" });
    await ctx.publish("note", { messageId: "a", inputId, payload: { text: "hi" } });
  } } },
  consumers: { file: Keep.consumer({
    subscribe: ["note"],
    async prepare(ctx) {
      const [e] = await ctx.peek("note", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "note", ids: [e.messageId] }], data: { text: e.payload.text }, ui: { title: "File a note" } };
    },
    async mutate(ctx, p) { await ctx.files.append({ path: "notes.txt", content: p.data.text + "\n" }); },
    async next() {},
  }) },
});
`
