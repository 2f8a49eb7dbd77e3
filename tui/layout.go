package tui

// layout is where everything goes, computed once per resize (and when the
// full help opens or closes) from the pane style's frame, so View only
// places what is already sized.
type layout struct {
	width, height int
	// wide: Workflows and Inputs side by side over Attention or the Run
	// log, as in the sketch; otherwise one pane at a time under tabs.
	wide bool

	headerH, tabsH, statusH, helpH int

	// Outer sizes of the boxes.
	leftW, rightW, topH, bottomH int // wide
	paneH                        int // tabs
}

// The wide layout needs room for two panes across and two down; below
// this the panes become tabs (80×24 is tabs).
const (
	wideMinWidth  = 100
	wideMinHeight = 30
	// Workflows pane width in the wide layout: a third, within these bounds.
	leftMinWidth = 30
	leftMaxWidth = 44
	// The upper row's share of the height in the wide layout, in percent.
	topShare = 45
	// A box smaller than this shows nothing but its frame.
	minBoxHeight = 3
	// A window narrower than this leaves a pane's rows, inside the frame
	// and the selection's gutter, too few cells to read what they are
	// about: no pane is drawn, as if it were too short.
	minWidth = 16
	// minHeight is the header, the tabs, the smallest box, the status line
	// and the help bar.
	minHeight = 1 + 1 + minBoxHeight + 1 + 1
)

func computeLayout(w, h, helpH int) layout {
	l := layout{width: w, height: h, headerH: 1, statusH: 1, helpH: helpH}
	l.wide = w >= wideMinWidth && h >= wideMinHeight
	body := max(h-l.headerH-l.statusH-l.helpH, 0)
	if l.wide {
		l.leftW = min(max(w/3, leftMinWidth), leftMaxWidth)
		l.rightW = w - l.leftW
		l.topH = max(body*topShare/100, minBoxHeight)
		l.bottomH = max(body-l.topH, 0)
		return l
	}
	l.tabsH = 1
	l.paneH = max(body-l.tabsH, 0)
	return l
}

// cramped: the window has no room for a pane, only for a line saying so
// (Model.cramped). The wide layout is never cramped.
func (l layout) cramped() bool {
	return !l.wide && (l.paneH < minBoxHeight || l.width < minWidth)
}

// inner is the size inside a box of the given outer size.
func (s *styles) inner(w, h int) (int, int) {
	return max(w-s.Pane.GetHorizontalFrameSize(), 0), max(h-s.Pane.GetVerticalFrameSize(), 0)
}
