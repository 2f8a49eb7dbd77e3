package tui

import (
	"slices"
	"testing"

	"keep/engine/api"
)

// An answer names the attempt its card asked about, so that once the call
// has been sent again and is asked about anew, the engine refuses an
// answer read off the card of the question before (engine: askedNow).
func TestAnswersNameTheAttemptTheirCardAsked(t *testing.T) {
	t.Parallel()
	s := newStub()
	s.attention[0].Attempt = 1
	s.attention[1].Attempt = 2
	h := newHarness(t, s, 120, 40)
	h.keys("3", "a")
	h.keys("down", "f", "y")
	if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7@1 always=false", "Resolve m3@2 not-happened"}) {
		t.Fatalf("calls %v, want each answer to name its card's attempt", got)
	}
}

// A retry or resume names the block its card or row was drawn on
// (WORKFLOW@N), whichever pane it is given from, so that once that block
// is answered and the workflow blocks again on something else, the engine
// refuses it rather than clear the block nobody was shown
// (engine: answersStanding).
func TestWorkflowAnswersNameTheBlockTheirCardDrew(t *testing.T) {
	t.Parallel()

	t.Run("r and p on a blocked workflow's card", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.attention = []api.AttentionItem{{Kind: api.AttentionBlockedWorkflow, Workflow: "email-to-sheets", ID: "email-to-sheets",
			Title: "email-to-sheets is blocked", Reason: "run 41 failed: connection refused", Answers: []string{"retry", "resume"}, Block: 41}}
		h := newHarness(t, s, 120, 40)
		h.keys("3", "r", "p")
		if got := h.api.actions(); !slices.Equal(got, []string{"Retry email-to-sheets@41", "Resume email-to-sheets@41"}) {
			t.Fatalf("calls %v, want each to name the card's block 41", got)
		}
	})

	t.Run("r on a failed run's card and on its row in the Run log", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.attention = []api.AttentionItem{{Kind: api.AttentionFailedRun, Workflow: "email-to-sheets", ID: "12",
			Title: "toSheet failed", Reason: "TypeError", Answers: []string{"retry"}, Block: 5}}
		s.runs["email-to-sheets"][2].WorkflowBlock = 5
		h := newHarness(t, s, 120, 40)
		h.keys("3", "r")
		h.keys("4", "down", "down", "r")
		if got := h.api.actions(); !slices.Equal(got, []string{"Retry email-to-sheets@5", "Retry email-to-sheets@5"}) {
			t.Fatalf("calls %v, want both to name block 5", got)
		}
	})

	t.Run("p on a paused workflow's row, blocked and not", func(t *testing.T) {
		t.Parallel()
		blocked := newStub()
		blocked.workflows[2].Block = &api.Block{Kind: "repair", Reason: "run 57 failed", N: 57}
		h := newHarness(t, blocked, 120, 40)
		h.keys("down", "down", "p")
		h2 := newHarness(t, newStub(), 120, 40)
		h2.keys("down", "down", "p")
		if got := append(h.api.actions(), h2.api.actions()...); !slices.Equal(got, []string{"Resume daily-digest@57", "Resume daily-digest@0"}) {
			t.Fatalf("calls %v, want the row's block 57, then 0 for the row drawn unblocked", got)
		}
	})
}
