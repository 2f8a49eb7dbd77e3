package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The program runs a Cmd on a goroutine of its own and feeds its message
// back after whatever keys were already read: a double press reaches
// Update twice before anything a key's Cmd sends. A question opened by a
// message of its own so could open again after it was answered, and its
// yes send the same answer twice. Here the keys reach Update as the
// program delivers them, and a Cmd's message only when the test says.
func TestADoublePressedAnswerIsAskedAndSentOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key, want string
	}{
		{"reject", "x", "Reject m7"},
		{"pause", "p", "Pause email-to-sheets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newStub(), 80, 24)
			h.keys("3")
			// Update alone: the Cmd it returns waits, as on the program's goroutine
			pressOnly := func(k string) tea.Cmd {
				_, cmd := h.m.Update(press(k))
				return cmd
			}
			first := pressOnly(tc.key)
			second := pressOnly(tc.key)
			h.run(first)
			h.keys("y")
			h.run(second)
			h.keys("y")
			n := 0
			for _, c := range h.api.actions() {
				if c == tc.want {
					n++
				}
			}
			if n != 1 || h.m.confirm != nil {
				t.Fatalf("%s pressed twice, then y twice: %d calls of %q (calls %v), a question still open: %v",
					tc.key, n, tc.want, h.api.actions(), h.m.confirm != nil)
			}
		})
	}
}
