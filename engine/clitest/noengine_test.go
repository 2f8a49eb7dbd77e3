package clitest

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/enginetest/kit"
)

// TestNoEngineSaysSo: with no daemon and no TUI, the commands whose effect
// waits for an engine say that nothing runs and how to start one; through a
// daemon they do not.
func TestNoEngineSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	wf := e.file(e.dir, "lines.js", filesWorkflow)

	says := func(r result) bool {
		return strings.Contains(r.stderr, "no keep engine is running on "+e.db) &&
			strings.Contains(r.stderr, "keep --daemon") && strings.Contains(r.stderr, "keep service install")
	}
	cmds := [][]string{{"deploy", wf}, {"workflows"}, {"status", "lines"}, {"run-now", "lines"}}
	for _, args := range cmds {
		r := e.ok(args...)
		if !says(r) {
			t.Errorf("keep %s with no engine running does not say so: %s", strings.Join(args, " "), r)
		}
	}
	r := e.ok("deploy", wf)
	if !strings.Contains(r.stderr, "lines is stored and will run when one starts") {
		t.Errorf("deploy with no engine running does not say the workflow waits for one: %s", r)
	}
	// resume (and retry) only let the workflow run: with no engine, it
	// does not, and said nothing of it
	e.ok("pause", "lines")
	if r := e.ok("resume", "lines"); !says(r) || !strings.Contains(r.stderr, "the workflow runs when one starts") {
		t.Errorf("resume with no engine running does not say the workflow waits for one: %s", r)
	}
	// the note goes to stderr: --json output stays one JSON value
	for _, args := range [][]string{{"deploy", wf, "--json"}, {"workflows", "--json"}, {"status", "lines", "--json"}} {
		r := e.ok(args...)
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || !says(r) {
			t.Errorf("keep %s: stdout is not JSON (%v) or the note is missing: %s", strings.Join(args, " "), err, r)
		}
	}

	d := startDaemon(t, e)
	awaitSocket(t, e, d, time.Minute)
	for _, args := range cmds {
		if args[0] == "run-now" {
			continue // refused while the daemon's run of it is active
		}
		r := e.ok(args...)
		if strings.Contains(r.stderr, "no keep engine") {
			t.Errorf("keep %s through a daemon says no engine runs: %s", strings.Join(args, " "), r)
		}
	}
	e.ok("pause", "lines")
	if r := e.ok("resume", "lines"); strings.Contains(r.stderr, "no keep engine") {
		t.Errorf("resume through a daemon says no engine runs: %s", r)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := kit.Wait(t, d.exited, kit.Timeout); err != nil {
		t.Errorf("daemon exit after SIGTERM: %v\nstderr: %s", err, d.errb.String())
	}
}
