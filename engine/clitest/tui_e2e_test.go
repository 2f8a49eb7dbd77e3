package clitest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUIEndToEnd drives the real binary in tmux, as a person would: a
// fresh database deploys the demo, its first note waits for approval, the
// key a on the first screen approves it (no need to move to Attention
// first), and `keep mutations --json` shows it applied.
func TestTUIEndToEnd(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed for the end-to-end TUI test (apt-get install tmux)")
	}
	dir, err := os.MkdirTemp("", "ktui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := filepath.Join(dir, "data", "keep.db")
	socket := filepath.Join(dir, "tmux.sock")
	session := "keep"
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	env := "HOME=" + dir + " XDG_CONFIG_HOME=" + filepath.Join(dir, "cfg") + " NO_COLOR=1"
	tm("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "env "+env+" "+keepBin+" --db "+db)
	t.Cleanup(func() { exec.Command(tmux, "-S", socket, "kill-server").Run() })

	screen := func() string { return tm("capture-pane", "-p", "-t", session) }
	waitFor := func(what string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, what) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("APPROVAL")
	waitFor(`Note welcome.txt: "Hello from keep!"`)
	// The first screen has the focus on Workflows and the approval in
	// Attention below: the help bar offers its key, and the key works there.
	waitFor("a approve")
	tm("send-keys", "-t", session, "a")
	waitFor("applied")
	tm("send-keys", "-t", session, "q")
	// the TUI has let go of the database once its pane is gone
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command(tmux, "-S", socket, "has-session", "-t", session).Run() == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, keepBin, "--db", db, "mutations", "demo", "--json")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("keep mutations: %v", err)
	}
	var ms []struct {
		Status, Method string
	}
	if err := json.Unmarshal(out, &ms); err != nil {
		t.Fatalf("mutations --json: %v\n%s", err, out)
	}
	if len(ms) != 1 || ms[0].Status != "applied" || ms[0].Method != "write" {
		t.Fatalf("mutations = %+v, want the demo's write applied", ms)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "demo", "done", "welcome.txt")); err != nil {
		t.Fatalf("the approved summary was not written: %v", err)
	}
}
