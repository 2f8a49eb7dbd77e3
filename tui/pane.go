package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// pane is one of the five panes. The root routes keys to the focused one
// and sizes all of them once per resize; everything else is the pane's.
type pane interface {
	Title() string
	// SetSize is the inner size (inside the frame).
	SetSize(width, height int)
	Focus()
	Blur()
	// Update handles a key or a message meant for this pane.
	Update(msg tea.Msg) tea.Cmd
	View() string
	// EnableKeys switches on the bindings that apply to the selection;
	// the root has switched every action off before.
	EnableKeys(k *keyMap)
	// Editing: a filter is being typed, so keys are text, not commands.
	Editing() bool
}

// base is what every list pane has: a size, a focus, a cursor over rows of
// varying height, and a filter.
type base struct {
	sh            *shared
	width, height int
	focused       bool
	cursor        int
	offset        int
	filter        filterBox
	err           error
	// covered is how many of the pane's last rows an overlay (the toast)
	// hides now; the model sets it, rowShown counts it.
	covered int
	// gutter is the cells left of every line where the selected row is
	// marked in text (selMark), not only in colour: NO_COLOR, a screen
	// reader or a terminal that drops reverse video still shows which row
	// the keys act on. Every pane's lines pass through framed.
	gutter int

	// A selected row taller than the list (a card with a long preview, an
	// opened card or input) is scrolled within, by the CardDown and CardUp
	// keys: it then fills the list alone, cardOff of its lines above the
	// pane's top, and a line above and below it says how many more there
	// are. cardSeen is how many of its first lines have been on screen, with
	// no gap between, since it came under the cursor: what an action on it
	// counts as read. Both belong to the row cardOf names; another row under
	// the cursor, or the same one opened or folded, starts at its top.
	// cardID names the selected row as drawn; a pane that leaves it nil
	// has no rows scrolled within.
	cardID   func() string
	cardOf   string
	cardOff  int
	cardSeen int
}

// selMark marks the selected row in text.
const selMark = "> "

// framed is lines with the gutter left of each, the mark beside line mark
// (-1: none).
func (b *base) framed(lines []string, mark int) string {
	for i, l := range lines {
		g := strings.Repeat(" ", b.gutter)
		if i == mark {
			g = selMark[:b.gutter]
		}
		// a row laid out wider than a very narrow pane (its labels and
		// columns have a least width) is cut here: lipgloss would wrap
		// it into more lines than the box has, and the box past the screen
		if ansi.StringWidth(l) > b.width {
			l = ansi.Truncate(l, b.width, "")
		}
		lines[i] = g + l
	}
	return strings.Join(lines, "\n")
}

// SetSize keeps the gutter apart: width is what a row has.
func (b *base) SetSize(w, h int) {
	w = max(w, 0)
	b.gutter = min(len(selMark), w)
	if w-b.gutter != b.width {
		b.cardOf = "" // its lines are wrapped again: they are other lines
	}
	b.width, b.height = w-b.gutter, max(h, 0)
}
func (b *base) Focus()        { b.focused = true }
func (b *base) Blur()         { b.focused = false; b.filter.Stop() }
func (b *base) Editing() bool { return b.filter.Editing() }

// listHeight is what is left for rows once the filter row is shown.
func (b *base) listHeight() int {
	if b.filter.Active() {
		return max(b.height-1, 0)
	}
	return b.height
}

// move applies a movement key to the cursor over n rows; it says whether
// the key was a movement at all.
func (b *base) move(msg tea.KeyPressMsg, n int, pageRows int) bool {
	k := b.sh.keys
	before := b.cursor
	defer func() {
		if b.cursor != before {
			b.cardOf = "" // another row: it is read from its top
		}
	}()
	switch {
	case keyIs(msg, k.Up):
		b.cursor--
	case keyIs(msg, k.Down):
		b.cursor++
	case keyIs(msg, k.PageUp):
		b.cursor -= max(pageRows, 1)
	case keyIs(msg, k.PageDown):
		b.cursor += max(pageRows, 1)
	case keyIs(msg, k.Top):
		b.cursor = 0
	case keyIs(msg, k.Bottom):
		b.cursor = n - 1
	default:
		return false
	}
	b.clamp(n)
	return true
}

func (b *base) clamp(n int) {
	b.cursor = min(b.cursor, n-1)
	b.cursor = max(b.cursor, 0)
	b.offset = min(b.offset, b.cursor)
}

