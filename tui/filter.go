package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// filterBox is the one-line filter a list opens with `/`. It is not
// bubbles' textinput: that pulls in a clipboard module this build does not
// carry, and a filter needs no more than typing, deleting and clearing.
type filterBox struct {
	value   []rune
	editing bool
}

func (f *filterBox) Value() string { return string(f.value) }
func (f *filterBox) Active() bool  { return f.editing || len(f.value) > 0 }
func (f *filterBox) Editing() bool { return f.editing }
func (f *filterBox) Start()        { f.editing = true }
func (f *filterBox) Stop()         { f.editing = false }
func (f *filterBox) Clear()        { f.value, f.editing = nil, false }

// Update edits the value; changed says whether the list must be filtered again.
func (f *filterBox) Update(msg tea.KeyPressMsg) (changed bool) {
	switch msg.String() {
	case "backspace", "ctrl+h":
		if len(f.value) > 0 {
			f.value = f.value[:len(f.value)-1]
			return true
		}
	case "ctrl+u":
		if len(f.value) > 0 {
			f.value = nil
			return true
		}
	case "ctrl+w":
		s := strings.TrimRight(string(f.value), " ")
		if i := strings.LastIndexByte(s, ' '); i >= 0 {
			s = s[:i+1]
		} else {
			s = ""
		}
		if s != string(f.value) {
			f.value = []rune(s)
			return true
		}
	default:
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			f.value = append(f.value, []rune(msg.Text)...)
			return true
		}
	}
	return false
}

// View is the filter's row: what is typed, with a cursor while editing.
func (f *filterBox) View(st *styles, width int) string {
	s := "/ " + string(f.value)
	if f.editing {
		return st.Filter.Render(fit(s, width-1)) + st.Selected.Render(" ")
	}
	return st.Dim.Render(fit(s, width))
}
