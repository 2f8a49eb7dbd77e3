package clitest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/daemon"
)

// TestConfigReachesTheRunningDaemon: the daemon reloads its config when the
// file changes (and on SIGHUP), says which keys changed in its log and to
// its clients, refuses a broken file and keeps running on the old one;
// keep validate warns when the running engine's config is not the file it
// read.
func TestConfigReachesTheRunningDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	base, _ := os.ReadFile(e.config)
	wf := e.file(e.dir, "lines.js", filesWorkflow)
	d := startDaemon(t, e)
	defer d.kill(t)
	awaitSocket(t, e, d, 30*time.Second)
	info := func() api.Info {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if c, err := daemon.Dial(daemon.SocketPath(e.db)); err == nil {
				defer c.Close()
				return c.Info()
			}
			if time.Now().After(deadline) {
				t.Fatal("the daemon stopped answering")
			}
		}
	}
	logText := func() string {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(e.db), "keep.log"))
		return string(b)
	}
	awaitLog := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !strings.Contains(logText(), want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("keep.log never said %q:\n%s", want, logText())
			}
		}
	}
	first := info()
	if first.Config == "" {
		t.Fatalf("info %+v names no config", first)
	}

	if r := e.ok("validate", wf); strings.Contains(r.stderr, "another config") {
		t.Fatalf("validate with the daemon's own config warns: %s", r)
	}
	other := filepath.Join(e.dir, "other.toml")
	changed := strings.Replace(string(base), "[policy]\n", "[policy]\ncrash_limit = 9\n", 1)
	if err := os.WriteFile(other, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.ok("validate", wf, "--config", other); !strings.Contains(r.stderr, "runs on another config") {
		t.Fatalf("validate with another config than the daemon's does not warn: %s", r)
	}

	// a broken file is refused; the daemon runs on as it was
	e.writeConfig(string(base) + "\n[policy\n")
	awaitLog("config refused; the running config is kept")
	if got := info(); got.PID != first.PID || got.Config != first.Config {
		t.Fatalf("after a broken config: %+v, want %+v", got, first)
	}

	// the file back as it was: read again, nothing changed; SIGHUP reads
	// it again too
	e.writeConfig(string(base))
	awaitLog("config read again: nothing changed")
	if err := syscall.Kill(first.PID, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); strings.Count(logText(), "config read again: nothing changed") < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not read the config again:\n%s", logText())
		}
	}

	// a real change: said key by key, and the engine runs on it
	e.writeConfig(changed)
	awaitLog("config reloaded: policy.crash_limit changed")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if got := info(); got.Config != first.Config {
			if got.PID != first.PID {
				t.Fatalf("the daemon's pid changed (%d → %d): it should start again in place", first.PID, got.PID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon does not run on the new config")
		}
	}
	if r := e.ok("validate", wf); strings.Contains(r.stderr, "another config") {
		t.Fatalf("validate after the reload warns: %s", r)
	}
}
