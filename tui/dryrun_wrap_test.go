package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// boxText is the screen's words read across its lines, borders and
// padding left out, so that a sentence wrapped over rows reads whole.
func boxText(screen string) string {
	var words []string
	for _, l := range strings.Split(ansi.Strip(screen), "\n") {
		l = strings.Trim(strings.TrimSpace(l), "│")
		words = append(words, strings.Fields(l)...)
	}
	return strings.Join(words, " ")
}

// The dry run is read to learn what a run would do; a line wider than the
// pane was cut with "…" (the report's first sentence at 80 columns, a run's
// error, a long preview), and no key showed the rest. It wraps instead, and
// G goes to its end as the help says.
func TestTheDryRunWrapsItsLinesAndGReachesItsEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 80, 24)
	h.keys("1", "d")
	const first = "A throw-away copy that started empty: 1 new inputs, 1 mutations, 0 events left pending."
	if got := boxText(h.screen()); !strings.Contains(got, first) {
		t.Errorf("the dry run's first sentence is not whole on screen:\n%s", h.screen())
	}

	small := newHarness(t, newStub(), 40, 12)
	small.keys("1", "d", "G")
	if got := boxText(small.screen()); !strings.Contains(got, "esc: back") {
		t.Errorf("G does not show the dry run's end:\n%s", small.screen())
	}
}

// A pane's message (what to do when it is empty, why it could not load)
// is an instruction: cut at the pane's edge, it lost its command ("then:
// keep…" on the Accounts pane at 80 columns). It wraps as the dry run does.
func TestAPanesMessageWrapsWhole(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 40, 14)
	h.keys("5")
	const want = "The running keep lists its accounts with: keep auth list"
	if got := boxText(h.screen()); !strings.Contains(got, want) {
		t.Errorf("the Accounts pane's message is not whole (%q):\n%s", want, h.screen())
	}
}
