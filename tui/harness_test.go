package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
)

// harness drives a Model the way the program would, but synchronously:
// every Cmd is run at once and its message fed back, so a test reads as
// keys in, screen and calls out.
type harness struct {
	t    testing.TB
	api  *stubAPI
	m    *Model
	quit bool
	// raw is what the model wrote to the terminal itself (tea.Raw): the
	// program would write it as it stands.
	raw []string
}

func newHarness(t testing.TB, api api.API, w, h int) *harness {
	t.Helper()
	return newHarnessAt(t, api, func() time.Time { return testNow }, w, h)
}

// newHarnessAt is newHarness on another clock (the real engine's).
func newHarnessAt(t testing.TB, api api.API, now func() time.Time, w, h int) *harness {
	t.Helper()
	m := New(api, Options{Now: now, NoColor: true})
	m.noTimers = true
	hs := &harness{t: t, m: m}
	if s, ok := api.(*stubAPI); ok {
		hs.api = s
	}
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

func (h *harness) send(msgs ...tea.Msg) {
	h.t.Helper()
	for _, msg := range msgs {
		_, cmd := h.m.Update(msg)
		h.run(cmd)
	}
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.quit = true
	case tea.RawMsg:
		h.raw = append(h.raw, fmt.Sprint(msg.Msg))
	default:
		_, next := h.m.Update(msg)
		h.run(next)
	}
}

// keys presses each key in turn ("enter", "esc", "tab", "a", …).
func (h *harness) keys(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(press(k))
	}
}

func (h *harness) screen() string { return h.m.render() }

func press(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}
