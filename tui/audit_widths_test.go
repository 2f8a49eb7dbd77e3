package tui

import (
	"strings"
	"testing"
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
