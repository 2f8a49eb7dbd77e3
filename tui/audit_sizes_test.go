package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// An answer key pressed in Attention when its box is not drawn at all (the
// open help, or a window too short, takes all of its room) answered
// nothing, rightly, but said nothing either: the key looked dead. It says
// why, as it does for a card only partly on screen.
func TestAnAnswerKeyOnAPaneNotDrawnSaysWhy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		w, h int
		keys []string
		want string
	}{
		{"the help takes the pane's room", 40, 10, []string{"?", "3", "x"}, "? closes it"},
		{"a window too short for the box", 20, 5, []string{"3", "a"}, "taller window"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), c.w, c.h)
			h.keys(c.keys...)
			if got := h.api.actions(); len(got) != 0 {
				t.Fatalf("a key answered a card not on screen: %v", got)
			}
			if h.m.confirm != nil {
				t.Fatalf("a key asked to confirm an answer to a card not on screen: %q", h.m.confirm.question)
			}
			if !strings.Contains(h.m.errText, c.want) {
				t.Errorf("the status line does not say why the key did nothing (want %q): %q\n%s", c.want, h.m.errText, h.screen())
			}
		})
	}
}

// While a confirmation or a filter is open the help bar is their one
// line, not the full help ? opened; the layout kept the full help's rows
// anyway, so the screen came out shorter than the window, the box cut
// short above a gap, the card the question is about smaller than it
// could be (or gone in a small window).
func TestTheFullHelpsRoomGoesBackToThePaneWhileAQuestionIsOpen(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"a confirmation", []string{"3", "?", "x"}},
		{"a filter being typed", []string{"3", "?", "/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), 80, 24)
			h.keys(c.keys...)
			lines := strings.Split(h.screen(), "\n")
			if len(lines) != 24 {
				t.Fatalf("the screen is %d lines in a window of 24:\n%s", len(lines), h.screen())
			}
			// the box reaches down to the status line
			if foot := ansi.Strip(lines[len(lines)-3]); !strings.HasPrefix(foot, "╰") {
				t.Errorf("the line above the status line is not the box's foot: %q\n%s", foot, h.screen())
			}
			h.keys("esc")
			if lines := strings.Split(h.screen(), "\n"); len(lines) != 24 {
				t.Errorf("closed again, the screen is %d lines in a window of 24:\n%s", len(lines), h.screen())
			}
		})
	}
}
