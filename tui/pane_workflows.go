package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
)

// workflowsPane (1) lists every workflow with its state and schedule in
// words. Workflows are few, so the list is read whole and filtered here.
type workflowsPane struct {
	base
	all   []engine.WorkflowView
	shown []engine.WorkflowView
	// selected is kept by name, so a re-read that reorders the list keeps it.
	selected string
	loaded   bool

	nameW, stateW int
}

const workflowRowLines = 2

func newWorkflowsPane(sh *shared) *workflowsPane { return &workflowsPane{base: base{sh: sh}} }

func (p *workflowsPane) Title() string { return "1 Workflows" }

func (p *workflowsPane) SetSize(w, h int) {
	p.base.SetSize(w, h)
	p.stateW = len("Needs you (99)")
	p.nameW = max(w-2-1-p.stateW, 1)
}

func (p *workflowsPane) query(ctx context.Context) tea.Msg {
	items, err := p.sh.api.Workflows(ctx)
	return workflowsMsg{items: items, err: err}
}

// Selected is the workflow the other panes show, nil when there is none.
func (p *workflowsPane) Selected() *engine.WorkflowView {
	if p.cursor < len(p.shown) {
		return &p.shown[p.cursor]
	}
	return nil
}

func (p *workflowsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case workflowsMsg:
		p.err = msg.err
		if msg.err == nil {
			p.all, p.loaded = msg.items, true
		}
		p.apply()
	case tea.KeyPressMsg:
		if handled, changed := p.handleFilter(msg); handled {
			if changed {
				p.apply()
			}
			return nil
		}
		k := p.sh.keys
		switch {
		case keyIs(msg, k.Filter):
			p.filter.Start()
		case keyIs(msg, k.Back):
			p.filter.Clear()
			p.apply()
		case keyIs(msg, k.Enter):
			return func() tea.Msg { return focusMsg{to: focusInputs} }
		case p.move(msg, len(p.shown), p.listHeight()/workflowRowLines):
			p.keepSelected()
		}
	}
	return nil
}

// apply filters by name and keeps the selection on the same workflow.
func (p *workflowsPane) apply() {
	f := strings.ToLower(p.filter.Value())
	p.shown = p.shown[:0]
	for _, w := range p.all {
		if f == "" || strings.Contains(strings.ToLower(w.Name), f) {
			p.shown = append(p.shown, w)
		}
	}
	p.cursor = 0
	for i, w := range p.shown {
		if w.Name == p.selected {
			p.cursor = i
		}
	}
	p.clamp(len(p.shown))
	p.keepSelected()
}

func (p *workflowsPane) keepSelected() {
	p.selected = ""
	if w := p.Selected(); w != nil {
		p.selected = w.Name
	}
	p.scroll(len(p.shown), func(int) int { return workflowRowLines })
}

func (p *workflowsPane) EnableKeys(k *keyMap) {
	k.Filter.SetEnabled(true)
	k.Back.SetEnabled(p.filter.Active())
	k.Enter.SetEnabled(p.Selected() != nil)
	k.Enter.SetHelp("enter", "inputs")
}

func (p *workflowsPane) View() string {
	if len(p.shown) == 0 {
		switch {
		case !p.loaded && p.err == nil:
			return p.message("Loading…")
		case p.filter.Value() != "":
			return p.message("No workflow matches.")
		}
		return p.message("No workflows yet. Deploy one with: keep deploy FILE")
	}
	st := p.sh.st
	now := p.sh.now()
	return p.render(len(p.shown), func(i int, sel bool) []string {
		w := p.shown[i]
		state := stateWords(w.State)
		if w.Attention > 0 {
			state = fmt.Sprintf("%s (%d)", state, w.Attention)
		}
		stateSt := st.Dim
		switch w.State {
		case engine.StateNeedsAttention:
			stateSt = st.Warn
		case engine.StateRunning:
			stateSt = st.Good
		}
		sched := scheduleWords(w, now)
		if w.PendingInputs > 0 {
			sched = fmt.Sprintf("%s · %d pending", sched, w.PendingInputs)
		}
		return []string{
			p.row(sel,
				cell{stateGlyph(w.State) + " ", stateSt},
				cell{pad(w.Name, p.nameW) + " ", st.Bold},
				cell{pad(state, p.stateW), stateSt}),
			p.row(false, cell{"  " + fit(sched, p.width-2), st.Dim}),
		}
	}, "")
}
