package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// A card taller than its pane (a call whose preview is a long mail body,
// an opened card, an opened input) was cut at the pane's foot: what it
// says below (the reason, what a and A cover, "because of") could not be
// read, and its answer keys never came on, for its call was never all on
// screen. J (and ctrl+d) scrolls it, K (and ctrl+u) back; a line says how
// much more is below and above; once its call has been on screen the
// answers act, scrolled or not; another card starts at its top.

// longPreview is a preview of n lines, "preview line 1" to "preview line n".
func longPreview(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "preview line %d\n", i)
	}
	return b.String()
}

// flat is the screen's text, without styles.
func flat(h *harness) string { return ansi.Strip(h.screen()) }

// scrollToFoot presses J until the pane says nothing more is below, and
// fails if it never does.
func scrollToFoot(t *testing.T, h *harness) {
	t.Helper()
	for i := 0; strings.Contains(flat(h), "↓ "); i++ {
		if i == 50 {
			t.Fatalf("50 presses of J and the card still has more below:\n%s", flat(h))
		}
		h.keys("J")
	}
}

func TestACardTallerThanItsPaneScrolls(t *testing.T) {
	t.Parallel()
	const lastLine = `because of: Email from alice@example.com: "Invoice December"`
	const keysLine = "a: this call · A: always, for sheets.appendRow"
	tall := func(t *testing.T) *harness {
		t.Helper()
		s := newStub()
		s.attention[0].Preview = longPreview(93)
		h := newHarness(t, s, 80, 24)
		h.keys("3")
		if n := h.m.at.rowHeight(0); n != 100 {
			t.Fatalf("the card is %d lines, want 100", n)
		}
		return h
	}

	t.Run("J shows its last line, and a line says what is below and above", func(t *testing.T) {
		t.Parallel()
		h := tall(t)
		sc := flat(h)
		fits(t, h.screen())
		if strings.Contains(sc, lastLine) || strings.Contains(sc, keysLine) {
			t.Fatalf("a 100-line card shows its last lines in an 18-line pane:\n%s", sc)
		}
		if !strings.Contains(sc, "more lines · J") || !strings.Contains(sc, "↓ ") {
			t.Errorf("nothing says the card goes on below, nor how to see it:\n%s", sc)
		}
		if !strings.Contains(sc, "J card ↓") {
			t.Errorf("the help bar does not offer J:\n%s", sc)
		}
		scrollToFoot(t, h)
		sc = flat(h)
		fits(t, h.screen())
		for _, want := range []string{lastLine, keysLine, "preview line 93", "↑ ", "more lines · K"} {
			if !strings.Contains(sc, want) {
				t.Errorf("scrolled to its foot, the card does not show %q:\n%s", want, sc)
			}
		}
		if strings.Contains(sc, "Add row for alice@example.com ") {
			t.Errorf("scrolled to its foot, the card still shows its title line:\n%s", sc)
		}
		// K goes back to its top
		for i := 0; strings.Contains(flat(h), "↑ ") && i < 50; i++ {
			h.keys("K")
		}
		if sc = flat(h); !strings.Contains(sc, "> APPROVAL") || strings.Contains(sc, lastLine) {
			t.Errorf("K back to the top does not show the card's title:\n%s", sc)
		}
	})

	t.Run("its answers wait until its call has been read, and act while it is scrolled", func(t *testing.T) {
		t.Parallel()
		h := tall(t)
		h.keys("a")
		if got := h.api.actions(); len(got) != 0 {
			t.Fatalf("a approved a card whose call was not read: %v", got)
		}
		if sc := strings.Join(strings.Fields(flat(h)), " "); !strings.Contains(sc, "J scrolls it") {
			t.Errorf("the status line does not say J brings the rest:\n%s", flat(h))
		}
		scrollToFoot(t, h)
		h.keys("a")
		if got := h.api.actions(); !slices.Equal(got, []string{"Approve m7 always=false"}) {
			t.Fatalf("scrolled to its foot, a does not approve: %v\n%s", got, flat(h))
		}
	})

	t.Run("another card starts at its top", func(t *testing.T) {
		t.Parallel()
		h := tall(t)
		scrollToFoot(t, h)
		h.keys("j")
		if sc := flat(h); !strings.Contains(sc, "> UNCERTAIN") {
			t.Fatalf("j does not select the next card:\n%s", sc)
		}
		h.keys("k")
		sc := flat(h)
		if !strings.Contains(sc, "> APPROVAL") || strings.Contains(sc, lastLine) || !strings.Contains(sc, "↓ ") {
			t.Errorf("back on the tall card, it is not at its top:\n%s", sc)
		}
		// read again from the top: its answers wait until it is
		h.keys("a")
		if got := h.api.actions(); len(got) != 0 {
			t.Errorf("a approved the card come back to at its top: %v", got)
		}
	})

	t.Run("ctrl+d and ctrl+u scroll it as J and K do", func(t *testing.T) {
		t.Parallel()
		h := tall(t)
		for i := 0; strings.Contains(flat(h), "↓ ") && i < 50; i++ {
			h.send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
		}
		if sc := flat(h); !strings.Contains(sc, lastLine) {
			t.Fatalf("ctrl+d does not scroll the card to its foot:\n%s", sc)
		}
		for i := 0; strings.Contains(flat(h), "↑ ") && i < 50; i++ {
			h.send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		}
		if sc := flat(h); !strings.Contains(sc, "> APPROVAL") {
			t.Errorf("ctrl+u does not scroll the card back to its top:\n%s", sc)
		}
	})

	t.Run("an opened input taller than the pane scrolls", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.inputs["email-to-sheets"][0].Outputs[0].Preview = longPreview(100)
		h := newHarness(t, s, 80, 24)
		h.keys("2", "g", "enter")
		sc := flat(h)
		if !strings.Contains(sc, "preview line 1 ") || strings.Contains(sc, "preview line 100") {
			t.Fatalf("the opened input should show its first preview lines, not its last:\n%s", sc)
		}
		if !strings.Contains(sc, "↓ ") {
			t.Errorf("nothing says the input goes on below:\n%s", sc)
		}
		scrollToFoot(t, h)
		if sc = flat(h); !strings.Contains(sc, "preview line 100") || !strings.Contains(sc, "↑ ") {
			t.Errorf("scrolled to its foot, the input does not show its last line:\n%s", sc)
		}
		fits(t, h.screen())
	})
}
