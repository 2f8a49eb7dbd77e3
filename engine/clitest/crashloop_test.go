package clitest

import (
	"strings"
	"testing"
	"time"

	"keep/engine"
)

// A producer whose run never finishes because keep dies under it (here: a
// SIGKILL while it spins, as a handler that takes the process down would
// look from the next start) runs again after each start, but not forever:
// the third time it is found running, its workflow is blocked and waits in
// Attention, and nothing runs it again until the user retries.
func TestCrashLoopBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a real daemon three times")
	}
	e := newEnv(t, "allow")
	e.writeConfig(`[policy]
min_producer_interval = "1s"
handler_timeout = "1h"
crash_limit = 3
`)
	wf := e.file(e.dir, "spin.js", `export default Keep.workflow({
  name: "spin",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1s" }, handler: async (ctx) => { for (;;) {} } } },
  consumers: {},
});
`)
	e.ok("deploy", wf)
	producerRunning := func() bool {
		for _, r := range jsonOf[[]engine.RunView](e, "runs", "spin") {
			if r.Handler == "p" && r.Status == engine.RunActive {
				return true
			}
		}
		return false
	}
	for i := 1; i <= 3; i++ {
		d := startDaemon(t, e)
		awaitSocket(t, e, d, 30*time.Second)
		deadline := time.Now().Add(30 * time.Second)
		for !producerRunning() {
			if time.Now().After(deadline) {
				d.kill(t)
				t.Fatalf("start %d: the producer never started running", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if running, err := d.kill(t); !running {
			t.Fatalf("start %d: the daemon exited by itself: %v", i, err)
		}
	}
	// the next start finds the third crashed run: blocked, not run again
	d := startDaemon(t, e)
	awaitSocket(t, e, d, 30*time.Second)
	defer d.kill(t)
	items := jsonOf[[]engine.AttentionItem](e, "attention")
	var found *engine.AttentionItem
	for i := range items {
		if items[i].Workflow == "spin" {
			found = &items[i]
		}
	}
	if found == nil || !strings.Contains(found.Reason, "producer p was running the last 3 times") {
		t.Fatalf("attention = %+v, want spin blocked naming the producer and its crashes", items)
	}
	time.Sleep(1500 * time.Millisecond) // past the producer's next due time
	if producerRunning() {
		t.Fatal("a blocked workflow's producer ran again")
	}
	crashed := 0
	for _, r := range jsonOf[[]engine.RunView](e, "runs", "spin") {
		if r.Status == engine.RunCrashed {
			crashed++
		}
	}
	if crashed != 3 {
		t.Fatalf("crashed runs = %d, want 3", crashed)
	}
}
