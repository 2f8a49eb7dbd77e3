package tui

import (
	"strings"
	"testing"

	"keep/engine/api"
)

// A trace's title was "trace of #N" alone. Opened from a failed run's card
// in Attention it may be a run of a workflow other than the one selected,
// and the title read as a run of that one. It names the run's workflow.
func TestATraceNamesItsWorkflow(t *testing.T) {
	t.Parallel()
	t.Run("opened from a failed run's card of a workflow not selected", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.attention = append(s.attention, api.AttentionItem{Kind: api.AttentionFailedRun,
			Workflow: "inbox-archive", ID: "12", Title: "archive failed", Reason: "TypeError", Block: 4})
		h := newHarness(t, s, 80, 24)
		h.keys("3")
		for i := 0; ; i++ {
			if it := h.m.at.Selected(); it != nil && it.Kind == api.AttentionFailedRun {
				break
			}
			if i == len(s.attention) {
				t.Fatalf("no failed run's card in Attention:\n%s", flat(h))
			}
			h.keys("down")
		}
		h.keys("enter")
		if w := h.m.wf.Selected(); w == nil || w.Name != "email-to-sheets" {
			t.Fatalf("the selected workflow is %v, want email-to-sheets", w)
		}
		if sc := flat(h); !strings.Contains(sc, "4 Run log · inbox-archive · trace of #12") {
			t.Errorf("the trace does not name inbox-archive, whose run it is:\n%s", sc)
		}
		h.keys("esc")
		if sc := flat(h); !strings.Contains(sc, "4 Run log · email-to-sheets") {
			t.Errorf("the trace closed, the Run log is not the selected workflow's:\n%s", sc)
		}
	})
	t.Run("opened from the Run log", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 80, 24)
		h.keys("4", "enter")
		if sc := flat(h); !strings.Contains(sc, "4 Run log · email-to-sheets · trace of #14") {
			t.Errorf("the trace does not name its workflow:\n%s", sc)
		}
	})
	t.Run("in a narrow box the name gives way, the number stays", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 40, 24)
		h.keys("4", "enter")
		sc := flat(h)
		top := strings.Split(sc, "\n")[2]
		if !strings.Contains(top, "4 Run log · email-") || !strings.Contains(top, "… · trace of #14 ") {
			t.Errorf("the narrow trace's title is not the workflow's name cut and the run's number whole: %q\n%s", top, sc)
		}
	})
}
