package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// filterRow is the Workflows pane's filter row as shown, frame and gutter
// left out.
func filterRow(t *testing.T, h *harness) string {
	t.Helper()
	for _, l := range strings.Split(flat(h), "\n") {
		if i := strings.Index(l, "/ "); i >= 0 && strings.HasPrefix(l, "│") {
			return strings.TrimRight(strings.TrimSuffix(strings.TrimRight(l[i:], " "), "│"), " ")
		}
	}
	t.Fatalf("no filter row on screen:\n%s", flat(h))
	return ""
}

// Typed past the box's width, the filter showed its start and cut its
// end: what was being typed, where the cursor is, could not be seen.
func TestAFilterLongerThanItsBoxShowsItsEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 40, 24)
	h.keys("1", "/")
	typed := "the quick brown fox jumps over the lazy dog and then some"
	for _, r := range typed {
		h.keys(string(r))
	}
	row := filterRow(t, h)
	if !strings.HasSuffix(row, "lazy dog and then some") {
		t.Errorf("the end of what is typed is not on screen: %q", row)
	}
	if !strings.HasPrefix(row, "/ …") {
		t.Errorf("nothing says the start is out of view: %q", row)
	}
	if h.m.wf.filter.Value() != typed {
		t.Errorf("the filter holds %q, want %q", h.m.wf.filter.Value(), typed)
	}
	// kept with enter, it is a setting read from its start
	h.keys("enter")
	if row := filterRow(t, h); !strings.HasPrefix(row, "/ the quick") {
		t.Errorf("the filter kept shows %q", row)
	}
}

// Backspace took one code point: after an accent typed as a combining mark
// it left the bare letter, after an emoji joined of several it left part
// of it. It takes what shows as one character.
func TestBackspaceInTheFilterTakesOneCharacterAsSeen(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		typed []string
		want  string
	}{
		{"e and a combining acute", []string{"c", "a", "f", "e", "\u0301"}, "caf"},
		{"a decomposed accent typed at once", []string{"c", "a", "f", "e\u0301"}, "caf"},
		{"a family emoji, ZWJ by ZWJ", []string{"x", "👩", "\u200d", "👩", "\u200d", "👧"}, "x"},
		{"a flag", []string{"x", "🇫🇷"}, "x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), 80, 24)
			h.keys("1", "/")
			h.keys(c.typed...)
			h.keys("backspace")
			if got := h.m.wf.filter.Value(); got != c.want {
				t.Errorf("after backspace the filter is %q (%+q), want %q", got, got, c.want)
			}
		})
	}
}

// A paste into the filter being typed was dropped. It goes in as typed, on
// one line, without the control characters that would reach the terminal.
func TestAPasteGoesIntoTheFilter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 80, 24)
	h.keys("1", "/", "i")
	h.send(tea.PasteMsg{Content: "nbox\r\n-arch\x1b\x07\tive\n"})
	if got, want := h.m.wf.filter.Value(), "inbox -arch ive"; got != want {
		t.Errorf("the pasted filter is %q, want %q", got, want)
	}
	h.send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	h.send(tea.PasteMsg{Content: "inbox\n"})
	var shown []string
	for _, w := range h.m.wf.shown {
		shown = append(shown, w.Name)
	}
	if !slices.Equal(shown, []string{"inbox-archive"}) {
		t.Errorf("the pasted filter shows %v", shown)
	}
	if row := filterRow(t, h); row != "/ inbox" {
		t.Errorf("the filter row is %q", row)
	}
	// in a paged list the filter is asked of the engine
	h.keys("esc", "k", "2", "/")
	h.send(tea.PasteMsg{Content: "alice"})
	if len(h.m.in.items) != 1 || !strings.Contains(h.m.in.items[0].Title, "alice") {
		t.Errorf("the pasted filter of Inputs shows %v", h.m.in.items)
	}
}

// Where no filter is being typed a paste is not keys: an approval card
// under the cursor is not answered by an "a" in pasted text.
func TestAPasteOutsideAFilterAnswersNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 120, 40)
	h.keys("3")
	h.send(tea.PasteMsg{Content: "a"}, tea.PasteMsg{Content: "x"})
	if got := h.api.actions(); len(got) != 0 || h.m.confirm != nil {
		t.Errorf("a paste acted: %v", got)
	}
}
