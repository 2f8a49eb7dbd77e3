package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
)

// inputsPane (2) shows the selected workflow's inputs, newest first, each
// with the outputs it caused. It holds only the pages the user has scrolled
// through: a workflow may have a hundred thousand inputs.
type inputsPane struct {
	base
	workflow string
	items    []engine.InputView
	// gen changes whenever the list starts over (another workflow, another
	// filter); a page that answers an older gen is dropped.
	gen      int
	hasMore  bool
	loading  bool
	loaded   bool
	pageSize int
	expanded map[string]bool

	ageW, statusW, titleW, outStateW int
}

// maxReload caps how much a notification re-reads; past it the user is
// deep in history that a notification rarely changes.
const maxReload = 500

func newInputsPane(sh *shared) *inputsPane {
	return &inputsPane{base: base{sh: sh}, expanded: map[string]bool{}, pageSize: 20}
}

func (p *inputsPane) Title() string {
	if p.workflow == "" {
		return "2 Inputs → Outputs"
	}
	return "2 Inputs → Outputs · " + p.workflow
}

func (p *inputsPane) SetSize(w, h int) {
	p.base.SetSize(w, h)
	// A page is two screens of one-line rows: enough to scroll a screen
	// ahead without asking again, never the whole history.
	p.pageSize = max(2*h, 20)
	p.ageW = len("59 min ago") + 1
	p.statusW = len("done, no changes")
	p.outStateW = len("uncertain, needs you")
	p.titleW = max(w-2-p.ageW-p.statusW-1, 1)
}

// SetWorkflow shows another workflow's inputs, starting from the newest.
func (p *inputsPane) SetWorkflow(name string) tea.Cmd {
	// gen 0: never read yet, even for the same (empty) name.
	if name == p.workflow && p.gen > 0 {
		return nil
	}
	p.workflow = name
	return p.restart()
}

func (p *inputsPane) restart() tea.Cmd {
	p.gen++
	p.items, p.hasMore, p.loaded, p.err = nil, false, false, nil
	p.cursor, p.offset = 0, 0
	if p.workflow == "" {
		p.loaded = true
		return nil
	}
	p.loading = true
	return p.sh.cmd(p.page(0, p.pageSize))
}

func (p *inputsPane) page(before int64, limit int) query {
	wf, gen, filter := p.workflow, p.gen, p.filter.Value()
	return func(ctx context.Context) tea.Msg {
		items, err := p.sh.api.Inputs(ctx, wf, engine.Page{Before: before, Limit: limit, Filter: filter})
		return inputsMsg{gen: gen, before: before, limit: limit, items: items, err: err}
	}
}

// reload re-reads what is on screen (after a notification), from the newest.
func (p *inputsPane) reload() query {
	if p.workflow == "" {
		return nil
	}
	return p.page(0, min(max(len(p.items), p.pageSize), maxReload))
}

// more asks for the next page when the cursor nears the end of what is held.
func (p *inputsPane) more() tea.Cmd {
	if !p.hasMore || p.loading || p.cursor < len(p.items)-1-p.listHeight() {
		return nil
	}
	last, ok := idNum(p.items[len(p.items)-1].InputID)
	if !ok {
		p.sh.log.Warn("input id is not a number, cannot page", "id", p.items[len(p.items)-1].InputID)
		p.hasMore = false
		return nil
	}
	p.loading = true
	return p.sh.cmd(p.page(last, p.pageSize))
}

func (p *inputsPane) Selected() *engine.InputView {
	if p.cursor < len(p.items) {
		return &p.items[p.cursor]
	}
	return nil
}

func (p *inputsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case inputsMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.loading, p.err = false, msg.err
		if msg.err != nil {
			return nil
		}
		if msg.before == 0 {
			var keep string
			if s := p.Selected(); s != nil {
				keep = s.InputID
			}
			p.items = msg.items
			p.cursor = 0
			for i, in := range p.items {
				if in.InputID == keep {
					p.cursor = i
				}
			}
		} else if n := len(p.items); n > 0 {
			if last, _ := idNum(p.items[n-1].InputID); last != msg.before {
				return nil // a page for a list since re-read
			}
			p.items = append(p.items, msg.items...)
		}
		p.loaded = true
		p.hasMore = len(msg.items) == msg.limit
		p.clamp(len(p.items))
		p.scroll(len(p.items), p.rowHeight)
		return p.more()
	case tea.KeyPressMsg:
		if handled, changed := p.handleFilter(msg); handled {
			if changed {
				return p.restart()
			}
			return nil
		}
		k := p.sh.keys
		switch {
		case keyIs(msg, k.Filter):
			p.filter.Start()
		case keyIs(msg, k.Back):
			if s := p.Selected(); s != nil && p.expanded[s.InputID] {
				delete(p.expanded, s.InputID)
			} else if p.filter.Active() {
				p.filter.Clear()
				return p.restart()
			}
		case keyIs(msg, k.Enter):
			if s := p.Selected(); s != nil {
				p.expanded[s.InputID] = !p.expanded[s.InputID]
				p.scroll(len(p.items), p.rowHeight)
			}
		case keyIs(msg, k.SkipInput):
			if s := p.Selected(); s != nil {
				return skipInput(p.sh, s.InputID, s.Title)
			}
		case p.move(msg, len(p.items), p.listHeight()):
			p.scroll(len(p.items), p.rowHeight)
			return p.more()
		}
	}
	return nil
}

