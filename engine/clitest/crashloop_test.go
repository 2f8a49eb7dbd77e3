package clitest

import (
	"strings"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
)

// A producer whose run never finishes because keep dies under it (a
// SIGKILL while it spins: a laptop that sleeps, a service restart) runs
// again after each start, however often: keep stopping under a run is not
// the script's fault, so crash_limit, which counts only runs whose own
// worker died, never blocks it.
func TestKeepStoppingIsNoCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a real daemon four times")
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
		for _, r := range jsonOf[[]api.RunView](e, "runs", "spin") {
			if r.Handler == "p" && r.Status == engine.RunActive {
				return true
			}
		}
		return false
	}
	for i := 1; i <= 4; i++ {
		d := startDaemon(t, e)
		awaitSocket(t, e, d, 30*time.Second)
		deadline := time.Now().Add(30 * time.Second)
		for !producerRunning() {
			if time.Now().After(deadline) {
				items := jsonOf[[]api.AttentionItem](e, "attention")
				d.kill(t)
				t.Fatalf("start %d: the producer never ran again (attention %+v)", i, items)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if running, err := d.kill(t); !running {
			t.Fatalf("start %d: the daemon exited by itself: %v", i, err)
		}
	}
	crashed := 0
	for _, r := range jsonOf[[]api.RunView](e, "runs", "spin") {
		if r.Status == engine.RunCrashed {
			crashed++
		}
	}
	if crashed < 3 {
		t.Fatalf("crashed runs = %d, want the three keep stopped under and recovered", crashed)
	}
	for _, it := range jsonOf[[]api.AttentionItem](e, "attention") {
		if it.Workflow == "spin" && strings.Contains(it.Reason, "fix the script") {
			t.Fatalf("attention %+v: keep's own kills were blamed on the script", it)
		}
	}
}
