package engine

import (
	"strings"
	"testing"
	"time"
)

// TestRescanKnownInputs: a producer that scans the same items again
// registers the inputs it already has (no new rows) and publishes under
// them, while an inputId of another workflow's input is still refused, also
// when that input is known to the run under a key of this workflow.
func TestRescanKnownInputs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	scan := `export default Keep.workflow({
  name: "NAME", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ["a", "b", "c"]) {
      const inputId = ctx.registerInput({ source: "system", type: "schedule", id, title: "Item " + id });
      await ctx.publish("t", { messageId: id, inputId: FOREIGN ?? inputId, payload: {} });
    }
  } } },
  consumers: {},
});`
	b.deploy("scan", strings.NewReplacer("NAME", "scan", "FOREIGN", "null").Replace(scan))
	b.drain()
	first := b.inputs("scan")
	b.clock.Advance(5 * time.Minute)
	b.drain()
	again := b.inputs("scan")
	if len(first) != 3 || len(again) != 3 {
		t.Fatalf("inputs = %d then %d, want 3 and 3", len(first), len(again))
	}
	ids := map[string]bool{}
	for _, in := range first {
		ids[in.InputID] = true
	}
	for _, ev := range b.events("scan", "t") {
		if len(ev.CausedBy) != 1 || !ids[ev.CausedBy[0]] {
			t.Errorf("event %s caused by %v, want one of the first scan's inputs", ev.MessageID, ev.CausedBy)
		}
	}
	if runs := b.runs("scan"); len(runs) != 2 || runs[0].Status != "committed" || runs[1].Status != "committed" {
		t.Fatalf("runs = %+v, want two committed scans", runs)
	}

	// the same keys in another workflow are its own inputs: publishing
	// under the first workflow's id is refused
	b.deploy("other", strings.NewReplacer("NAME", "other", "FOREIGN", `"`+first[0].InputID+`"`).Replace(scan))
	b.drain()
	runs := b.runs("other")
	if len(runs) != 1 || runs[0].Status != "failed:logic" || !strings.Contains(runs[0].Error, "not an input registered by this workflow") {
		t.Fatalf("runs of other = %+v, want one failed:logic refusing the foreign inputId", runs)
	}
}
