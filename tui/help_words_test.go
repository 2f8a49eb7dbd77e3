package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A key's word in the help bar is what it does in the pane in front of the
// person. The Run log names esc "close trace" while a trace is open; that
// word is the Run log's, and must not follow esc to a pane where it folds a
// card or leaves a dry run.
func TestAKeysHelpWordDoesNotFollowItOutOfItsPane(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 200, 40)
	h.keys("4")
	for i := 0; i < 3 && h.m.rn.traceRun == ""; i++ {
		h.keys("enter")
		if h.m.rn.traceRun == "" {
			h.keys("j")
		}
	}
	if h.m.rn.traceRun == "" {
		t.Fatalf("no trace opened in the Run log:\n%s", h.screen())
	}
	if s := ansi.Strip(h.screen()); !strings.Contains(s, "esc close trace") {
		t.Fatalf("the Run log with a trace open does not offer esc to close it:\n%s", s)
	}
	h.keys("3", "enter") // an opened card: esc folds it
	s := ansi.Strip(h.screen())
	if strings.Contains(s, "close trace") {
		t.Errorf("Attention names esc \"close trace\", a word of the Run log's:\n%s", s)
	}
	if !strings.Contains(s, "esc back") {
		t.Errorf("Attention with a card open does not offer esc back:\n%s", s)
	}
}
