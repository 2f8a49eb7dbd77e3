package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// An approval or a reconciliation prompt on screen answers to its keys
// where the person is: the first screen has the focus on Workflows and the
// prompt in Attention below it.
func TestAttentionKeysWorkWhereThePersonIs(t *testing.T) {
	t.Parallel()

	t.Run("on the first screen, ? names approve and reject and a approves the approval shown", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		if h.m.focus != focusWorkflows {
			t.Fatalf("focus = %d, want Workflows at start", h.m.focus)
		}
		h.keys("?")
		help := h.m.helpView()
		for _, want := range []string{"a approve", "x reject"} {
			if !strings.Contains(ansi.Strip(help), want) {
				t.Errorf("? on the first screen does not name %q:\n%s", want, help)
			}
		}
		h.keys("?", "a")
		if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7 always=false"}) {
			t.Fatalf("calls = %v, want the approval shown approved", got)
		}
		if !strings.Contains(h.screen(), "approved Add row for alice@example.com") {
			t.Errorf("the status line does not say what was approved:\n%s", h.screen())
		}
	})

	t.Run("from Inputs, x asks to reject the selected approval", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("2", "x")
		if h.m.confirm == nil {
			t.Fatal("x from Inputs did not ask to reject")
		}
		h.keys("y")
		if got := h.api.actions(); !slices.Equal(got, []string{"Reject m7"}) {
			t.Fatalf("calls = %v", got)
		}
	})

	t.Run("a reconciliation prompt selected in Attention answers c from Workflows", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "down", "1")
		if !strings.Contains(ansi.Strip(h.m.helpView()), "c check again") {
			t.Errorf("help lacks c check again: %s", h.m.helpView())
		}
		h.keys("c")
		if got := h.api.actions(); !slices.Equal(got, []string{"Resolve m3 try-again"}) {
			t.Fatalf("calls = %v", got)
		}
	})

	t.Run("always widens a grant for good: only in Attention itself", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("A")
		if got := h.api.actions(); len(got) != 0 {
			t.Fatalf("A from Workflows called %v", got)
		}
	})

	t.Run("a prompt not on screen takes no key", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("4", "1", "a") // Run log is below now
		narrow := newHarness(t, newStub(), 80, 24)
		narrow.keys("1", "a") // tabs: only Workflows is shown
		if got := append(h.api.actions(), narrow.api.actions()...); len(got) != 0 {
			t.Fatalf("a answered a prompt that was not on screen: %v", got)
		}
		if strings.Contains(ansi.Strip(narrow.m.helpView()), "approve") {
			t.Errorf("help offers approve for a prompt not on screen: %s", narrow.m.helpView())
		}
	})

	t.Run("in tabs the first screen opens on Attention while a prompt waits, and a approves it", func(t *testing.T) {
		t.Parallel()
		narrow := newHarness(t, newStub(), 80, 24)
		if !strings.Contains(ansi.Strip(narrow.m.helpView()), "approve") {
			t.Errorf("the first screen's help does not name approve: %s", narrow.m.helpView())
		}
		narrow.keys("a")
		if got := narrow.api.actions(); len(got) != 1 || !strings.HasPrefix(got[0], "Approve ") {
			t.Fatalf("actions = %v, want the approval answered", got)
		}
	})
}
