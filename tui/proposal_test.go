package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
)

// TestProposalAnswers: a proposal in Attention is accepted with a and
// rejected with x, each after a question, and shows its diff when opened.
func TestProposalAnswers(t *testing.T) {
	t.Parallel()
	withProposal := func(t *testing.T) *harness {
		s := newStub()
		s.attention = []api.AttentionItem{{Kind: api.AttentionProposal, Workflow: "inbox-archive", ID: "p4",
			Title: "new version of inbox-archive proposed by the repairer", Reason: "a repair of run 9",
			Params: json.RawMessage(`{}`), Preview: "adds: none\ndry run: 1 runs\n\n--- a/w.js\n+++ b/w.js\n-old line\n+new line\n",
			Answers: []string{"accept", "reject"}, CreatedAt: mins(1)}}
		return newHarness(t, s, 120, 40)
	}
	t.Run("a asks, then accepts", func(t *testing.T) {
		t.Parallel()
		h := withProposal(t)
		h.keys("3", "enter")
		if !strings.Contains(h.screen(), "+new line") {
			t.Fatalf("the open proposal does not show its diff:\n%s", h.screen())
		}
		h.keys("a")
		if h.m.confirm == nil || len(h.api.actions()) != 0 {
			t.Fatalf("a accepted without asking: %v", h.api.actions())
		}
		h.keys("y")
		if got := h.api.actions(); !slices.Equal(got, []string{"AcceptProposal p4"}) {
			t.Fatalf("calls = %v", got)
		}
	})
	t.Run("x asks, then rejects", func(t *testing.T) {
		t.Parallel()
		h := withProposal(t)
		h.keys("3", "x", "y")
		if got := h.api.actions(); !slices.Equal(got, []string{"RejectProposal p4"}) {
			t.Fatalf("calls = %v", got)
		}
	})
}

// `keep attention` lists a proposal's summary and how long its diff is;
// `keep attention pN` shows the diff (the red team's listing printed 1,000
// diffs in full).
func TestTheListingShowsAProposalsSummaryNotItsDiff(t *testing.T) {
	t.Parallel()
	diff := "--- a/w.js\n+++ b/w.js\n@@ -1 +1 @@\n-old line\n+new line\n"
	p := &api.ProposalView{ID: "p4", Summary: api.ProposalSummary{Adds: []string{"host evil.example"}}, Diff: diff}
	items := []api.AttentionItem{{Kind: api.AttentionProposal, Workflow: "inbox-archive", ID: "p4",
		Title: "new version of inbox-archive proposed by a model over MCP", Params: json.RawMessage(`{}`),
		Preview: engine.ProposalText(p), Answers: []string{"accept", "reject"}}}
	var list, whole strings.Builder
	if err := WriteAttention(&list, items, 100); err != nil {
		t.Fatal(err)
	}
	if err := WriteAttentionItems(&whole, items, 100); err != nil {
		t.Fatal(err)
	}
	if s := list.String(); !strings.Contains(s, "adds: host evil.example") || strings.Contains(s, "+new line") ||
		!strings.Contains(s, "5 lines: keep attention p4 shows it") {
		t.Errorf("keep attention:\n%s", s)
	}
	if s := whole.String(); !strings.Contains(s, "adds: host evil.example") || !strings.Contains(s, "    +new line") ||
		strings.Contains(s, "keep attention p4 shows it") {
		t.Errorf("keep attention p4:\n%s", s)
	}
}
