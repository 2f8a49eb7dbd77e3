package tui

import (
	"slices"
	"testing"
)

// An answer names the attempt its card asked about, so that once the call
// has been sent again and is asked about anew, the engine refuses an
// answer read off the card of the question before (engine: askedNow).
func TestAnswersNameTheAttemptTheirCardAsked(t *testing.T) {
	t.Parallel()
	s := newStub()
	s.attention[0].Attempt = 1
	s.attention[1].Attempt = 2
	h := newHarness(t, s, 120, 40)
	h.keys("3", "a")
	h.keys("down", "f", "y")
	if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7@1 always=false", "Resolve m3@2 not-happened"}) {
		t.Fatalf("calls %v, want each answer to name its card's attempt", got)
	}
}
