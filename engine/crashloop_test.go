package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
)

const spinWorkflow = `export default Keep.workflow({
  name: "spin",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => { for (;;) {} } } },
  consumers: {},
});`

// killWorkers kills this process's children: the script workers (an idle
// one dies too, and the pool starts another).
func killWorkers(t *testing.T) int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self, n := os.Getpid(), 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

// TestCrashLoopCountsWorkerDeaths: a run whose own worker dies is tried
// again after a back-off; crash_limit deaths in a row block the workflow
// as the script's to fix. (Not parallel: it kills this process's workers.)
func TestCrashLoopCountsWorkerDeaths(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("finds workers through /proc")
	}
	b := setup(t, func(c *config.Config) {
		c.Policy.CrashLimit = 2
		c.Policy.HandlerTimeout = config.Duration{Duration: time.Hour}
	})
	b.deploy("spin", spinWorkflow)
	dieOnce := func() {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- b.e.Drain(context.Background()) }()
		// kill until the run ends: a worker killed before the run's own
		// started (an idle one) changes nothing
		for deadline := time.Now().Add(time.Minute); ; {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				return
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("the run did not end when its worker died")
			}
			for _, r := range b.runs("spin") {
				if r.Status == RunActive {
					killWorkers(t)
					break
				}
			}
		}
	}
	dieOnce()
	w := b.workflow("spin")
	if w.Block == nil || w.Block.Kind != BlockTransient || w.State == api.StateNeedsAttention {
		t.Fatalf("after one death: block %+v, state %s; want a back-off, tried again", w.Block, w.State)
	}
	b.clock.Advance(time.Hour)
	dieOnce()
	w = b.workflow("spin")
	if w.State != api.StateNeedsAttention || w.Block == nil || !strings.Contains(w.Block.Reason, "its worker died the last 2 times") {
		t.Fatalf("after two deaths in a row: block %+v, state %s; want the script's to fix", w.Block, w.State)
	}
}
