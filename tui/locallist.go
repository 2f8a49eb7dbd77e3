package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// localList is a list pane's rows read whole and filtered here: the
// workflows (1) and what needs the person (3) are few.
type localList[T any] struct {
	base
	all, shown []T
	loaded     bool

	// match says whether a row shows under a filter (lower case, not
	// empty); key names a row across re-reads, so the selection stays on
	// it; rowHeight is how many lines row i takes on screen.
	match     func(it T, filter string) bool
	key       func(T) string
	rowHeight func(i int) int
	// stay: when the selected row goes, the cursor stays where it was (the
	// next row moves under it) instead of going back to the top.
	stay bool
}

func (l *localList[T]) Selected() *T { return rowAt(l.shown, l.cursor) }

// got takes a whole re-read in; a failed one keeps what was shown.
func (l *localList[T]) got(items []T, err error) {
	l.err = err
	if err == nil {
		l.all, l.loaded = items, true
	}
	l.apply()
}

// apply filters all into shown and keeps the selection on the same row.
func (l *localList[T]) apply() {
	var keep string
	if it := l.Selected(); it != nil {
		keep = l.key(*it)
	}
	f := strings.ToLower(l.filter.Value())
	l.shown = l.shown[:0]
	for _, it := range l.all {
		if f == "" || l.match(it, f) {
			l.shown = append(l.shown, it)
		}
	}
	if !l.stay {
		l.cursor = 0
	}
	if i := slices.IndexFunc(l.shown, func(it T) bool { return l.key(it) == keep }); i >= 0 {
		l.cursor = i
	}
	l.clamp(len(l.shown))
	l.scroll(len(l.shown), l.rowHeight)
}

// filterKey feeds a key to the filter being typed, filtering again as it
// changes; it says whether the key was the filter's.
func (l *localList[T]) filterKey(msg tea.Msg) bool {
	handled, changed := l.handleFilter(msg)
	if changed {
		l.apply()
	}
	return handled
}

// moveKey applies a movement key; it says whether the key was one.
func (l *localList[T]) moveKey(msg tea.KeyPressMsg, pageRows int) bool {
	if !l.move(msg, len(l.shown), pageRows) {
		return false
	}
	l.scroll(len(l.shown), l.rowHeight)
	return true
}
