package clitest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"keep/engine/api"
)

// attentionOf returns the attention items of one kind.
func attentionOf(e *env, kind api.AttentionKind) []api.AttentionItem {
	e.t.Helper()
	var out []api.AttentionItem
	for _, it := range jsonOf[[]api.AttentionItem](e, "attention") {
		if it.Kind == kind {
			out = append(out, it)
		}
	}
	return out
}

// TestAnswersThroughTheCLI exercises every answer a person gives with the
// real binary, with its exit codes (DESIGN.md §5).
func TestAnswersThroughTheCLI(t *testing.T) {
	t.Parallel()

	t.Run("reject skips the mutation and its events", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		e.ok("reject", a[0].ID)
		e.expect(3, "reject", a[0].ID)
		e.ok("drain")
		var skipped int
		for _, ev := range jsonOf[[]api.EventView](e, "events", "lines") {
			if ev.Status == "skipped" {
				skipped++
			}
		}
		if skipped != 1 {
			t.Fatalf("%d skipped events, want the rejected one", skipped)
		}
	})

	t.Run("an answer may name the attempt it answers; another attempt's is refused", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		if a[0].Attempt < 1 || a[0].AnswerID() != a[0].ID+"@"+strconv.Itoa(a[0].Attempt) {
			t.Fatalf("the approval card names attempt %d (answer id %q)", a[0].Attempt, a[0].AnswerID())
		}
		e.expect(3, "approve", a[0].ID+"@"+strconv.Itoa(a[0].Attempt+1))
		e.expect(2, "approve", a[0].ID+"@x")
		e.ok("approve", a[0].AnswerID())
	})

	t.Run("approve --always allows the call's scope from then on", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		e.ok("approve", a[0].ID, "--always")
		e.ok("drain")
		if got := e.read("out.txt"); got != "a.txt\nb.txt\n" && got != "b.txt\na.txt\n" {
			t.Fatalf("out.txt = %q, want both lines without a second approval", got)
		}
		// both lines go to out.txt: the scope --always allows
		grants := jsonOf[[]api.GrantView](e, "grants", "lines")
		if len(grants) != 2 || grants[1].Mode != "allow" || grants[1].Scope != "out.txt" {
			t.Fatalf("grants = %+v", grants)
		}
	})

	t.Run("skip marks a pending event skipped; skipping it again is refused", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		var pending string
		for _, ev := range jsonOf[[]api.EventView](e, "events", "lines") {
			if ev.Status == "pending" && ev.ReservedBy == "" {
				pending = ev.ID
			}
		}
		if pending == "" {
			t.Fatal("no pending, unreserved event")
		}
		e.ok("skip", pending)
		e.expect(3, "skip", pending)
		e.expect(1, "skip", "999999")
	})

	t.Run("skip-input abandons the waiting work of an input", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "ask")
		e.deployLines()
		e.ok("drain")
		a := attentionOf(e, api.AttentionApproval)
		inputs := jsonOf[[]api.InputView](e, "inputs", "lines")
		var waiting string
		for _, in := range inputs {
			if in.Status == api.InputNeedsAttention {
				waiting = in.InputID
			}
		}
		e.ok("skip-input", waiting)
		e.expect(3, "skip-input", waiting)
		for _, in := range jsonOf[[]api.InputView](e, "inputs", "lines") {
			if in.InputID == waiting && in.Status != api.InputSkipped {
				t.Fatalf("input %s is %s, want skipped", waiting, in.Status)
			}
		}
		for _, it := range attentionOf(e, api.AttentionApproval) {
			if it.ID == a[0].ID {
				t.Fatal("the skipped input's approval still waits")
			}
		}
		if e.read("out.txt") != "" {
			t.Fatal("the skipped input's mutation ran")
		}
	})

	t.Run("resolve answers an uncertain mutation once; a bad answer is refused", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }))
		defer srv.Close()
		e := newEnv(t, "allow")
		wf := e.file(e.dir, "post.js", strings.Replace(`export default Keep.workflow({ name: "post", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "http", type: "resource", id: "1", title: "Item 1" });
    await ctx.publish("t", { messageId: "1", inputId, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {}, ui: { title: "Post item 1" } } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POST", url: URL }); },
    async next() {} }) } });`, "URL", `"`+srv.URL+`"`, 1))
		e.ok("deploy", wf)
		e.ok("drain")
		rs := attentionOf(e, api.AttentionReconciliation)
		if len(rs) != 1 || rs[0].Title != "Post item 1" || rs[0].Connector != "http" {
			t.Fatalf("reconciliation items = %+v", rs)
		}
		e.expect(2, "resolve", rs[0].ID, "maybe")
		e.ok("resolve", rs[0].ID, "happened")
		e.expect(3, "resolve", rs[0].ID, "happened")
		e.ok("drain")
		ms := jsonOf[[]api.MutationView](e, "mutations", "post")
		if len(ms) != 1 || ms[0].Status != "applied" || ms[0].ResolvedBy != "user" {
			t.Fatalf("mutations = %+v", ms)
		}
	})

	t.Run("retry answers a blocked workflow and is refused when nothing is blocked", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		wf := e.file(e.dir, "bad.js", `export default Keep.workflow({ name: "bad", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async () => { throw new Error("always"); } } },
  consumers: {} });`)
		e.ok("deploy", wf)
		e.ok("drain")
		if f := attentionOf(e, api.AttentionFailedRun); len(f) != 1 {
			t.Fatalf("failed runs = %+v", f)
		}
		e.ok("retry", "bad")
		e.expect(3, "retry", "bad")
		e.ok("drain") // fails again, blocked again
		e.ok("retry", "bad")
	})

	t.Run("a retry or resume may name the block it answers; an earlier block's is refused", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, "allow")
		wf := e.file(e.dir, "bad.js", `export default Keep.workflow({ name: "bad", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async () => { throw new Error("connection refused"); } } },
  consumers: {} });`)
		e.ok("deploy", wf)
		e.ok("drain")
		f := attentionOf(e, api.AttentionFailedRun)
		if len(f) != 1 || f[0].Block < 1 {
			t.Fatalf("failed runs = %+v, want one naming the workflow's block", f)
		}
		first := f[0].WorkflowAnswerID()
		if out := e.ok("attention").stdout; !strings.Contains(out, "keep retry "+first) {
			t.Fatalf("keep attention does not show what to type (keep retry %s):\n%s", first, out)
		}
		if out := e.ok("status", "bad").stdout; !strings.Contains(out, first) {
			t.Fatalf("keep status does not show the block id %s:\n%s", first, out)
		}
		e.ok("retry", first)
		e.ok("drain") // fails again: another block
		second := attentionOf(e, api.AttentionFailedRun)[0].WorkflowAnswerID()
		if second == first {
			t.Fatalf("the second block is named %s, as the first", second)
		}
		for _, op := range []string{"retry", "resume"} {
			if r := e.expect(3, op, first); !strings.Contains(r.stderr, "nothing was changed") || !strings.Contains(r.stderr, second) {
				t.Fatalf("keep %s %s with %s standing: %s", op, first, second, r)
			}
		}
		e.expect(1, "retry", "bad@x") // not found, as a mutation id that is not one
		e.ok("resume", second)
		e.expect(3, "resume", second) // answered: it stands no more
		// what was answered is read back, each with the block it answered;
		// the refused ones were never answers
		out := e.ok("status", "bad").stdout
		n1, n2 := first[strings.Index(first, "@")+1:], second[strings.Index(second, "@")+1:]
		for _, want := range []string{"retry (block " + n1 + ") by ", "resume (block " + n2 + ") by "} {
			if !strings.Contains(out, want) {
				t.Errorf("keep status does not list the answer %q:\n%s", want, out)
			}
		}
		if c := strings.Count(out, "answered:"); c != 2 {
			t.Errorf("keep status lists %d answers, want the 2 given:\n%s", c, out)
		}
	})
}
