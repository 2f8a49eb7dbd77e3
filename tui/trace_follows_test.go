package tui

import (
	"strings"
	"testing"
)

// A trace is one run of the workflow the Run log was showing. Another
// workflow chosen in pane 1 is another Run log: the trace left open
// showed the first workflow's run under the second's selection, titled
// only "trace of #14", and read as a run of the workflow just chosen.
func TestChoosingAnotherWorkflowClosesTheTraceOfTheLast(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 80, 24)
	h.keys("1", "4", "enter")
	if sc := flat(h); !strings.Contains(sc, "trace of #14") {
		t.Fatalf("enter on the newest run did not open its trace:\n%s", sc)
	}
	h.keys("1", "j", "4")
	if w := h.m.wf.Selected(); w == nil || w.Name != "inbox-archive" {
		t.Fatalf("j in pane 1 selected %v, want inbox-archive", w)
	}
	sc := flat(h)
	if strings.Contains(sc, "trace of #14") || !strings.Contains(sc, "4 Run log · inbox-archive") {
		t.Fatalf("with inbox-archive chosen, the Run log still shows email-to-sheets' run #14:\n%s", sc)
	}
	// the same workflow chosen again is the same Run log: a trace stays
	h.keys("enter")
	h.keys("esc")
	h.keys("1", "k", "4", "enter", "1", "4")
	if sc := flat(h); !strings.Contains(sc, "trace of #14") {
		t.Fatalf("pane 1 visited with no other workflow chosen closed the trace:\n%s", sc)
	}
}
