package tui

import (
	"strings"
	"testing"
)

// What A grants for good is the scope the card names after "A: always,
// for". Cut to the pane's width, a file's path read as its folder's
// ("…/demo/done…" for "…/demo/done/welcome.txt"): the one line that says
// how far an answer reaches must be there whole, wrapped as the call is.
func TestTheScopeAlwaysGrantsIsShownWhole(t *testing.T) {
	t.Parallel()
	const scope = "/home/someone/.local/share/keep/demo/done/a-rather-long-file-name-for-a-note.txt"
	for _, w := range []int{40, 80, 100} {
		s := newStub()
		s.attention[0].Scope = scope
		h := newHarness(t, s, w, 40)
		h.keys("3")
		sc := flat(h)
		var text strings.Builder
		in := false
		for _, l := range strings.Split(sc, "\n") {
			l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "│"))
			if strings.HasPrefix(l, "a: this call") {
				in = true
			}
			if strings.HasPrefix(l, "because of:") {
				in = false
			}
			if in {
				text.WriteString(l)
			}
		}
		// a wrapped line loses the space it broke at: words are compared
		// without spaces
		joined := strings.ReplaceAll(text.String(), " ", "")
		if got := text.String(); strings.Contains(got, "…") || !strings.Contains(joined, "A:always,for"+scope) {
			t.Errorf("%d columns: the card names what A grants as %q, want the whole scope %q:\n%s", w, got, scope, sc)
		}
	}
}
