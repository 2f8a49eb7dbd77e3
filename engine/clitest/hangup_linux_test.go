package clitest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestTheTUIEndsWhenItsTerminalHangsUp: a TUI whose terminal goes away
// (its tmux killed, an ssh session dropped) ends and stops its engine, as
// when the person quits, instead of running on, orphaned, holding the
// database for nobody. SIGHUP reads the config again only in a daemon.
func TestTheTUIEndsWhenItsTerminalHangsUp(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "keep.db")
	s := startTUI(t, 120, 40, "env HOME="+dir+" XDG_CONFIG_HOME="+filepath.Join(dir, "cfg")+" NO_COLOR=1 "+keepBin+" --db "+db)
	s.waitFor("Hello from keep!", false)
	pid := processWith(t, "--db\x00"+db)
	if pid == 0 {
		t.Fatal("no keep process runs on " + db)
	}

	s.run("kill-server") // the terminal hangs up
	for deadline := time.Now().Add(time.Minute); alive(pid); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			killProcess(pid)
			t.Fatalf("keep (pid %d) still runs a minute after its terminal hung up", pid)
		}
	}
}

// processWith is the pid of the process whose command line holds arg
// (arguments joined by NUL), or 0.
func processWith(t *testing.T, arg string) int {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte(arg)) || !bytes.HasPrefix(data, []byte(keepBin)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			return pid
		}
	}
	return 0
}

func killProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
