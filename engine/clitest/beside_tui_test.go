package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCommandsBesideTheTUI (issue 42): the TUI's engine (Site.Get with
// ForFrontEnd, no daemon) answers on the socket as a daemon's does:
// `keep mcp serve` started beside it serves through it and says so on
// stderr, and `keep workflows`, `keep status` and `keep approve` act
// through it — the approval shows applied on the TUI's own screen.
func TestCommandsBesideTheTUI(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed for the TUI test (apt-get install tmux)")
	}
	dir, err := os.MkdirTemp("", "kbes")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := filepath.Join(dir, "data", "keep.db")
	socket := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	environ := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"), "NO_COLOR=1")
	tm("new-session", "-d", "-s", "keep", "-x", "120", "-y", "40",
		"env HOME="+dir+" XDG_CONFIG_HOME="+filepath.Join(dir, "cfg")+" NO_COLOR=1 "+keepBin+" --db "+db)
	t.Cleanup(func() { exec.Command(tmux, "-S", socket, "kill-server").Run() })
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := tm("capture-pane", "-p", "-t", "keep")
			if strings.Contains(s, what) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the TUI never showed %q:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor(`Note welcome.txt: "Hello from keep!"`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	keep := func(args ...string) result {
		t.Helper()
		cmd := exec.CommandContext(ctx, keepBin, append([]string{"--db", db}, args...)...)
		cmd.Env, cmd.Dir = environ, dir
		r := runCmd(t, cmd)
		if r.code != 0 || strings.Contains(r.stderr, "no keep engine") {
			t.Fatalf("keep %s beside the TUI: %s", strings.Join(args, " "), r)
		}
		return r
	}

	// keep mcp serve, as an assistant starts it
	var serveErr bytes.Buffer
	serve := exec.CommandContext(ctx, keepBin, "--db", db, "mcp", "serve")
	serve.Env, serve.Dir, serve.Stderr = environ, dir, &serveErr
	client := sdk.NewClient(&sdk.Implementation{Name: "assistant", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatalf("keep mcp serve: %v\nstderr: %s", err, serveErr.String())
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "status", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("status through keep mcp serve: %v %+v", err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, `"engine_running": true`) {
		t.Errorf("serve's status beside the TUI: %s", text)
	}
	wf, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "workflows", Arguments: map[string]any{}})
	if err != nil || wf.IsError || !strings.Contains(wf.Content[0].(*sdk.TextContent).Text, `"demo"`) {
		t.Errorf("workflows through keep mcp serve: %v %+v", err, wf)
	}
	cs.Close()
	if !strings.Contains(serveErr.String(), "keep mcp serve: serving "+db+" through the keep engine running it (pid ") {
		t.Errorf("serve's stderr beside the TUI: %q", serveErr.String())
	}

	if r := keep("workflows"); !strings.Contains(r.stdout, "demo") {
		t.Errorf("keep workflows beside the TUI: %s", r)
	}
	keep("status", "demo")
	var ms []struct{ ID, Status string }
	if err := json.Unmarshal([]byte(keep("mutations", "demo", "--json").stdout), &ms); err != nil || len(ms) != 1 {
		t.Fatalf("mutations: %v %+v", err, ms)
	}
	keep("approve", ms[0].ID)
	waitFor("applied")
	if r := keep("mutations", "demo", "--json"); !strings.Contains(r.stdout, `"applied"`) {
		t.Errorf("the approval given beside the TUI: %s", r)
	}
}
