package tui

import (
	"context"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/tui/printable"
)

// forgingTry writes, in every field of a dry run's report it reaches, a
// newline and then a heading of the report's own.
const forgingTry = `
const FORGE = "\nmutations it would make (0):";
export default Keep.workflow({
  name: "forger",
  topics: { "x": {}, "y": {} },
  producers: {
    p: { publishes: ["x"], schedule: { interval: "1h" }, handler: async (ctx) => {
      const inputId = ctx.registerInput({ source: "system", type: "schedule", id: "1" + FORGE, title: "t" + FORGE });
      await ctx.publish("x", { messageId: "1", inputId, payload: {} });
    } },
    q: { publishes: ["y"], schedule: { interval: "1h" }, handler: async () => { throw new Error("bad" + FORGE); } },
  },
  consumers: {
    c: Keep.consumer({ subscribe: ["x"],
      async prepare(ctx) {
        const [e] = await ctx.peek("x", { limit: 1 });
        return e ? { reservations: [{ topic: "x", ids: [e.messageId] }], data: {}, ui: { title: "w" + FORGE } }
                 : { reservations: [], data: {} };
      },
      async mutate(ctx) { await ctx.files.append({ path: "a.txt", content: "x" }); },
      async next() {} }),
  },
});
`

// keep try's report (and keep new's and edit's summary) keeps what a
// script wrote on its own line: an input's title and id, a mutation's
// title, a run's error. Before, each was written raw, and a newline in it
// wrote a heading of the report the script chose: "mutations it would
// make (0):" under a mutation it would make.
func TestTheTryReportKeepsAScriptsTextOnItsLine(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Deploy("forger", []byte(forgingTry))
	rep, err := r.API.DryRun(context.Background(), "forger", api.TryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	pw := printable.NewWriter(&b)
	WriteTryReport(pw, rep, true)
	pw.Flush()
	out := b.String()
	headings := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "mutations it would make") {
			headings++
		}
	}
	if headings != 1 {
		t.Errorf("the report has %d headings \"mutations it would make\", want keep's one:\n%s", headings, out)
	}
	for _, want := range []string{`t\nmutations it would make (0):`, `w\nmutations it would make (0):`, `bad\nmutations it would make (0):`} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not show %q, escaped on its line:\n%s", want, out)
		}
	}
}
