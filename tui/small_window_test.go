package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A window too small for a pane drew the bars with nothing between them
// (or, under four rows, bars alone): nothing said why the panes were gone
// or what size brings them back. In the pane's place a line says so,
// whatever else gives way, and q still quits.
func TestAWindowTooSmallForAPaneSaysSoAndQQuits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		w, h  int
		wants []string
	}{
		{20, 6, []string{"too small", "7 rows", "q quit"}},
		{120, 5, []string{"window too small for a pane: it needs 7 rows, this one is 120×5", "q quit"}},
		{80, 4, []string{"needs 7 rows", "q quit"}},
		{80, 2, []string{"needs 7 rows", "q quit"}},
		{80, 1, []string{"needs 7 rows"}},
		{12, 24, []string{"min 16 cols", "q quit"}},
		{15, 24, []string{"needs 16 cols"}},
		{14, 7, []string{"16 cols"}},
		{10, 4, []string{"16×7"}},
	} {
		h := newHarness(t, newStub(), c.w, c.h)
		sc := ansi.Strip(h.screen())
		lines := strings.Split(sc, "\n")
		if len(lines) != c.h {
			t.Errorf("%dx%d: the screen is %d lines:\n%s", c.w, c.h, len(lines), sc)
		}
		for _, want := range c.wants {
			if !strings.Contains(strings.ReplaceAll(sc, "\n", " "), want) {
				t.Errorf("%dx%d: the screen does not say %q:\n%s", c.w, c.h, want, sc)
			}
		}
		for i, l := range lines {
			if rest := pastTheEdge(l, c.w); rest != "" {
				t.Errorf("%dx%d: line %d has %q past the edge", c.w, c.h, i, rest)
			}
		}
		h.keys("q")
		if !h.quit {
			t.Errorf("%dx%d: q did not quit", c.w, c.h)
		}
	}
}

// Big enough but for the open help, the line says that ? gives the pane
// its room back, and it does.
func TestThePaneUnderTheHelpIsNamedAsSuch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 80, 12)
	h.keys("?")
	if sc := flat(h); !strings.Contains(sc, "the help takes the pane's room: ? closes it") {
		t.Fatalf("with the help open over the pane, nothing says where it went:\n%s", sc)
	}
	h.keys("?")
	if sc := flat(h); strings.Contains(sc, "the pane's room") || !strings.Contains(sc, "╰") {
		t.Fatalf("the help closed, the pane is not back:\n%s", sc)
	}
}
