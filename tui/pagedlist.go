package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
)

// pagedList is a list pane's rows read from the API a page at a time,
// newest first, for one workflow: the inputs (2) and the Run log (4). It
// holds a window of the list: the pages the user has scrolled through from
// the newest, or, after G, from the oldest up. A workflow may have a
// hundred thousand rows; either end is one read away.
type pagedList[T any] struct {
	base
	workflow string
	items    []T
	// gen changes whenever what is held is thrown away (another workflow,
	// another filter, g or G); a page that answers an older gen is dropped.
	gen int
	// hasMore: older rows follow the last one held; hasNewer: newer rows
	// come before the first one held (the window was read from the oldest
	// end), so scrolling up reads them.
	hasMore  bool
	hasNewer bool
	loading  bool
	loaded   bool
	pageSize int

	// what names the rows in logs; idOf is the id the API pages by; fetch
	// reads one page; rowHeight is how many lines row i takes on screen.
	what      string
	idOf      func(T) string
	fetch     func(ctx context.Context, workflow string, page api.Page) ([]T, error)
	rowHeight func(i int) int
}

func newPagedList[T any](sh *shared, what string, idOf func(T) string,
	fetch func(context.Context, string, api.Page) ([]T, error), rowHeight func(int) int) pagedList[T] {
	return pagedList[T]{base: base{sh: sh}, pageSize: 20, what: what, idOf: idOf, fetch: fetch, rowHeight: rowHeight}
}

// pageKind says what a page was asked for, and so where its rows go.
type pageKind int

const (
	pageReread pageKind = iota // what is held, read again: replaces it, the selection stays
	pageNewest                 // g: the newest page replaces the window, the cursor on its first row
	pageOldest                 // G: the oldest page replaces the window, the cursor on its last row
	pageOlder                  // scrolling down: follows the last row held
	pageNewer                  // scrolling up a window: goes before the first row held
)

// pageMsg is the answer to one page of a pagedList.
type pageMsg[T any] struct {
	gen   int
	kind  pageKind
	page  api.Page
	items []T
	err   error
}

// maxReload caps how much a notification re-reads; past it the user is
// deep in history that a notification rarely changes.
const maxReload = 500

// rowAt is the row under the cursor, nil when there is none.
func rowAt[T any](rows []T, cursor int) *T {
	if cursor < len(rows) {
		return &rows[cursor]
	}
	return nil
}

func (l *pagedList[T]) Selected() *T { return rowAt(l.items, l.cursor) }

// SetSize also sizes a page: two screens of one-line rows, enough to
// scroll a screen ahead without asking again, never the whole history.
func (l *pagedList[T]) SetSize(w, h int) {
	l.base.SetSize(w, h)
	l.pageSize = max(2*h, 20)
}

// SetWorkflow shows another workflow's rows, starting from the newest.
func (l *pagedList[T]) SetWorkflow(name string) tea.Cmd {
	// gen 0: never read yet, even for the same (empty) name.
	if name == l.workflow && l.gen > 0 {
		return nil
	}
	l.workflow = name
	return l.restart()
}

// restart drops what is held and reads the first page again.
func (l *pagedList[T]) restart() tea.Cmd {
	l.gen++
	l.items, l.hasMore, l.hasNewer, l.loaded, l.err = nil, false, false, false, nil
	l.cursor, l.offset = 0, 0
	if l.workflow == "" {
		l.loaded = true
		return nil
	}
	l.loading = true
	return l.sh.cmd(l.page(pageReread, api.Page{Limit: l.pageSize}))
}

func (l *pagedList[T]) page(kind pageKind, p api.Page) query {
	wf, gen, fetch := l.workflow, l.gen, l.fetch
	p.Filter = l.filter.Value()
	return func(ctx context.Context) tea.Msg {
		items, err := fetch(ctx, wf, p)
		return pageMsg[T]{gen: gen, kind: kind, page: p, items: items, err: err}
	}
}

// reload re-reads what is on screen (after a notification): from the
// newest, or, for a window below the newest, from the window's own top, so
// rows arriving meanwhile do not push it away from where the user is.
func (l *pagedList[T]) reload() query {
	if l.workflow == "" {
		return nil
	}
	p := api.Page{Limit: min(max(len(l.items), l.pageSize), maxReload)}
	if l.hasNewer {
		if first, ok := l.idAt(0); ok {
			p.Before = first + 1
		}
	}
	return l.page(pageReread, p)
}

// idAt is row i's id as the API pages by it; a row without one ends
// paging that way, with a warning in the log.
func (l *pagedList[T]) idAt(i int) (int64, bool) {
	if i < 0 || i >= len(l.items) {
		return 0, false
	}
	id := l.idOf(l.items[i])
	n, ok := idNum(id)
	if !ok {
		l.sh.log.Warn(l.what+" id is not a number, cannot page", "id", id)
	}
	return n, ok
}

