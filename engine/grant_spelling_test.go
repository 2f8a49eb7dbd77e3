package engine

import (
	"context"
	"strings"
	"testing"

	"keep/engine/api"
)

// A grant is held to what it names, end to end (ledger.ScopeMatches): a
// grant for the file notes.md does not let a workflow write
// journal/diary.notes.md unasked (it was read as a domain and its
// sub-domain), and a deny for a host spelt as the person wrote it,
// LocalHost., is not passed by the request going to localhost.
func TestAGrantHoldsToWhatItNamesWhateverTheSpelling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a file's grant does not cover a file whose name ends in it", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		src := strings.Replace(pushWorkflow(s.URL, "a"),
			`await ctx.http.request({ method: "POST", url: "`+s.URL+`" + "/items", json: { id: p.data.id }, reconcile: { url: "`+s.URL+`" + "/items/" + p.data.id } });`,
			`await ctx.files.write({ path: "journal/diary.notes.md", content: p.data.id });`, 1)
		if src == pushWorkflow(s.URL, "a") {
			t.Fatal("the workflow was not rewritten")
		}
		b.deploy("push", src)
		if err := b.e.Grant(ctx, "push", api.GrantView{Capability: "files.write", Scope: "notes.md", Mode: GrantAllow}); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if got := b.read("journal/diary.notes.md"); got != "" {
			t.Fatalf("journal/diary.notes.md = %q: written under a grant for notes.md", got)
		}
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || att[0].Kind != api.AttentionApproval || !strings.Contains(att[0].Reason, "your grant for files.write asks before each call") {
			t.Fatalf("attention = %+v, want the write asking", att)
		}
	})

	t.Run("a deny spelt in capitals with a trailing dot holds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(strings.Replace(s.URL, "127.0.0.1", "localhost", 1), "a"))
		for _, g := range []api.GrantView{{Capability: "http.request", Mode: GrantAllow}, {Capability: "http.request", Scope: "LocalHost.", Mode: GrantDeny}} {
			if err := b.e.Grant(ctx, "push", g); err != nil {
				t.Fatal(err)
			}
		}
		b.drain()
		if got := len(b.mutationsBy("applied")); got != 0 {
			t.Fatalf("applied %d: a call to a denied host was made", got)
		}
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || att[0].Kind != api.AttentionApproval || !strings.Contains(att[0].Reason, "your grant denies http.request (LocalHost.)") {
			t.Fatalf("attention = %+v, want the call waiting on the deny", att)
		}
	})
}
