package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// An answer goes to the engine in a Cmd of its own; until the list is
// read again the card stays under the cursor with its keys on. A key
// repeated (held down, or pressed twice on a slow daemon) sent the answer
// again for each press. The repeat now answers nothing and says the
// answer is on its way; once the list has been read again after it, the
// card is gone or asks anew.
func TestARepeatedAnswerKeySendsOneAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keys []string // the first answer, its Cmds held back
		more []string // pressed before it comes back
		want []string
	}{
		{"a held down", []string{"a"}, []string{"a", "a"}, []string{"Approve m7 always=false"}},
		{"a then A", []string{"a"}, []string{"A"}, []string{"Approve m7 always=false"}},
		{"reject confirmed, then x again", []string{"x", "y"}, []string{"x"}, []string{"Reject m7"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), 120, 40)
			h.keys("3")
			var held []tea.Cmd
			for _, k := range c.keys {
				_, cmd := h.m.Update(press(k))
				if k == "x" { // the question opens at once
					h.run(cmd)
					continue
				}
				held = append(held, cmd)
			}
			for _, k := range c.more {
				_, cmd := h.m.Update(press(k))
				held = append(held, cmd)
			}
			if !strings.Contains(h.m.errText, "on its way") {
				t.Errorf("the repeat does not say the answer is on its way: %q", h.m.errText)
			}
			for _, cmd := range held {
				h.run(cmd)
			}
			if got := h.api.actions(); !slices.Equal(got, c.want) {
				t.Errorf("calls %v, want %v", got, c.want)
			}
		})
	}
}

// An answer the engine did not take (it was away) can be given again,
// and once the list has been read after a taken one, a card still there
// can be answered anew.
func TestAnAnswerNotTakenCanBeGivenAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 120, 40)
	h.keys("3")
	h.api.fail = errors.New("connection refused")
	h.keys("a")
	h.api.fail = nil
	h.keys("a")
	h.keys("a") // the stub keeps the card: read again, it asks anew
	want := []string{"Approve m7 always=false", "Approve m7 always=false", "Approve m7 always=false"}
	if got := h.api.actions(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

// A key the help names for answers and actions, pressed where it is off,
// did nothing and said nothing: a dead key, or, worse, one that looks as
// if it answered. It now says why it does nothing.
func TestAnIdleActionKeySaysWhy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keys []string
		want string
	}{
		{"approve in Workflows", []string{"1", "a"}, "a (approve) is not a key of this pane"},
		{"retry on a run that did not fail", []string{"4", "r"}, "r (retry) does nothing here"},
		{"approve on an uncertain call", []string{"3", "down", "a"}, "a (approve) does nothing here"},
		{"approve in the dry run", []string{"1", "d", "a"}, "does nothing in the dry run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), 80, 24)
			h.keys(c.keys...)
			for _, got := range h.api.actions() {
				if !strings.HasPrefix(got, "dry-run") {
					t.Fatalf("an idle key acted: %v", got)
				}
			}
			if !strings.Contains(h.m.errText, c.want) {
				t.Errorf("status line %q, want it to say %q\n%s", h.m.errText, c.want, h.screen())
			}
		})
	}
}
