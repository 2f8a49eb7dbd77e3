package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Layer 2: golden views of each pane at 80×24 (tabs) and 120×40 (the
// sketch's layout), with no colour and a fixed clock. Regenerate with
// `go test ./tui -run TestGolden -update`.
func TestGolden(t *testing.T) {
	t.Parallel()
	views := []struct {
		name string
		keys []string
	}{
		{"workflows", []string{"1"}},
		{"inputs", []string{"2"}},
		{"inputs_details", []string{"2", "enter"}},
		{"attention", []string{"3"}},
		{"attention_confirm", []string{"3", "down", "f"}},
		{"runs", []string{"4"}},
		{"trace", []string{"4", "down", "down", "enter"}},
		{"filter", []string{"2", "/", "b", "o", "b"}},
		{"help", []string{"3", "?"}},
		{"help_first_screen", []string{"?"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, newStub(), size[0], size[1])
				h.keys(v.keys...)
				teatest.RequireEqualOutput(t, []byte(h.screen()))
			})
		}
	}
}
