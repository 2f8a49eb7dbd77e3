package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/engine/api"
	"keep/engine/authoring/model"
)

// brokenNotes is notesWorkflow's logNote with a prepare that throws.
func brokenNotes(fix string) string {
	return strings.Replace(notesWorkflow, `const [ev] = await ctx.peek("note.found", { limit: 1 });`,
		fix+`const [ev] = await ctx.peek("note.found", { limit: 1 });`, 1)
}

// commandRepairer answers with the script in a file, through a real process.
func commandRepairer(t *testing.T, script string) (Repairer, string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fixed.js")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := filepath.Join(dir, "request.json")
	return RepairsOf(model.CommandRepairer{Command: "cat > " + seen + " && cat " + path}), seen
}

// proposed is the one open proposal for workflow, from Attention.
func (b *bundle) proposed(workflow string) api.AttentionItem {
	b.t.Helper()
	proposals := b.attentionOf(api.AttentionProposal)
	var found []api.AttentionItem
	for _, it := range proposals {
		if it.Workflow == workflow {
			found = append(found, it)
		}
	}
	if len(found) != 1 {
		b.t.Fatalf("proposals = %+v, want one for %s", proposals, workflow)
	}
	return found[0]
}

// accept accepts the open proposal for workflow and drains.
func (b *bundle) accept(workflow string) {
	b.t.Helper()
	if _, err := b.e.AcceptProposal(context.Background(), b.proposed(workflow).ID); err != nil {
		b.t.Fatal(err)
	}
	b.drain()
}

