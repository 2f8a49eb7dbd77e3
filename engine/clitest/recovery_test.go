package clitest

import (
	"testing"

	"keep/engine"
)

// sleeperWorkflow's one consumer has nothing to read and asks to be woken
// far ahead (clamped to now + max_wake); nothing else is ever due.
const sleeperWorkflow = `
export default Keep.workflow({
  name: "sleeper",
  topics: { t: {} },
  consumers: {
    nap: Keep.consumer({
      subscribe: ["t"],
      async prepare() { return { reservations: [], data: {}, wakeAt: "2099-01-01T00:00:00Z" }; },
      async mutate() {},
      async next() {},
    }),
  },
});
`

// TestDrainTwice: chapter 16 "Restart Recovery" seen from the CLI, where
// every command is a restart. The consumer runs once after its deploy; a
// second drain finds its wakeAt ahead and nothing pending, and runs nothing.
func TestDrainTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	e.ok("deploy", e.file(e.dir, "sleeper.js", sleeperWorkflow))
	e.ok("drain")
	runs := jsonOf[[]engine.RunView](e, "runs", "sleeper")
	if len(runs) != 1 || runs[0].Status != engine.RunCommitted {
		t.Fatalf("after deploy and a drain: runs %+v, want one committed", runs)
	}
	e.ok("drain")
	e.ok("drain")
	if again := jsonOf[[]engine.RunView](e, "runs", "sleeper"); len(again) != 1 {
		t.Fatalf("two more drains with the wakeAt ahead ran the consumer again: %d runs", len(again))
	}
	st := jsonOf[engine.WorkflowDetail](e, "status", "sleeper")
	var woke bool
	for _, h := range st.Handlers {
		woke = woke || (h.Name == "nap" && h.WakeAt != nil)
	}
	if !woke {
		t.Fatalf("status shows no persisted wakeAt for nap: %+v", st.Handlers)
	}
}
