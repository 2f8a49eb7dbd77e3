package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// An answer is a call to the engine made after the key, in a Cmd. Pressed
// just before q, it could still be on its way when the program ended and
// keep closed the engine: the person saw "approved" nowhere, nothing told
// them, and the card waited on. q now waits for answers on their way and
// says so; q again quits at once.
func TestQuitWaitsForAnAnswerOnItsWay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keys []string
		call string
	}{
		{"approve", []string{"3", "a"}, "Approve m7 always=false"},
		{"reject, confirmed", []string{"3", "x", "y"}, "Reject m7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), 80, 24)
			h.keys(c.keys[:len(c.keys)-1]...)
			// the last key's Cmd is held, as the program holds it while
			// the call is made
			_, onWay := h.m.Update(press(c.keys[len(c.keys)-1]))
			if onWay == nil {
				t.Fatalf("%s made no call", c.keys[len(c.keys)-1])
			}
			_, cmd := h.m.Update(press("q"))
			if quits(cmd) {
				t.Fatalf("q quit with the answer still on its way")
			}
			if s := ansi.Strip(h.screen()); !strings.Contains(s, "on its way") {
				t.Errorf("the screen does not say why q waits:\n%s", s)
			}
			h.run(onWay)
			if got := h.api.actions(); !slices.Equal(got, []string{c.call}) {
				t.Fatalf("calls = %v, want %s", got, c.call)
			}
			if !h.quit {
				t.Errorf("keep did not quit once the answer was taken:\n%s", h.screen())
			}
		})
	}

	t.Run("q twice quits at once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 80, 24)
		h.keys("3")
		h.m.Update(press("a"))
		h.m.Update(press("q"))
		if _, cmd := h.m.Update(press("q")); !quits(cmd) {
			t.Errorf("a second q did not quit")
		}
	})

	t.Run("a question cancelled holds nothing up", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 80, 24)
		h.keys("3", "x", "n")
		if _, cmd := h.m.Update(press("q")); !quits(cmd) {
			t.Errorf("q did not quit after the question was cancelled")
		}
	})
}

// quits says whether cmd ends the program (alone or in a batch).
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if quits(c) {
				return true
			}
		}
	}
	return false
}

// An answer that fails on its way is said, not quit over: the person
// waiting for keep to close learns it was not taken.
func TestQuitDoesNotHideAnAnswerThatFailed(t *testing.T) {
	t.Parallel()
	s := newStub()
	h := newHarness(t, s, 80, 24)
	h.keys("3")
	_, onWay := h.m.Update(press("a"))
	h.m.Update(press("q"))
	s.fail = errors.New("database is locked")
	h.run(onWay)
	if h.quit {
		t.Fatalf("keep quit over an answer that failed")
	}
	if got := ansi.Strip(h.screen()); !strings.Contains(got, "database is locked") {
		t.Errorf("the failure is not on screen:\n%s", got)
	}
}
