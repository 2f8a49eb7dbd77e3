package tui

import (
	"context"
	"strings"
	"testing"

	"keep/tui/printable"
)

// forgedLine is a file name with a newline in it (Linux allows one): what
// follows the newline is text the script chose, dressed as a grant row.
const forgedLine = "FORGED  allow  /  -  yes"

const newlinePathWorkflow = `
export default Keep.workflow({
  name: "liner",
  topics: { "x": {} },
  producers: {
    p: { publishes: ["x"], schedule: { interval: "1h" }, handler: async (ctx) => {
      const inputId = ctx.registerInput({ source: "system", type: "schedule", id: "1", title: "tick" });
      await ctx.publish("x", { messageId: "1", inputId, payload: {} });
    } },
  },
  consumers: {
    c: Keep.consumer({ subscribe: ["x"],
      async prepare(ctx) {
        const [e] = await ctx.peek("x", { limit: 1 });
        return e ? { reservations: [{ topic: "x", ids: [e.messageId] }], data: {}, ui: { title: "log it" } }
                 : { reservations: [], data: {} };
      },
      async mutate(ctx) { await ctx.files.append({ path: "a\n` + forgedLine + `", content: "x" }); },
      async next() {} }),
  },
});
`

// startsForged reports the lines of out that begin with the script's text:
// a line keep did not write.
func startsForged(out string) []string {
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "FORGED") {
			found = append(found, l)
		}
	}
	return found
}

// A target, a scope or a table cell is one line: a newline a script put in
// a file name is shown as \n, on the CLI (keep attention, keep approve's
// words, keep grants) and on the TUI's card. Before, the name's newline
// was written raw, and what followed it read as a line of keep's own: a
// grant row that was not there, a line of the host's call.
func TestAScriptsNewlineNeverStartsALineOfKeeps(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Deploy("liner", []byte(newlinePathWorkflow))
	r.Drain()
	ctx := context.Background()

	items, err := r.API.Attention(ctx)
	if err != nil || len(items) != 1 {
		t.Fatalf("attention = %d items, %v; want the liner's approval", len(items), err)
	}
	cli := func(write func(w *printable.Writer) error) string {
		t.Helper()
		var b strings.Builder
		pw := printable.NewWriter(&b)
		if err := write(pw); err != nil {
			t.Fatal(err)
		}
		pw.Flush()
		return b.String()
	}
	for name, out := range map[string]string{
		"keep attention":    cli(func(w *printable.Writer) error { return WriteAttention(w, items, 200) }),
		"keep attention ID": cli(func(w *printable.Writer) error { return WriteAttentionItems(w, items, 200) }),
	} {
		if found := startsForged(out); len(found) > 0 {
			t.Errorf("%s has a line the script wrote: %q\n%s", name, found, out)
		}
		if !strings.Contains(out, `a\n`+forgedLine) {
			t.Errorf("%s does not show the file name with its newline escaped:\n%s", name, out)
		}
	}

	h := r.harness(r.API, 200, 60)
	h.keys("3")
	if found := startsForged(h.m.at.View()); len(found) > 0 {
		t.Errorf("the approval card has a line the script wrote: %q\n%s", found, h.m.at.View())
	}
	if found := startsForged(h.m.View().Content); len(found) > 0 {
		t.Errorf("the screen has a line the script wrote: %q", found)
	}

	if err := r.API.Approve(ctx, items[0].AnswerID(), true); err != nil {
		t.Fatal(err)
	}
	if words := ApprovedWords(items[0].ID, &items[0], true, false); strings.Contains(words, "\n") {
		t.Errorf("keep approve --always says %q: a line the script wrote", words)
	}
	grants, err := r.API.Grants(ctx, "liner")
	if err != nil {
		t.Fatal(err)
	}
	out := cli(func(w *printable.Writer) error { return WriteGrants(w, grants) })
	if found := startsForged(out); len(found) > 0 {
		t.Errorf("keep grants has a row the script wrote: %q\n%s", found, out)
	}
}