func TestRepair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a repair is only proposed; accepted, it is a minor version and the run is retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		r, seen := commandRepairer(t, notesWorkflow)
		b.e.repair = r
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", brokenNotes(`throw new Error("bug in prepare");`))
		b.drain()
		if got := b.read("log.csv"); got != "" {
			t.Fatalf("log.csv = %q before anyone accepted the repair", got)
		}
		w := b.workflow("notes")
		if w.Version != 1 || w.Block == nil || !strings.Contains(w.Block.Reason, "keep approve p") {
			t.Fatalf("before accepting: version %d block %+v, want version 1 blocked with the proposal named", w.Version, w.Block)
		}
		item := b.proposed("notes")
		if !strings.Contains(item.Preview, `-        throw new Error("bug in prepare");`) && !strings.Contains(item.Preview, `-throw new Error("bug in prepare");`) &&
			!strings.Contains(item.Preview, "bug in prepare") {
			t.Fatalf("the proposal's preview shows no diff: %s", item.Preview)
		}
		// the dry run retries the failed run with its reads captured:
		// nothing of a proposal is performed before it is accepted
		if !strings.Contains(item.Preview, "dry run (reads and mutations captured") {
			t.Fatalf("the proposal's preview has no dry run of the retried run: %s", item.Preview)
		}
		if hist, err := b.e.Proposals(ctx, "notes"); err != nil || len(hist) != 1 || hist[0].DryRun == nil || len(hist[0].DryRun.Reads) == 0 {
			t.Fatalf("proposals %+v, %v: want one with a dry run that read", hist, err)
		} else {
			for _, r := range hist[0].DryRun.Reads {
				if r.Performed {
					t.Fatalf("the repair's dry run performed %s.%s before it was accepted", r.Connector, r.Method)
				}
			}
		}
		if b.read("log.csv") != "" {
			t.Fatal("the proposal's dry run wrote the file")
		}
		b.accept("notes")
		if got := b.read("log.csv"); got != "a.txt,alpha\n" {
			t.Fatalf("log.csv = %q after the repair", got)
		}
		w = b.workflow("notes")
		if w.Version != 2 || w.Block != nil {
			t.Fatalf("workflow version %d block %+v, want version 2 unblocked", w.Version, w.Block)
		}
		v, err := b.db.Read().ScriptVersion(ctx, 1, 2)
		if err != nil || v.Origin != "repair" || v.Label != "1.1" {
			t.Fatalf("version 2 = %+v, %v; want a repair labelled 1.1", v, err)
		}
		var req model.RepairRequest
		data, _ := os.ReadFile(seen)
		if err := json.Unmarshal(data, &req); err != nil {
			t.Fatalf("the repairer got %q: %v", data, err)
		}
		if req.Handler != "logNote" || req.Phase != "preparing" && req.Phase != "prepare" || !strings.Contains(req.Error, "bug in prepare") ||
			!strings.Contains(req.Script, "bug in prepare") || len(req.Trace) == 0 {
			t.Fatalf("repair request = %+v", req)
		}
	})

	t.Run("the third logic failure in a row escalates to the user", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		broken := brokenNotes(`throw new Error("still broken");`)
		b.e.repair, _ = commandRepairer(t, broken)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", broken)
		b.drain()
		b.accept("notes")
		b.accept("notes")
		w := b.workflow("notes")
		if w.Version != 3 || w.Block == nil || w.Block.Kind != "repair" || !strings.Contains(w.Block.Reason, "2 repairs in a row") {
			t.Fatalf("version %d block %+v, want 2 repairs (v3) then escalated", w.Version, w.Block)
		}
		if w.State != api.StateNeedsAttention {
			t.Fatalf("state %s", w.State)
		}
	})

	t.Run("a repair cannot widen the grants", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		// the repaired script writes a file as well as appending: files.write
		// had no grant, so it waits for the user instead of running
		fixed := strings.Replace(notesWorkflow, `await ctx.files.append({ path: "log.csv", content: prepared.data.line });`,
			`await ctx.files.write({ path: "copy.csv", content: prepared.data.line });`, 1)
		fixed = strings.Replace(fixed, `await ctx.files.write({ path: "receipts/"`, `await ctx.files.append({ path: "receipts/"`, 1)
		b.e.repair, _ = commandRepairer(t, fixed)
		b.write("inbox/a.txt", "alpha")
		src := strings.Replace(brokenNotes(`throw new Error("bug");`), `await ctx.files.write({ path: "receipts/"`, `await ctx.files.append({ path: "receipts/"`, 1)
		b.deploy("notes", src)
		b.drain()
		if !strings.Contains(b.proposed("notes").Preview, "not granted (each would ask you): files.write") {
			t.Fatalf("the proposal does not say files.write has no grant: %s", b.proposed("notes").Preview)
		}
		b.accept("notes")
		if b.read("copy.csv") != "" {
			t.Fatal("the repaired script wrote with a capability it was never granted")
		}
		att, _ := b.e.Attention(ctx)
		if len(att) != 1 || att[0].Kind != api.AttentionApproval || att[0].Method != "write" {
			t.Fatalf("attention = %+v, want an approval for files.write", att)
		}
		grants, _ := b.e.Grants(ctx, "notes")
		for _, g := range grants {
			if g.Capability == "files.write" {
				t.Fatalf("the repair added a grant: %+v", g)
			}
		}
	})

	t.Run("a failure after the mutation is retried forward without mutating again", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.e.repair, _ = commandRepairer(t, notesWorkflow)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", strings.Replace(notesWorkflow, `return { last: result.status };`, `if (result.status === "applied") throw new Error("bug in next"); return { last: result.status };`, 1))
		b.drain()
		b.accept("notes")
		if got := b.read("log.csv"); got != "a.txt,alpha\n" {
			t.Fatalf("log.csv = %q: the append must happen exactly once", got)
		}
		var forward bool
		for _, r := range b.runs("notes") {
			if r.Handler == "logNote" && r.RetryOf != "" && r.Phase == "committed" && r.Trigger == "repair" {
				forward = true
			}
		}
		if !forward {
			t.Fatalf("runs = %+v, want a retry of the failed run committed", b.runs("notes"))
		}
		if n := len(b.mutations("notes")); n != 2 { // one log line, one receipt
			t.Fatalf("mutations = %d, want 2", n)
		}
	})

	t.Run("a chat-completions endpoint can repair", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model    string
				Messages []struct{ Role, Content string }
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			if req.Model != "m1" || len(req.Messages) != 2 || !strings.Contains(req.Messages[1].Content, "bug in prepare") {
				http.Error(w, "bad request", 400)
				return
			}
			answer, _ := json.Marshal("```js\n" + notesWorkflow + "\n```")
			w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":` + string(answer) + `}}]}`))
		}))
		defer srv.Close()
		b := setup(t, allowMutations)
		b.e.repair = RepairsOf(model.EndpointRepairer{URL: srv.URL, Model: "m1"})
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", brokenNotes(`throw new Error("bug in prepare");`))
		b.drain()
		b.accept("notes")
		if got := b.read("log.csv"); got != "a.txt,alpha\n" {
			t.Fatalf("log.csv = %q", got)
		}
	})
}
