package tui

import (
	"fmt"
	"strings"
	"testing"

	"keep/engine/api"
)

// A token too long for its line (a URL, a JSON value) continues on lines
// hanging by two spaces. Where the line is narrower than the hang and a
// wide character (a narrow pane in a small window: w 2 or 3), each
// continuation came out wider than w, and the row's fit then cut it to
// "…": the value was on no line at all. The hang goes where it leaves no
// room; every line is at most w cells and keeps every character.
func TestALongTokenInANarrowColumnStaysInsideIt(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"https://example.com/" + strings.Repeat("a", 500),
		"漢字,漢字:漢字漢字" + strings.Repeat("字", 20),
		`{"values":["alice@example.com","Invoice December"]}`,
	} {
		for w := 2; w <= 6; w++ {
			lines := breakLines(s, w)
			var back strings.Builder
			for _, l := range lines {
				if cells(l) > w {
					t.Errorf("breakLines(%.20q…, %d): line %q is %d cells", s, w, l, cells(l))
				}
				back.WriteString(strings.TrimLeft(l, " "))
			}
			if back.String() != strings.ReplaceAll(s, " ", "") {
				t.Errorf("breakLines(%.20q…, %d) lost characters: %q", s, w, back.String())
			}
		}
	}
}

// pgdn and pgup in the dry run moved by the Workflows pane's height; in
// the wide layout the dry run is shown in the lower box, taller, so a
// page moved by less than a page. They move by the box it is shown in.
func TestAPageOfTheDryRunIsThePageItIsShownIn(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		h := newHarness(t, newStub(), size[0], size[1])
		h.keys("1", "d")
		rep := *h.m.wf.dry.rep
		for i := 0; i < 100; i++ {
			rep.Runs = append(rep.Runs, api.TryRun{RunView: api.RunView{Handler: fmt.Sprintf("h%d", i), HandlerType: "consumer", Status: "committed"}})
		}
		h.m.wf.dry.rep = &rep
		h.screen()
		h.keys("pgdown")
		h.screen()
		l := h.m.lay
		boxH := l.paneH
		if l.wide {
			boxH = l.bottomH
		}
		_, ih := h.m.sh.st.inner(l.width, boxH)
		if got := h.m.wf.dry.offset; got != ih-1 {
			t.Errorf("%dx%d: pgdn moved the dry run by %d lines in a box %d lines high, want %d", size[0], size[1], got, ih, ih-1)
		}
	}
}
