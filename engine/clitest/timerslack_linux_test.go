package clitest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"keep/sandbox"
)

// TestDaemonRunsWithTimerSlack: keep --daemon, started by a process with
// the kernel's default timer slack, runs every thread with keep's, the Go
// runtime's monitor among them (sandbox/timerslack_linux.go), under its
// own pid: it answers on its socket.
func TestDaemonRunsWithTimerSlack(t *testing.T) {
	e := newEnv(t, "allow")
	d := startDaemon(t, e)
	defer d.stop(t)
	awaitSocket(t, e, d, 30*time.Second)
	pid := strconv.Itoa(d.cmd.Process.Pid)
	ents, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		b, err := os.ReadFile("/proc/" + ent.Name() + "/timerslack_ns")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n < sandbox.TimerSlack {
			t.Errorf("daemon %s thread %s runs with a timer slack of %d ns, want %d", pid, ent.Name(), n, sandbox.TimerSlack)
		}
	}
}
