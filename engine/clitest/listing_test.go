package clitest

import (
	"testing"
)

// TestListingsAreWhole: a listing prints every item, across the engine's
// pages, unless --limit asks for fewer.
func TestListingsAreWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	wf := e.file(e.dir, "many.js", `export default Keep.workflow({ name: "many", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (let i = 0; i < 1234; i++) {
      const inputId = ctx.registerInput({ source: "system", type: "schedule", id: "n" + i, title: "Tick " + i });
      await ctx.publish("t", { messageId: "m" + i, inputId, payload: { i } });
    }
  } } }, consumers: {} });`)
	e.ok("deploy", wf)
	e.ok("drain")
	type item struct {
		ID      string `json:"id"`
		InputID string `json:"input_id"`
	}
	if got := jsonOf[[]item](e, "inputs", "many", "--json"); len(got) != 1234 {
		t.Fatalf("inputs --json listed %d of 1234", len(got))
	}
	if got := jsonOf[[]item](e, "events", "many", "--json"); len(got) != 1234 {
		t.Fatalf("events --json listed %d of 1234", len(got))
	}
	got := jsonOf[[]item](e, "inputs", "many", "--limit", "10", "--json")
	if len(got) != 10 || got[0].InputID != "1234" {
		t.Fatalf("inputs --limit 10 = %+v, want the 10 newest", got)
	}
	if got := jsonOf[[]item](e, "runs", "many", "--limit", "1", "--json"); len(got) != 1 {
		t.Fatalf("runs --limit 1 listed %d", len(got))
	}
}
