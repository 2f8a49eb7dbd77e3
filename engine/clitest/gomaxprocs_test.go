package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDaemonRunsGoOnOneThread: keep --daemon runs its Go code on one P
// (main.go), as the Go runtime's scheduler trace reports it, unless the
// person set GOMAXPROCS, which it keeps.
func TestDaemonRunsGoOnOneThread(t *testing.T) {
	for _, c := range []struct {
		name, env, want string
	}{
		{"by default", "", "1"},
		{"GOMAXPROCS set", "GOMAXPROCS=3", "3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := daemonProcs(t, c.env); got != c.want {
				t.Errorf("the daemon ran Go on %s Ps, want %s", got, c.want)
			}
		})
	}
}

// schedLine is one line of GODEBUG=schedtrace's report.
var schedLine = regexp.MustCompile(`(?m)^SCHED \d+ms: gomaxprocs=(\d+)`)

// daemonProcs starts a daemon with the runtime's scheduler trace on (and
// env, if any), lets it answer on its socket and run a while, stops it,
// and returns the GOMAXPROCS of the trace's last report. No workflow is
// deployed, so no worker writes reports beside the daemon's.
func daemonProcs(t *testing.T, env string) string {
	e := newEnv(t, "allow")
	stderr, err := os.Create(filepath.Join(e.dir, "daemon.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	d := startDaemonAs(t, e, func(cmd *exec.Cmd) {
		var environ []string
		for _, kv := range cmd.Env {
			if !strings.HasPrefix(kv, "GOMAXPROCS=") && !strings.HasPrefix(kv, "GODEBUG=") {
				environ = append(environ, kv)
			}
		}
		cmd.Env = append(environ, "GODEBUG=schedtrace=20")
		if env != "" {
			cmd.Env = append(cmd.Env, env)
		}
		cmd.Stderr = stderr
	})
	awaitSocket(t, e, d, 30*time.Second)
	time.Sleep(200 * time.Millisecond) // reports of the running daemon, after its start
	d.stop(t)
	out, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	m := schedLine.FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		t.Fatalf("no scheduler trace in the daemon's stderr:\n%s", out)
	}
	return m[len(m)-1][1]
}
