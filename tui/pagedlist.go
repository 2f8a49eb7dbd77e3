package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
)

// pagedList is a list pane's rows read from the API a page at a time,
// newest first, for one workflow: the inputs (2) and the Run log (4). It
// holds only the pages the user has scrolled through: a workflow may have
// a hundred thousand of them.
type pagedList[T any] struct {
	base
	workflow string
	items    []T
	// gen changes whenever the list starts over (another workflow, another
	// filter); a page that answers an older gen is dropped.
	gen      int
	hasMore  bool
	loading  bool
	loaded   bool
	pageSize int

	// what names the rows in logs; idOf is the id the API pages by; fetch
	// reads one page; rowHeight is how many lines row i takes on screen.
	what      string
	idOf      func(T) string
	fetch     func(ctx context.Context, workflow string, page engine.Page) ([]T, error)
	rowHeight func(i int) int
}

func newPagedList[T any](sh *shared, what string, idOf func(T) string,
	fetch func(context.Context, string, engine.Page) ([]T, error), rowHeight func(int) int) pagedList[T] {
	return pagedList[T]{base: base{sh: sh}, pageSize: 20, what: what, idOf: idOf, fetch: fetch, rowHeight: rowHeight}
}

// pageMsg is the answer to one page of a pagedList.
type pageMsg[T any] struct {
	gen    int
	before int64 // 0: the first page (replaces the list)
	limit  int
	items  []T
	err    error
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
	l.items, l.hasMore, l.loaded, l.err = nil, false, false, nil
	l.cursor, l.offset = 0, 0
	if l.workflow == "" {
		l.loaded = true
		return nil
	}
	l.loading = true
	return l.sh.cmd(l.page(0, l.pageSize))
}

func (l *pagedList[T]) page(before int64, limit int) query {
	wf, gen, filter, fetch := l.workflow, l.gen, l.filter.Value(), l.fetch
	return func(ctx context.Context) tea.Msg {
		items, err := fetch(ctx, wf, engine.Page{Before: before, Limit: limit, Filter: filter})
		return pageMsg[T]{gen: gen, before: before, limit: limit, items: items, err: err}
	}
}

// reload re-reads what is on screen (after a notification), from the newest.
func (l *pagedList[T]) reload() query {
	if l.workflow == "" {
		return nil
	}
	return l.page(0, min(max(len(l.items), l.pageSize), maxReload))
}

// more asks for the next page when the cursor nears the end of what is held.
func (l *pagedList[T]) more() tea.Cmd {
	if !l.hasMore || l.loading || l.cursor < len(l.items)-1-l.listHeight() {
		return nil
	}
	id := l.idOf(l.items[len(l.items)-1])
	last, ok := idNum(id)
	if !ok {
		l.sh.log.Warn(l.what+" id is not a number, cannot page", "id", id)
		l.hasMore = false
		return nil
	}
	l.loading = true
	return l.sh.cmd(l.page(last, l.pageSize))
}

// gotPage takes a page in: the first replaces the list (keeping the
// selection on the same row), a later one is appended if it still follows.
func (l *pagedList[T]) gotPage(msg pageMsg[T]) tea.Cmd {
	if msg.gen != l.gen {
		return nil
	}
	l.loading, l.err = false, msg.err
	if msg.err != nil {
		return nil
	}
	if msg.before == 0 {
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
	} else if n := len(l.items); n > 0 {
		if last, _ := idNum(l.idOf(l.items[n-1])); last != msg.before {
			return nil // a page for a list since re-read
		}
		l.items = append(l.items, msg.items...)
	}
	l.loaded = true
	l.hasMore = len(msg.items) == msg.limit
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
func (l *pagedList[T]) filterKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	handled, changed := l.handleFilter(msg)
	if changed {
		return l.restart(), true
	}
	return nil, handled
}

// view draws the rows, or says in words why there are none; noMatch and
// none are the words for an empty filtered and an empty list.
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
