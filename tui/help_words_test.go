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

// The "sure?" question names the card or input as the list shows it. A
// title reaches the TUI already made printable (\x1b for an escape), so
// quoting it again as Go does doubled every backslash and escaped its
// quotes: the question named something the list did not show.
func TestTheQuestionNamesTheTitleAsTheListShowsIt(t *testing.T) {
	t.Parallel()
	const title = "Add row \"x\" \x1b[31m"
	const shown = `"Add row "x" \x1b[31m"?`
	for _, c := range []struct{ name, pane, key string }{
		{"reject in Attention", "3", "x"},
		{"skip input in Inputs", "2", "S"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newStub()
			s.attention[0].Title = title
			s.inputs["email-to-sheets"][0].Title = title
			h := newHarness(t, s, 200, 40)
			h.keys(c.pane)
			if c.pane == "2" {
				h.keys("g")
			}
			h.keys(c.key)
			if h.m.confirm == nil {
				t.Fatalf("%s asked nothing:\n%s", c.key, h.screen())
			}
			if got := h.m.confirm.question; !strings.Contains(got, shown) {
				t.Errorf("the question is %s, want it to name %s", got, shown)
			}
		})
	}
}