// navigate applies a movement key; it says whether the key was one. g and
// G go to the first or last row held when that is the list's end, and
// otherwise read one page from that end in place of the window.
func (l *pagedList[T]) navigate(msg tea.KeyPressMsg, pageRows int) (tea.Cmd, bool) {
	k := l.sh.keys
	switch {
	case keyIs(msg, k.Bottom) && l.hasMore:
		return l.jump(pageOldest, api.Page{Oldest: true, Limit: l.pageSize}), true
	case keyIs(msg, k.Top) && l.hasNewer:
		return l.jump(pageNewest, api.Page{Limit: l.pageSize}), true
	case l.move(msg, len(l.items), pageRows):
		return l.moved(), true
	}
	return nil, false
}

// jump reads the page at one end of the list. What is held stays on
// screen until it comes; a page still on its way for it is dropped.
func (l *pagedList[T]) jump(kind pageKind, p api.Page) tea.Cmd {
	l.gen++
	l.loading = true
	return l.sh.cmd(l.page(kind, p))
}

// more reads the next page on the side the cursor nears: older below the
// last row held, newer above the first one of a window.
func (l *pagedList[T]) more() tea.Cmd {
	if l.loading {
		return nil
	}
	switch {
	case l.hasMore && l.cursor >= len(l.items)-1-l.listHeight():
		last, ok := l.idAt(len(l.items) - 1)
		if !ok {
			l.hasMore = false
			return nil
		}
		l.loading = true
		return l.sh.cmd(l.page(pageOlder, api.Page{Before: last, Limit: l.pageSize}))
	case l.hasNewer && l.cursor <= l.listHeight():
		first, ok := l.idAt(0)
		if !ok {
			l.hasNewer = false
			return nil
		}
		l.loading = true
		return l.sh.cmd(l.page(pageNewer, api.Page{After: first, Limit: l.pageSize}))
	}
	return nil
}

// gotPage takes a page in where its kind says. A re-read keeps the
// selection on the same row; a page for an edge that has moved since it
// was asked for is dropped.
func (l *pagedList[T]) gotPage(msg pageMsg[T]) tea.Cmd {
	if msg.gen != l.gen {
		return nil
	}
	l.loading, l.err = false, msg.err
	if msg.err != nil {
		return nil
	}
	full := len(msg.items) == msg.page.Limit
	switch msg.kind {
	case pageReread:
		var keep string
		if s := l.Selected(); s != nil {
			keep = l.idOf(*s)
		}
		l.items, l.cursor = msg.items, 0
		for i, it := range l.items {
			if l.idOf(it) == keep {
				l.cursor = i
			}
		}
		if msg.page.Before == 0 {
			l.hasMore, l.hasNewer = full, false
		} else {
			if len(l.items) == 0 {
				return l.restart() // the whole window is gone (retention): start over at the newest
			}
			// below a window's top nothing new arrives, so older rows
			// follow only if they did before
			l.hasMore = full && l.hasMore
		}
	case pageNewest:
		l.items, l.cursor, l.offset = msg.items, 0, 0
		l.hasMore, l.hasNewer = full, false
	case pageOldest:
		// offset 0: scroll then puts the last row at the bottom of the pane
		l.items, l.cursor, l.offset = msg.items, len(msg.items)-1, 0
		l.hasMore, l.hasNewer = false, full
	case pageOlder:
		if last, ok := l.idAt(len(l.items) - 1); !ok || last != msg.page.Before {
			return nil
		}
		l.items = append(l.items, msg.items...)
		l.hasMore = full
	case pageNewer:
		if first, ok := l.idAt(0); !ok || first != msg.page.After {
			return nil
		}
		n := len(msg.items)
		l.items = append(msg.items[:n:n], l.items...)
		l.cursor, l.offset = l.cursor+n, l.offset+n
		l.hasNewer = full
	}
	l.loaded = true
	l.clamp(len(l.items))
	return l.moved()
}

// moved keeps the cursor's rows in the window and reads ahead if needed.
func (l *pagedList[T]) moved() tea.Cmd {
	l.scroll(len(l.items), l.rowHeight)
	return l.more()
}

// filterKey feeds a key to the filter being typed; a changed filter is
// asked of the API from the first page.
func (l *pagedList[T]) filterKey(msg tea.Msg) (tea.Cmd, bool) {
	handled, changed := l.handleFilter(msg)
	if changed {
		return l.restart(), true
	}
	return nil, handled
}

// view draws the rows, or says in words why there are none; noMatch and
// none are the words for an empty filtered and an empty list.
// titleNote is what a pane's title adds about the window: that newer rows
// sit above it (it was read from the oldest end), and how to get there.
func (l *pagedList[T]) titleNote() string {
	if l.hasNewer {
		return " · ↑ newer (g)"
	}
	return ""
}

func (l *pagedList[T]) view(noMatch, none string, rowLines func(i int, sel bool) []string) string {
	switch {
	case l.workflow == "":
		return l.message("Choose a workflow in pane 1.")
	case len(l.items) == 0 && !l.loaded:
		return l.message("Loading…")
	case len(l.items) == 0 && l.filter.Value() != "":
		return l.message(noMatch)
	case len(l.items) == 0:
		return l.message(none)
	}
	more := ""
	switch {
	case l.loading:
		more = "… loading more"
	case l.hasMore:
		more = "… more (pgdn)"
	}
	return l.render(len(l.items), rowLines, more)
}
