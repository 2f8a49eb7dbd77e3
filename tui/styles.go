package tui

import (
	"image/color"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles is every look the TUI uses. With noColor it keeps only reverse
// video and bold (NO_COLOR forbids colour, not emphasis), so a selection is
// still visible on a monochrome terminal.
type styles struct {
	noColor bool

	// Pane and PaneFocused frame a pane; their frame sizes drive the layout.
	Pane        lipgloss.Style
	PaneFocused lipgloss.Style
	Title       lipgloss.Style
	TitleFocus  lipgloss.Style

	Header   lipgloss.Style
	Dim      lipgloss.Style
	Bold     lipgloss.Style
	Selected lipgloss.Style
	Warn     lipgloss.Style
	Good     lipgloss.Style
	Bad      lipgloss.Style
	Kind     lipgloss.Style

	TabActive   lipgloss.Style
	TabInactive lipgloss.Style

	Status lipgloss.Style
	Error  lipgloss.Style
	Ask    lipgloss.Style
	Toast  lipgloss.Style

	Help   help.Styles
	Filter lipgloss.Style
}

func newStyles(noColor bool) *styles {
	c := func(s string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(s)
	}
	var (
		accent = c("#7D56F4")
		muted  = c("#767676")
		frame  = c("#4A4A4A")
		yellow = c("#D7AF00")
		green  = c("#5FAF5F")
		red    = c("#D75F5F")
	)
	border := lipgloss.RoundedBorder()
	pane := lipgloss.NewStyle().Border(border).BorderForeground(frame).Padding(0, 1)
	s := &styles{
		noColor:     noColor,
		Pane:        pane,
		PaneFocused: pane.BorderForeground(accent),
		Title:       lipgloss.NewStyle().Foreground(muted),
		TitleFocus:  lipgloss.NewStyle().Bold(true).Foreground(accent),
		Header:      lipgloss.NewStyle().Bold(true),
		Dim:         lipgloss.NewStyle().Foreground(muted),
		Bold:        lipgloss.NewStyle().Bold(true),
		Selected:    lipgloss.NewStyle().Reverse(true),
		Warn:        lipgloss.NewStyle().Foreground(yellow),
		Good:        lipgloss.NewStyle().Foreground(green),
		Bad:         lipgloss.NewStyle().Foreground(red),
		Kind:        lipgloss.NewStyle().Bold(true).Foreground(yellow),
		TabActive:   lipgloss.NewStyle().Bold(true).Reverse(true).Padding(0, 1),
		TabInactive: lipgloss.NewStyle().Foreground(muted).Padding(0, 1),
		Status:      lipgloss.NewStyle().Foreground(muted),
		Error:       lipgloss.NewStyle().Bold(true).Foreground(red),
		Ask:         lipgloss.NewStyle().Bold(true).Foreground(yellow),
		Toast:       lipgloss.NewStyle().Border(border).BorderForeground(yellow).Padding(0, 1),
	}
	if !noColor {
		// A focused selection is coloured; reverse video is the no-colour fallback.
		s.Selected = lipgloss.NewStyle().Background(c("#3A3A5A")).Foreground(c("#FFFFFF"))
	}
	s.Help = help.DefaultDarkStyles()
	if noColor {
		plain := lipgloss.NewStyle()
		s.Help = help.Styles{Ellipsis: plain, ShortKey: plain.Bold(true), ShortDesc: plain, ShortSeparator: plain,
			FullKey: plain.Bold(true), FullDesc: plain, FullSeparator: plain}
	}
	s.Filter = lipgloss.NewStyle().Bold(true)
	return s
}

// box frames content (already fitted to the inner size) with the pane
// style and writes the title into the top border, as in the sketch.
func (s *styles) box(title string, content string, width, height int, focused bool) string {
	st, tst := s.Pane, s.Title
	if focused {
		st, tst = s.PaneFocused, s.TitleFocus
	}
	body := st.BorderTop(false).Width(width).Height(height - st.GetBorderTopSize()).Render(content)
	b := st.GetBorderStyle()
	fill := width - 2 - 1 - ansi.StringWidth(title) - 1 // corners, spaces around the title
	if fill < 0 {
		title = fit(title, width-4)
		fill = width - 4 - ansi.StringWidth(title)
	}
	bs := lipgloss.NewStyle().Foreground(st.GetBorderTopForeground())
	top := bs.Render(b.TopLeft+b.Top) + tst.Render(title) + bs.Render(b.Top+strings.Repeat(b.Top, max(fill, 0))+b.TopRight)
	return top + "\n" + body
}

// lipglossPlain is text with no look of its own.
var lipglossPlain = lipgloss.NewStyle()