// scroll moves the window so the cursor's rows are inside it.
func (b *base) scroll(n int, rowHeight func(int) int) {
	h := b.listHeight()
	if n == 0 {
		b.cursor, b.offset = 0, 0
		return
	}
	if b.cursor < b.offset {
		b.offset = b.cursor
		return
	}
	used := 0
	for i := b.cursor; i >= b.offset; i-- {
		used += rowHeight(i)
		if used > h {
			b.offset = min(i+1, b.cursor)
			return
		}
	}
}

// rowShown says whether the first need lines of the cursor's row are
// inside the window render draws: an action on the selection is taken only
// when the person can read what it acts on. It counts as render does.
func (b *base) rowShown(n int, rowHeight func(int) int, need int) bool {
	if n == 0 || b.cursor >= n {
		return false
	}
	if b.tall(n, rowHeight) {
		return b.seen(rowHeight(b.cursor)) >= max(need, 1)
	}
	if b.cursor < b.offset {
		return false
	}
	used := 0
	for i := b.offset; i < b.cursor; i++ {
		used += rowHeight(i)
	}
	return used+max(need, 1) <= b.listHeight()-b.covered
}

// render lays rows out from the window's top, adds the filter row, and
// pads to the pane's height; more says a line that follows the last row.
func (b *base) render(n int, rowLines func(i int, sel bool) []string, more string) string {
	lines := make([]string, 0, b.height)
	if b.filter.Active() {
		lines = append(lines, b.filter.View(b.sh.st, b.width))
	}
	if b.cursor < n && b.cardID != nil {
		if sel := rowLines(b.cursor, true); len(sel) > b.listHeight() {
			return b.renderCard(lines, sel)
		}
	}
	h := b.height
	i := b.offset
	mark := -1
	for ; i < n && len(lines) < h; i++ {
		if i == b.cursor {
			mark = len(lines)
		}
		for _, l := range rowLines(i, i == b.cursor) {
			if len(lines) == h {
				break
			}
			lines = append(lines, l)
		}
	}
	if more != "" && len(lines) < h && i >= n {
		lines = append(lines, b.sh.st.Dim.Render(pad(more, b.width)))
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", b.width))
	}
	return b.framed(lines, mark)
}

// tall says whether the selected row is taller than the list, and so is
// drawn alone and scrolled within.
func (b *base) tall(n int, rowHeight func(int) int) bool {
	return b.cardID != nil && b.cursor < n && rowHeight(b.cursor) > b.listHeight()
}

// cardWindow is where the selected row of total lines, taller than the
// list, is scrolled to: off lines above the pane's top, rows of it shown,
// and whether a line above and one below say that more is there. With too
// few lines for them, the row alone is shown.
func (b *base) cardWindow(total int) (off, rows int, above, below bool) {
	h := b.listHeight()
	if b.cardID != nil && b.cardOf == b.cardID() {
		off = b.cardOff
	}
	if h < 3 {
		off = max(min(off, total-h), 0)
		return off, h, false, false
	}
	// at the foot, only the line above: the last line is the row's own
	off = max(min(off, total-(h-1)), 0)
	above = off > 0
	rows = h
	if above {
		rows--
	}
	if below = off+rows < total; below {
		rows--
	}
	return off, rows, above, below
}

// seen is how many of the selected tall row's first lines have been on
// screen, counting what is now (less what an overlay covers), when it
// follows what was without a gap.
func (b *base) seen(total int) int {
	off, rows, _, below := b.cardWindow(total)
	hidden := b.covered
	if below {
		hidden-- // the line below goes under the overlay first
	}
	to := off + rows - max(hidden, 0)
	was := 0
	if b.cardID != nil && b.cardOf == b.cardID() {
		was = b.cardSeen
	}
	if off <= was {
		return max(was, to)
	}
	return was
}

// cardKey scrolls the selected row within, on CardDown and CardUp, half
// a pane at a time (so what was read and what comes join); it says
// whether the key was one of them.
func (b *base) cardKey(msg tea.KeyPressMsg, n int, rowHeight func(int) int) bool {
	k := b.sh.keys
	down, up := keyIs(msg, k.CardDown), keyIs(msg, k.CardUp)
	if (!down && !up) || !b.tall(n, rowHeight) {
		return false
	}
	total := rowHeight(b.cursor)
	seen := b.seen(total) // what is on screen now has been read
	off, _, _, _ := b.cardWindow(total)
	b.cardOf, b.cardSeen = b.cardID(), seen
	step := max(b.listHeight()/2, 1)
	if down {
		off += step
	} else {
		off -= step
	}
	b.cardOff = off
	b.cardOff, _, _, _ = b.cardWindow(total)
	b.cardSeen = b.seen(total)
	return true
}