// skipInput asks first: skipping cannot be undone.
func skipInput(sh *shared, id, title string) tea.Cmd {
	return ask(fmt.Sprintf("skip %q?", fit(oneLine(title), 40)),
		"skip: the events will be marked skipped and not processed",
		sh.act("skipped "+fit(oneLine(title), 40), func(ctx context.Context) error { return sh.api.SkipInput(ctx, id) }))
}

func canSkipInput(status string) bool {
	return status == engine.InputPending || status == engine.InputNeedsAttention
}

func (p *inputsPane) EnableKeys(k *keyMap) {
	k.Filter.SetEnabled(p.workflow != "")
	s := p.Selected()
	k.Enter.SetEnabled(s != nil && len(s.Outputs) > 0)
	k.Enter.SetHelp("enter", "details")
	if s != nil && p.expanded[s.InputID] {
		k.Enter.SetHelp("enter", "fold")
	}
	k.SkipInput.SetEnabled(s != nil && canSkipInput(s.Status))
	k.Back.SetEnabled(p.filter.Active() || (s != nil && p.expanded[s.InputID]))
}

func (p *inputsPane) rowHeight(i int) int { return len(p.rowLines(i, false)) }

func (p *inputsPane) rowLines(i int, sel bool) []string {
	st := p.sh.st
	now := p.sh.now()
	in := p.items[i]
	statusSt := st.Dim
	switch {
	case in.Status == engine.InputNeedsAttention || in.Stale:
		statusSt = st.Warn
	case in.Status == engine.InputDone:
		statusSt = st.Good
	}
	lines := []string{p.row(sel,
		cell{inputGlyph(in.Status) + " ", statusSt},
		cell{pad(oneLine(in.Title), p.titleW) + " ", st.Bold},
		cell{pad(ago(now, in.CreatedAt), p.ageW), st.Dim},
		cell{pad(inputWords(in), p.statusW), statusSt})}
	const indent = "    → "
	const detail = "        "
	outTitleW := max(p.width-len([]rune(indent))-p.outStateW-1, 1)
	for _, o := range in.Outputs {
		title := o.Title
		if title == "" {
			title = o.Connector + "." + o.Method
		}
		lines = append(lines, p.row(false,
			cell{indent, st.Dim},
			cell{pad(oneLine(title), outTitleW) + " ", lipglossPlain},
			cell{pad(outputWords(o, now), p.outStateW), st.Dim}))
		if !p.expanded[in.InputID] {
			continue
		}
		call := o.Connector + "." + o.Method
		if pl := paramsLine(o.Params); pl != "" {
			call += "  " + pl
		}
		lines = append(lines, p.row(false, cell{detail + fit(call, p.width-len(detail)), st.Dim}))
		for _, l := range previewLines(o.Preview, 4) {
			lines = append(lines, p.row(false, cell{detail + fit(l, p.width-len(detail)), st.Dim}))
		}
	}
	return lines
}

// previewLines keeps a host preview to a few non-empty lines.
func previewLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			out = append(out, strings.ReplaceAll(l, "\t", "  "))
		}
		if len(out) == n {
			break
		}
	}
	return out
}

func (p *inputsPane) View() string {
	switch {
	case p.workflow == "":
		return p.message("Choose a workflow in pane 1.")
	case len(p.items) == 0 && !p.loaded:
		return p.message("Loading…")
	case len(p.items) == 0 && p.filter.Value() != "":
		return p.message("No input matches.")
	case len(p.items) == 0:
		return p.message("No inputs yet.")
	}
	more := ""
	switch {
	case p.loading:
		more = "… loading more"
	case p.hasMore:
		more = "… more (pgdn)"
	}
	return p.render(len(p.items), p.rowLines, more)
}
