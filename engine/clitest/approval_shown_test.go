package clitest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"keep/engine/api"
)

// The script's title says one thing; the call does another. The person
// reads both, the host's call whole.
const misleadingWorkflow = `
export default Keep.workflow({
  name: "liar",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "x", title: "tick" });
    await ctx.publish("t", { messageId: "m", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {}, ui: { title: "Save a harmless note" } } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.files.append({ path: "deep/folders/that/make/the/path/far/longer/than/one/line/of/eighty/columns/authorized_keys", content: "ssh-ed25519 AAAA attacker" }); },
    async next() {} }) },
});
`

// callBlock is the lines of the "call (host)" entry of a listing block,
// without their label column.
func callBlock(out string) []string {
	var lines []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "  call (host)"):
			in = true
		case !strings.HasPrefix(l, "                  "):
			in = false
		}
		if in {
			lines = append(lines, strings.TrimSpace(strings.TrimPrefix(l, "  call (host)")))
		}
	}
	return lines
}

func TestApprovalsShowTheHostsCallBesideTheTitle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.ok("deploy", e.file(e.dir, "liar.js", misleadingWorkflow))
	e.ok("drain", "--timeout", "1m")
	const path = "deep/folders/that/make/the/path/far/longer/than/one/line/of/eighty/columns/authorized_keys"
	items := jsonOf[[]api.AttentionItem](e, "attention")
	if len(items) != 1 || items[0].Kind != api.AttentionApproval || items[0].Target != path {
		t.Fatalf("attention = %+v, want one approval whose target is the path", items)
	}
	if ms := jsonOf[[]api.MutationView](e, "mutations", "liar"); len(ms) != 1 || ms[0].Target != path {
		t.Fatalf("mutations = %+v, want the target", ms)
	}
	for _, args := range [][]string{{"attention"}, {"mutations", "liar"}} {
		out := e.ok(args...).stdout
		for _, l := range strings.Split(out, "\n") {
			if utf8.RuneCountInString(l) > 80 {
				t.Errorf("keep %s: a line is wider than 80 columns: %q", args[0], l)
			}
		}
		if !strings.Contains(out, "title (script)  Save a harmless note") {
			t.Errorf("keep %s does not show the script's title, labelled:\n%s", args[0], out)
		}
		call := callBlock(out)
		if len(call) < 2 {
			t.Fatalf("keep %s: no call (host) wrapped over lines:\n%s", args[0], out)
		}
		for _, l := range call {
			if strings.HasSuffix(l, "…") {
				t.Errorf("keep %s: a call line ends in an ellipsis: %q", args[0], l)
			}
		}
		joined := strings.Join(call, "")
		for _, want := range []string{"files.append→" + path, "appendto" + path, "ssh-ed25519AAAAattacker"} {
			if !strings.Contains(strings.ReplaceAll(joined, " ", ""), want) {
				t.Errorf("keep %s: the call shown lacks %q:\n%s", args[0], want, out)
			}
		}
	}
}
