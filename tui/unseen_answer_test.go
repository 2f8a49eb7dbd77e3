package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A card's answer keys act only while its title and call are all on
// screen. When they are not (the card was opened and its arguments run past
// the pane, or the window is short), the keys are off; pressing one did
// nothing at all, and the card looked as if it could not be answered. The
// key still answers nothing, but the status line says why and what brings
// the answer back.
func TestAnAnswerKeyOnACardNotAllOnScreenSaysWhy(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 800)
	params, _ := json.Marshal(map[string]string{"sheet": "invoices.csv", "note": long})

	for _, c := range []struct {
		name string
		w, h int
		keys []string
		want string
		// fix is the key the message names, after which a answers
		fix string
	}{
		{"opened past the pane's foot", 80, 24, []string{"3", "enter", "a"}, "esc folds it", "esc"},
		{"a short window", 60, 10, []string{"3", "a"}, "taller window", ""},
		{"under the open help", 80, 20, []string{"3", "?", "a"}, "? closes it", "?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newStub()
			s.attention[0].Params = params
			h := newHarness(t, s, c.w, c.h)
			h.keys(c.keys...)
			if got := h.api.actions(); len(got) != 0 {
				t.Fatalf("a answered a card the person could not read whole: %v", got)
			}
			flat := strings.Join(strings.Fields(ansi.Strip(h.screen())), " ")
			if !strings.Contains(flat, c.want) {
				t.Errorf("the screen does not say why a did nothing (%q):\n%s", c.want, h.screen())
			}
			if c.fix != "" {
				h.keys(c.fix, "a")
				if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7 always=false"}) {
					t.Errorf("folded, a does not approve: %v\n%s", got, h.screen())
				}
			}
		})
	}
}
