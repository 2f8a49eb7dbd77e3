package enginetest_test

import (
	"testing"
	"time"

	"keep/engine/config"
	"keep/engine/enginetest"
)

// tick is a producer due every 5 minutes that records each run as an input.
const tick = `
export default Keep.workflow({
  name: "tick",
  topics: { t: {} },
  producers: { every: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = String((await ctx.system.now()).unix);
    const inputId = ctx.registerInput({ source: "files", type: "file", id, title: "Tick " + id });
    await ctx.publish("t", { messageId: id, inputId, payload: {} });
  } } },
});`

func TestHost(t *testing.T) {
	h := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){enginetest.AllowMutations}})
	h.Deploy("tick", []byte(tick))
	h.Drain()
	if n := len(h.Runs("tick")); n != 1 {
		t.Fatalf("%d runs after the first drain, want 1", n)
	}
	h.Drain()
	if n := len(h.Runs("tick")); n != 1 {
		t.Fatalf("%d runs on the same clock, want 1: nothing was due", n)
	}
	h.Reopen()
	if n := len(h.Inputs("tick")); n != 1 {
		t.Fatalf("%d inputs after a reopen, want the 1 the ledger kept", n)
	}
	// 12 minutes: due at +5 and +10
	h.DrainUntilQuiet(12 * time.Minute)
	if n := len(h.Runs("tick")); n != 3 {
		t.Fatalf("%d runs after 12 minutes, want 3", n)
	}
	if got := h.Clock.Now(); !got.Equal(enginetest.Start.Add(10 * time.Minute)) {
		t.Fatalf("clock at %s, want the last due time %s", got, enginetest.Start.Add(10*time.Minute))
	}
	h.Healthy("tick")
	h.Write("a/b.txt", "x")
	if h.Read("a/b.txt") != "x" || h.Read("missing") != "" {
		t.Fatal("write/read under the root disagree")
	}
}
