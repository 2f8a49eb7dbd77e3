package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"keep/engine/api"
)

func TestProposals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// widening repairs: each adds one thing a repair may not add.
	widening := map[string]struct{ fixed, want string }{
		"a read": {strings.Replace(notesWorkflow, `const note = await ctx.files.read({ path: ev.payload.path });`,
			`const note = await ctx.files.read({ path: ev.payload.path }); await ctx.http.get({ url: "http://127.0.0.1:9/x" });`, 1),
			"read http.get"},
		"a host": {strings.Replace(notesWorkflow, `export default`, "// see https://evil.example/steal\nexport default", 1), "host evil.example"},
		"a handler": {strings.Replace(strings.Replace(notesWorkflow, `  producers: {`, `  producers: {
    spy: { publishes: ["spy.found"], schedule: { interval: "1h" }, handler: async () => ({}) },`, 1),
			`"note.logged": {} },`, `"note.logged": {}, "spy.found": {} },`, 1),
			"handler spy"},
		"a topic": {strings.Replace(notesWorkflow, `topics: { "note.found": {}, "note.logged": {} },`,
			`topics: { "note.found": {}, "note.logged": {}, "note.leaked": {} },`, 1), "topic note.leaked"},
		"a faster schedule": {strings.Replace(notesWorkflow, `interval: "5m"`, `interval: "1m"`, 1), "faster schedule scan: every 1m0s (was every 5m0s)"},
	}
	for name, c := range widening {
		t.Run("a repair that adds "+name+" is refused and recorded, not proposed", func(t *testing.T) {
			t.Parallel()
			b := setup(t, allowMutations)
			b.e.repair, _ = commandRepairer(t, c.fixed)
			b.write("inbox/a.txt", "alpha")
			b.deploy("notes", brokenNotes(`throw new Error("bug");`))
			b.drain()
			att, _ := b.e.Attention(ctx)
			for _, it := range att {
				if it.Kind == api.AttentionProposal {
					t.Fatalf("a widening repair was proposed: %+v", it)
				}
			}
			w := b.workflow("notes")
			if w.Version != 1 || w.Block == nil || !strings.Contains(w.Block.Reason, "a repair was refused") || !strings.Contains(w.Block.Reason, c.want) {
				t.Fatalf("version %d block %+v, want version 1 blocked saying the repair adding %q was refused", w.Version, w.Block, c.want)
			}
			hist, err := b.e.Proposals(ctx, "notes")
			if err != nil || len(hist) != 1 || hist[0].Status != api.ProposalRefused || !strings.Contains(hist[0].Why, c.want) {
				t.Fatalf("history = %+v, %v; want the refused repair recorded", hist, err)
			}
			if _, err := b.e.AcceptProposal(ctx, hist[0].ID); !errors.Is(err, ErrRefused) {
				t.Fatalf("accepting a refused repair: %v", err)
			}
		})
	}

	t.Run("a rejected proposal leaves the workflow as it was, and a decision is made once", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.e.repair, _ = commandRepairer(t, notesWorkflow)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", brokenNotes(`throw new Error("bug");`))
		b.drain()
		id := b.proposed("notes").ID
		if err := b.e.RejectProposal(ctx, id); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if w := b.workflow("notes"); w.Version != 1 || w.Block == nil || b.read("log.csv") != "" {
			t.Fatalf("after reject: version %d block %+v log %q", w.Version, w.Block, b.read("log.csv"))
		}
		if _, err := b.e.AcceptProposal(ctx, id); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "rejected already") {
			t.Fatalf("accepting a rejected proposal: %v", err)
		}
		if err := b.e.RejectProposal(ctx, id); !errors.Is(err, ErrRefused) {
			t.Fatalf("rejecting twice: %v", err)
		}
		if err := b.e.RejectProposal(ctx, "p999"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("no such proposal: %v", err)
		}
		hist, _ := b.e.Proposals(ctx, "notes")
		if len(hist) != 1 || hist[0].Status != api.ProposalRejected || hist[0].DecidedAt == nil {
			t.Fatalf("history = %+v", hist)
		}
	})

	t.Run("a model's proposal of a new workflow runs nothing until accepted; its reads are captured", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		v, err := b.author().Propose(ctx, api.ProposalRequest{FileName: "notes.js", Source: []byte(notesWorkflow), Origin: api.OriginMCP, Reason: "you asked for a log"})
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != api.ProposalOpen || v.Workflow != "notes" || v.DryRun == nil || len(v.DryRun.Reads) == 0 || v.DryRun.Reads[0].Performed {
			t.Fatalf("proposal = %+v, want open with captured reads in its dry run", v)
		}
		if !strings.Contains(strings.Join(v.Summary.Adds, ","), "handler logNote") || !strings.Contains(v.Diff, "+++ b/notes.js") {
			t.Fatalf("summary %+v diff %q", v.Summary, v.Diff)
		}
		if wfs, _ := b.e.Workflows(ctx); len(wfs) != 0 {
			t.Fatalf("a proposal deployed a workflow: %+v", wfs)
		}
		b.drain()
		if b.read("log.csv") != "" {
			t.Fatal("a proposal ran")
		}
		res, err := b.e.AcceptProposal(ctx, v.ID)
		if err != nil || res.Workflow != "notes" || res.Version != 1 {
			t.Fatalf("accept = %+v, %v", res, err)
		}
		b.drain()
		// accepting grants nothing: the new workflow's first mutation
		// waits for the person, and runs once approved
		att, _ := b.e.Attention(ctx)
		if b.read("log.csv") != "" || len(att) != 1 || att[0].Kind != api.AttentionApproval || att[0].Method != "append" {
			t.Fatalf("after accepting: log.csv %q, attention %+v; want an approval for files.append waiting", b.read("log.csv"), att)
		}
		if err := b.e.Approve(ctx, att[0].AnswerID(), false); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if got := b.read("log.csv"); got != "a.txt,alpha\n" {
			t.Fatalf("log.csv = %q after accepting and approving", got)
		}
		if hist, _ := b.e.Proposals(ctx, "notes"); len(hist) != 1 || hist[0].Status != api.ProposalAccepted || hist[0].Version != 1 {
			t.Fatalf("history = %+v", hist)
		}
	})

	t.Run("a proposal may not rename a workflow, nor be accepted once the workflow moved on", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.deploy("notes", notesWorkflow)
		_, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: []byte(strings.Replace(notesWorkflow, `name: "notes"`, `name: "other"`, 1)), Origin: api.OriginEdit})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "rename") {
			t.Fatalf("a renaming proposal: %v", err)
		}
		changed := strings.Replace(notesWorkflow, `"Note " + f.name`, `"A note " + f.name`, 1)
		v, err := b.author().Propose(ctx, api.ProposalRequest{Workflow: "notes", Source: []byte(changed), Origin: api.OriginEdit})
		if err != nil {
			t.Fatal(err)
		}
		if v.BaseVersion != 1 || v.FileName != "notes.js" || !strings.Contains(v.Diff, `+          const inputId = ctx.registerInput({ source: "files", type: "file", id: f.path, title: "A note " + f.name });`) {
			t.Fatalf("proposal = %+v", v)
		}
		b.deploy("notes", notesWorkflow+"\n")
		if _, err := b.e.AcceptProposal(ctx, v.ID); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("accepting a proposal made against version 1 at version 2: %v", err)
		}
		if _, err := b.author().Propose(ctx, api.ProposalRequest{Source: []byte(notesWorkflow), Origin: "deploy"}); err == nil {
			t.Fatal("an unknown origin was accepted")
		}
	})
}
