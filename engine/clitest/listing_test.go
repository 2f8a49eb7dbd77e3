package clitest

import (
	"strings"
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

// TestEventsOfAnUnknownTopic: --topic naming a topic the workflow never had
// is an error naming it and the workflow's topics, not an empty list; a
// topic an older version declared still lists (its events outlive it).
func TestEventsOfAnUnknownTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "allow")
	version := func(topics string) string {
		return `export default Keep.workflow({ name: "topical", topics: { ` + topics + ` },
  producers: { p: { publishes: ["a"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "system", type: "schedule", id: "n", title: "Tick" });
    await ctx.publish("a", { messageId: "m", inputId, payload: {} });
  } } }, consumers: {} });`
	}
	e.ok("deploy", e.file(e.dir, "v1.js", version(`a: {}, gone: {}`)))
	e.ok("drain")
	e.ok("deploy", e.file(e.dir, "v2.js", version(`a: {}`)))

	for _, args := range [][]string{{"events", "topical", "--topic", "NOPE"}, {"events", "topical", "--topic", "NOPE", "--json"}} {
		r := e.expect(1, args...)
		if !strings.Contains(r.stderr, `no topic "NOPE"`) || !strings.Contains(r.stderr, "its topics: a, gone") {
			t.Errorf("keep %s: the error names neither the topic nor the workflow's topics: %s", strings.Join(args, " "), r)
		}
		if r.stdout != "" {
			t.Errorf("keep %s printed a listing: %q", strings.Join(args, " "), r.stdout)
		}
	}
	if got := jsonOf[[]struct {
		Topic string `json:"topic"`
	}](e, "events", "topical", "--topic", "a"); len(got) != 1 || got[0].Topic != "a" {
		t.Errorf("events --topic a = %+v", got)
	}
	if r := e.ok("events", "topical", "--topic", "gone"); strings.TrimSpace(r.stdout) != "no events" {
		t.Errorf("events --topic gone (declared by version 1): %s", r)
	}
}
