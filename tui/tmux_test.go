package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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

// tuiInTmux starts this test binary again, as the program under test, in a
// tmux session "s" of w×h: env=1 tells it that it is the child, and the
// test's own name runs it (it must be a top-level test). waitFor polls the
// screen until it shows want and returns it; its deadline is only against
// a hang, nothing is measured.
func tuiInTmux(t *testing.T, prefix, env string, w, h int) (tm func(args ...string) string, waitFor func(want string) string) {
	t.Helper()
	tm, killServer, self := tmuxServer(t, prefix)
	tm("new-session", "-d", "-s", "s", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"sh -c 'exec env "+env+"=1 "+self+" -test.run=^"+t.Name()+"$'; echo ENDED $?; sleep 600")
	t.Cleanup(killServer)
	waitFor = func(want string) string {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; {
			sc := tm("capture-pane", "-p", "-t", "s")
			if strings.Contains(sc, want) {
				return sc
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", want, sc)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return tm, waitFor
}
