package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestIdleWorkersRetire: a worker left unused in the pool for its idle
// time is let go and exits; one given back later stays until its own time
// is up; nothing stays armed once the pool is empty.
func TestIdleWorkersRetire(t *testing.T) {
	t.Parallel()
	p := &procPool{idle: map[uint64][]*worker{}, idleFor: time.Second}
	limit := DefaultLimits().MaxMemory
	first, err := startWorker(limit)
	if err != nil {
		t.Fatal(err)
	}
	second, err := startWorker(limit)
	if err != nil {
		t.Fatal(err)
	}
	p.put(first)
	time.Sleep(500 * time.Millisecond)
	p.put(second)
	exits := func(w *worker, name string, within time.Duration) {
		t.Helper()
		select {
		case <-w.exited:
		case <-time.After(within):
			t.Fatalf("the %s worker still runs %s after it was due to be let go", name, within)
		}
	}
	exits(first, "first", 3*time.Second)
	p.mu.Lock()
	if list := p.idle[limit]; len(list) != 1 || list[0] != second {
		t.Errorf("%d workers idle after the first was let go, want the second alone", len(list))
	}
	p.mu.Unlock()
	exits(second, "second", 3*time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle[limit]); n != 0 || p.retire != nil {
		t.Errorf("after both were let go: %d idle, timer armed %v; want none", n, p.retire != nil)
	}
}

// TestLoadWorkersRetireSooner: a worker that loads files leaves the pool
// after its own short idle time, while a run's worker parked before it
// stays for the longer one: runs never take a load's worker, so one kept
// after a deploy would idle beside those running the workflow.
func TestLoadWorkersRetireSooner(t *testing.T) {
	t.Parallel()
	p := &procPool{idle: map[uint64][]*worker{}, idleFor: time.Minute, loadIdleFor: 100 * time.Millisecond}
	limit := DefaultLimits().MaxMemory
	run, err := startWorker(limit)
	if err != nil {
		t.Fatal(err)
	}
	load, err := startWorker(loadMemory)
	if err != nil {
		t.Fatal(err)
	}
	p.put(run) // arms the pool's timer for a minute from now
	p.put(load)
	select {
	case <-load.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the load's worker still runs 5 s after its idle time was up")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if list := p.idle[limit]; len(list) != 1 || list[0] != run {
		t.Errorf("%d run workers idle, want the one parked", len(list))
	}
	if n := len(p.idle[loadMemory]); n != 0 {
		t.Errorf("%d load workers idle, want none", n)
	}
	if p.retire == nil {
		t.Error("no timer armed for the run's worker")
	}
	run.kill()
}

// TestWarmStartsWhatIsMissing: Warm starts workers until n are idle or
// starting, counting those it is still starting, so that asking again
// meanwhile starts none more; what it started is parked in the pool.
func TestWarmStartsWhatIsMissing(t *testing.T) {
	t.Parallel()
	p := &procPool{idle: map[uint64][]*worker{}, idleFor: time.Minute}
	limit := DefaultLimits().MaxMemory
	first, err := startWorker(limit)
	if err != nil {
		t.Fatal(err)
	}
	p.put(first)
	p.warm(limit, 3)
	p.warm(limit, 3)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		idle, warming := len(p.idle[limit]), p.warming[limit]
		p.mu.Unlock()
		if warming == 0 {
			if idle != 3 {
				t.Fatalf("%d workers idle once warm was done, want 3", idle)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still warming %d workers after 10 s", warming)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.warm(limit, 2)
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.warming[limit]; n != 0 {
		t.Errorf("warm started %d with 3 idle and 2 asked for", n)
	}
	for _, w := range p.idle[limit] {
		w.release()
	}
}

// A worker is the process scripts run in: it is not given keep's
// environment, where credentials live (password_env, token_env, the env
// of an MCP server), only the few variables the runtime reads.
func TestWorkersDoNotInheritKeepsEnvironment(t *testing.T) {
	t.Setenv("KEEP_MAIL_PASSWORD", "hunter2-in-the-environment")
	t.Setenv("TZ", "Europe/Berlin")
	w, err := startWorker(DefaultLimits().MaxMemory)
	if err != nil {
		t.Fatal(err)
	}
	defer w.kill()
	// The process is started once its exec is past the point of no
	// return, which is before the kernel has set out the new environment:
	// read then, environ is empty for a moment.
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); len(b) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", w.cmd.Process.Pid)); err != nil {
			t.Skipf("no /proc here: %v", err)
		}
	}
	env := strings.Split(string(b), "\x00")
	if slices.ContainsFunc(env, func(kv string) bool { return strings.Contains(kv, "hunter2") }) {
		t.Errorf("the worker's environment holds the host's secret: %q", env)
	}
	if !slices.Contains(env, "TZ=Europe/Berlin") {
		t.Errorf("the worker's environment lost TZ, which a script's Date reads: %q", env)
	}
	// and it still works
	if _, err := Load("t.js", []byte(handlers{}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute}); err != nil {
		t.Errorf("load in a worker: %v", err)
	}
}
