package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tmuxServer gives a test a tmux server of its own to run the real program
// in a terminal: tm runs a tmux command on it, killServer ends it, self is
// this test binary. Without tmux the test is skipped; with it, it runs in
// parallel. prefix names the server's folder, kept short: tmux limits a
// socket's path.
func tmuxServer(t *testing.T, prefix string) (tm func(args ...string) string, killServer func(), self string) {
	t.Helper()
	tmuxBin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is needed to give the TUI a terminal")
	}
	t.Parallel()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "tmux.sock")
	tm = func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmuxBin, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	killServer = func() { exec.Command(tmuxBin, "-S", sock, "kill-server").Run() }
	if self, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	return tm, killServer, self
}