// enableCardKeys switches on the keys that scroll the selected row, each
// while there is more its way.
func (b *base) enableCardKeys(k *keyMap, n int, rowHeight func(int) int) {
	if !b.tall(n, rowHeight) {
		return
	}
	_, _, above, below := b.cardWindow(rowHeight(b.cursor))
	k.CardUp.SetEnabled(above)
	k.CardDown.SetEnabled(below)
}

// renderCard draws the selected row, taller than the list, alone and
// scrolled to where the person put it, after the filter row (lines).
func (b *base) renderCard(lines, sel []string) string {
	off, rows, above, below := b.cardWindow(len(sel))
	mark := len(lines)
	more := func(arrow string, n int, k key.Binding) string {
		what := "more lines"
		if n == 1 {
			what = "more line"
		}
		return b.sh.st.Dim.Render(pad(fmt.Sprintf("%s %d %s · %s", arrow, n, what, k.Help().Key), b.width))
	}
	if above {
		lines = append(lines, more("↑", off, b.sh.keys.CardUp))
	}
	lines = append(lines, sel[off:off+rows]...)
	if below {
		lines = append(lines, more("↓", len(sel)-off-rows, b.sh.keys.CardDown))
	}
	for len(lines) < b.height {
		lines = append(lines, strings.Repeat(" ", b.width))
	}
	return b.framed(lines[:b.height], mark)
}

// message is a pane's whole content when it has no rows: why, in words.
func (b *base) message(text string) string {
	lines := []string{}
	if b.filter.Active() {
		lines = append(lines, b.filter.View(b.sh.st, b.width))
	}
	// wrapped, not cut: a message is an instruction or a reason, and its
	// end (the command to run, the cause) is what the person needs
	if b.err != nil {
		for _, l := range wrap("could not load: "+b.err.Error(), b.width, b.height) {
			lines = append(lines, b.sh.st.Error.Render(pad(l, b.width)))
		}
	}
	for _, l := range wrap(text, b.width, b.height) {
		lines = append(lines, b.sh.st.Dim.Render(pad(l, b.width)))
	}
	for len(lines) < b.height {
		lines = append(lines, strings.Repeat(" ", b.width))
	}
	return b.framed(lines[:b.height], -1)
}

// handleFilter starts the filter on its key and feeds it keys, and text
// pasted, while it is being typed; changed says whether what the list shows must be read again.
func (b *base) handleFilter(msg tea.Msg) (handled, changed bool) {
	if paste, ok := msg.(tea.PasteMsg); ok {
		return b.filter.Editing(), b.filter.Editing() && b.filter.Paste(paste.Content)
	}
	key, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, false
	}
	return b.filterKeyPress(key)
}

func (b *base) filterKeyPress(msg tea.KeyPressMsg) (handled, changed bool) {
	if !b.filter.Editing() {
		if keyIs(msg, b.sh.keys.Filter) {
			b.filter.Start()
			return true, false
		}
		return false, false
	}
	switch msg.String() {
	case "esc":
		had := b.filter.Value() != ""
		b.filter.Clear()
		return true, had
	case "enter":
		b.filter.Stop()
		return true, false
	}
	return true, b.filter.Update(msg)
}

// cell is one column of a row: its text, already fitted, and its look.
type cell struct {
	text  string
	style lipgloss.Style
}

// row joins cells into a line exactly width wide. The selected row is one
// reverse (or coloured) bar, so it reads as selected without colour.
func (b *base) row(sel bool, cells ...cell) string {
	var plain, styled strings.Builder
	for _, c := range cells {
		plain.WriteString(c.text)
		styled.WriteString(c.style.Render(c.text))
	}
	w := ansi.StringWidth(plain.String())
	fill := strings.Repeat(" ", max(b.width-w, 0))
	if sel {
		st := b.sh.st.Selected
		if !b.focused {
			st = b.sh.st.Bold
		}
		return st.Render(plain.String() + fill)
	}
	return styled.String() + fill
}

// idNum reads an id as the number the API pages by (Page.Before); ok is
// false for an id that is not one, and then the list cannot page past it.
func idNum(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil
}

func keyIs(msg tea.KeyPressMsg, b ...key.Binding) bool { return key.Matches(msg, b...) }
