package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The API serves 100,000 inputs a page at a time, made on demand, so the
// cost measured is the TUI's: reading a screenful, laying it out, drawing.

func BenchmarkFirstScreen(b *testing.B) {
	api := newBigAPI(100_000)
	for b.Loop() {
		h := newHarness(b, api, 120, 40)
		h.keys("2")
		_ = h.screen()
	}
}

func BenchmarkPageDown(b *testing.B) {
	api := newBigAPI(100_000)
	h := newHarness(b, api, 120, 40)
	h.keys("2")
	pgdn := press("pgdown")
	for b.Loop() {
		_, cmd := h.m.Update(pgdn)
		h.run(cmd)
		_ = h.screen()
	}
	b.ReportMetric(float64(len(h.m.in.items)), "inputs-held")
	_ = tea.KeyPgDown
}

// G and g at a million inputs: each is one page read from its end, however
// far the other end is.
func BenchmarkBottomAndTop(b *testing.B) {
	api := newBigAPI(1_000_000)
	h := newHarness(b, api, 120, 40)
	h.keys("2")
	for b.Loop() {
		h.keys("G")
		_ = h.screen()
		h.keys("g")
		_ = h.screen()
	}
	if s := h.m.in.Selected(); s == nil || s.InputID != "1000000" {
		b.Fatalf("g ended on %+v", s)
	}
}
