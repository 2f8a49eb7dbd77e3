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

// The TUI's dry run (d on Workflows) keeps them on their lines too: before,
// an input's title under a mutation ("for …") wrote the heading the script
// chose on a line of its own.
func TestTheTUIsDryRunKeepsAScriptsTextOnItsLine(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Deploy("forger", []byte(forgingTry))
	h := r.harness(r.API, 120, 40)
	h.keys("1", "d")
	screen := h.screen()
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.Trim(l, "│ "), "mutations it would make") {
			t.Errorf("the dry run has a line the script wrote: %q\n%s", l, screen)
		}
	}
	if !strings.Contains(screen, `for t\nmutations it would make (0):`) {
		t.Errorf("the dry run does not show the input's title escaped on its line:\n%s", screen)
	}
}
