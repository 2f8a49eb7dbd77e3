package tui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/clipperhouse/uax29/v2/graphemes"
)

// filterBox is the one-line filter a list opens with `/`. It is not
// bubbles' textinput: that pulls in a clipboard module this build does not
// carry, and a filter needs no more than typing, pasting, deleting and
// clearing.
type filterBox struct {
	value   string
	editing bool
}

func (f *filterBox) Value() string { return f.value }
func (f *filterBox) Active() bool  { return f.editing || f.value != "" }
func (f *filterBox) Editing() bool { return f.editing }
func (f *filterBox) Start()        { f.editing = true }
func (f *filterBox) Stop()         { f.editing = false }
func (f *filterBox) Clear()        { f.value, f.editing = "", false }

// Update edits the value; changed says whether the list must be filtered again.
func (f *filterBox) Update(msg tea.KeyPressMsg) (changed bool) {
	switch msg.String() {
	case "backspace", "ctrl+h":
		if f.value != "" {
			// what the person sees as one character: an accent typed as
			// a combining mark, or an emoji joined of several, goes whole
			f.value = f.value[:lastCluster(f.value)]
			return true
		}
	case "ctrl+u":
		if f.value != "" {
			f.value = ""
			return true
		}
	case "ctrl+w":
		s := strings.TrimRight(f.value, " ")
		if i := strings.LastIndexByte(s, ' '); i >= 0 {
			s = s[:i+1]
		} else {
			s = ""
		}
		if s != f.value {
			f.value = s
			return true
		}
	default:
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			f.value += msg.Text
			return true
		}
	}
	return false
}

// Paste adds pasted text as typed: on one line, since a filter is one, and
// without control characters, which would drive the terminal the box is
// drawn on rather than match anything.
func (f *filterBox) Paste(text string) (changed bool) {
	lines := strings.FieldsFunc(text, func(r rune) bool {
		return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'
	})
	s := strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, strings.Join(lines, " "))
	if s == "" {
		return false
	}
	f.value += s
	return true
}

// lastCluster is where s's last grapheme cluster begins.
func lastCluster(s string) int {
	last := 0
	for g := graphemes.FromString(s); g.Next(); {
		last = g.Start()
	}
	return last
}

// View is the filter's row: what is typed, with a cursor while editing.
// Typed past the box, its end shows, where the cursor is: the start was
// seen as it was typed, and what is being typed now is what needs seeing.
func (f *filterBox) View(st *styles, width int) string {
	s := "/ " + f.value
	if !f.editing {
		return st.Dim.Render(fit(s, width))
	}
	room := width - 1 // the cursor's cell
	if cells(s) > room {
		const head = "/ " + ellipsis
		s = head + tailWithin(f.value, room-cells(head))
		if cells(s) > room {
			s = fit(s, room)
		}
	}
	return st.Filter.Render(s) + st.Selected.Render(" ")
}

// tailWithin is the longest end of s, in whole grapheme clusters, at most
// w cells wide.
func tailWithin(s string, w int) string {
	var starts, widths []int
	for g := graphemes.FromString(s); g.Next(); {
		starts, widths = append(starts, g.Start()), append(widths, cells(g.Value()))
	}
	from := len(s)
	for i := len(starts) - 1; i >= 0 && w-widths[i] >= 0; i-- {
		w -= widths[i]
		from = starts[i]
	}
	return s[from:]
}
