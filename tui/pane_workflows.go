package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
)

// workflowsPane (1) lists every workflow with its state and schedule in
// words. Workflows are few, so the list is read whole and filtered here.
type workflowsPane struct {
	// The selection is kept by name, so a re-read that reorders the list keeps it.
	localList[api.WorkflowView]

	nameW, stateW int
	dry           *dryRun // shown instead of the list while set
	// dryH is the height inside the box the dry run is shown in: the
	// lower box in the wide layout, not this pane's (Model.relayout)
	dryH int
}

const workflowRowLines = 2

func newWorkflowsPane(sh *shared) *workflowsPane {
	return &workflowsPane{localList: localList[api.WorkflowView]{base: base{sh: sh},
		match:     func(w api.WorkflowView, f string) bool { return strings.Contains(strings.ToLower(w.Name), f) },
		key:       func(w api.WorkflowView) string { return w.Name },
		rowHeight: func(int) int { return workflowRowLines }}}
}

func (p *workflowsPane) Title() string { return "1 Workflows" }

func (p *workflowsPane) SetSize(w, h int) {
	p.base.SetSize(w, h)
	p.stateW = len("Needs you (99)")
	p.nameW = max(p.width-2-1-p.stateW, 1)
}

func (p *workflowsPane) query(ctx context.Context) tea.Msg {
	items, err := p.sh.api.Workflows(ctx)
	return workflowsMsg{items: items, err: err}
}

func (p *workflowsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case workflowsMsg:
		p.got(msg.items, msg.err)
	case dryRunMsg:
		p.gotDryRun(msg)
	case tea.KeyPressMsg:
		if p.dry != nil {
			p.dryRunKey(msg)
			return nil
		}
		if p.filterKey(msg) {
			return nil
		}
		if sel := p.Selected(); sel != nil && keyIs(msg, p.sh.keys.DryRun) {
			return p.startDryRun(sel.Name)
		}
		k := p.sh.keys
		switch {
		case keyIs(msg, k.Back):
			p.filter.Clear()
			p.apply()
		case keyIs(msg, k.Enter):
			return func() tea.Msg { return focusMsg{to: focusInputs} }
		case p.moveKey(msg, p.listHeight()/workflowRowLines):
		}
	}
	return nil
}

func (p *workflowsPane) EnableKeys(k *keyMap) {
	if p.dry != nil {
		k.Back.SetEnabled(true)
		return
	}
	k.Filter.SetEnabled(true)
	k.Back.SetEnabled(p.filter.Active())
	k.Enter.SetEnabled(p.Selected() != nil)
	k.Enter.SetHelp("enter", "inputs")
	k.DryRun.SetEnabled(p.Selected() != nil)
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
		case api.StateNeedsAttention:
			stateSt = st.Warn
		case api.StateRunning:
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
