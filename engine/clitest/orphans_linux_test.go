package clitest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
)

// workersOf lists the live sandbox workers whose parent is pid, by their
// environment's marker (sandbox/worker.go's KEEP_SANDBOX_WORKER).
func workersOf(pid int) []int {
	var out []int
	for _, child := range childrenOf(pid) {
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/environ"); err == nil && bytes.Contains(env, []byte("KEEP_SANDBOX_WORKER=")) {
			out = append(out, child)
		}
	}
	return out
}

// alive says whether pid is a process that has not exited (a zombie no
// reaper has collected yet has exited).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// A worker spinning in a loop that never reaches an interrupt check dies
// with keep: the red team SIGKILLed keep and found its workers burning CPU
// as orphans.
func TestWorkersDieWithKeep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a real daemon")
	}
	e := newEnv(t, "allow")
	e.writeConfig(`[policy]
min_producer_interval = "1s"
handler_timeout = "1h"
`)
	wf := e.file(e.dir, "spin.js", `export default Keep.workflow({
  name: "spin",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1s" }, handler: async (ctx) => { for (;;) {} } } },
  consumers: {},
});
`)
	e.ok("deploy", wf)
	d := startDaemon(t, e)
	defer func() { _ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL); d.kill(t) }() // whatever is left
	awaitSocket(t, e, d, 30*time.Second)
	pid := d.cmd.Process.Pid
	var workers []int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		running := false
		for _, r := range jsonOf[[]api.RunView](e, "runs", "spin") {
			running = running || r.Handler == "p" && r.Status == engine.RunActive
		}
		if workers = workersOf(pid); running && len(workers) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the producer never ran in a worker (workers %v)", workers)
		}
	}
	// keep alone, not its process group: nothing but keep's death may end
	// the workers
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.exited <- <-d.exited // reaped; the deferred kill sees it exited
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var left []int
		for _, w := range workers {
			if alive(w) {
				left = append(left, w)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers %v outlived keep (pid %d) by 30 s", left, pid)
		}
	}
}
