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

	// detail is the selected workflow's detail, read when the selection
	// comes to it and again with every re-read: the answers given about
	// the workflow itself are listed under its row. detailOf names the
	// workflow it is read for; a reply for another is dropped.
	detail   *api.WorkflowDetail
	detailOf string
}

const workflowRowLines = 2

func newWorkflowsPane(sh *shared) *workflowsPane {
	p := &workflowsPane{localList: localList[api.WorkflowView]{base: base{sh: sh},
		match: func(w api.WorkflowView, f string) bool { return strings.Contains(strings.ToLower(w.Name), f) },
		key:   func(w api.WorkflowView) string { return w.Name }}}
	p.rowHeight = func(i int) int { return workflowRowLines + len(p.unwatchedLines(i)) + len(p.answerLines(i)) }
	return p
}

func (p *workflowsPane) Title() string { return "1 Workflows" }

func (p *workflowsPane) SetSize(w, h int) {
	p.base.SetSize(w, h)
	p.stateW = len("Needs you (99)")
	p.nameW = max(p.width-2-1-p.stateW, 1)
	// the selected row's answers are wrapped and bounded anew
	p.scroll(len(p.shown), p.rowHeight)
}

func (p *workflowsPane) query(ctx context.Context) tea.Msg {
	items, err := p.sh.api.Workflows(ctx)
	return workflowsMsg{items: items, err: err}
}

// SetDetail reads the detail of the workflow the selection has come to;
// nothing while it stays on the same one (a re-read reads it again).
func (p *workflowsPane) SetDetail(name string) tea.Cmd {
	if name == p.detailOf {
		return nil
	}
	// another workflow's answers are never shown under this one's row
	p.detailOf, p.detail = name, nil
	return p.sh.cmd(p.detailQuery())
}

func (p *workflowsPane) detailQuery() query {
	name := p.detailOf
	if name == "" {
		return nil
	}
	return func(ctx context.Context) tea.Msg {
		d, err := p.sh.api.Workflow(ctx, name)
		return workflowDetailMsg{name: name, detail: d, err: err}
	}
}

// answerLines are the answers given about row i's workflow, when it is
// the selected row and its detail has been read: under a heading, the
// newest few, newest last, after a line counting those left out. Each is
// wrapped, not cut: when it was given comes last, and is what a cut would
// take in a narrow pane. The row keeps within the list's height, older
// answers going first, so the newest is never the one below the pane's
// foot.
func (p *workflowsPane) answerLines(i int) []string {
	if i != p.cursor || i >= len(p.shown) || p.detail == nil || p.detail.Name != p.shown[i].Name || len(p.detail.Answers) == 0 {
		return nil
	}
	now := p.sh.now()
	item := func(t string) []string {
		var out []string
		for j, l := range wrap(t, max(p.width-answerIndent-2, 1), answerMaxLines) {
			indent := strings.Repeat(" ", answerIndent)
			if j > 0 {
				indent += "  " // a wrapped answer's rest, set in from its start
			}
			out = append(out, indent+l)
		}
		return out
	}
	earlierLines := func(n int) []string {
		if n == 0 {
			return nil
		}
		// the same words as keep status: the workflow is the selected one
		return item(earlierText(n, "keep status --json"))
	}
	all := p.detail.Answers
	from, _ := latestAnswers(all, paneAnswers)
	room := p.listHeight() - workflowRowLines - 1 // the heading
	var shown [][]string
	used := 0
	for k := len(all) - 1; k >= from; k-- {
		t := answerText(all[k])
		if at := ago(now, all[k].At); at != "" {
			t += ", " + at
		}
		lines := item(t)
		if used+len(lines)+len(earlierLines(k)) > room {
			break
		}
		shown = append(shown, lines)
		used += len(lines)
	}
	if len(shown) == 0 {
		return nil // not even the newest fits under the row
	}
	out := append([]string{"  answered:"}, earlierLines(len(all)-len(shown))...)
	for k := len(shown) - 1; k >= 0; k-- {
		out = append(out, shown[k]...)
	}
	return out
}

// unwatchedLines are the row's watched folders whose watch is not in
// effect: the schedule line above says only that a folder is not watched,
// and these say why and what runs the producer meanwhile, wrapped, as the
// sysctl that ends it is at the sentence's end.
func (p *workflowsPane) unwatchedLines(i int) []string {
	if i >= len(p.shown) {
		return nil
	}
	var out []string
	for _, u := range p.shown[i].Unwatched {
		for j, l := range wrap(u.String(), max(p.width-4, 1), answerMaxLines) {
			indent := "  "
			if j > 0 {
				indent += "  "
			}
			out = append(out, indent+l)
		}
	}
	return out
}

// answerIndent sets answers in under their heading; answerMaxLines bounds
// one answer wrapped in a narrow pane, so the row stays a row.
const (
	answerIndent   = 4
	answerMaxLines = 3
)

func (p *workflowsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case workflowsMsg:
		p.got(msg.items, msg.err)
	case workflowDetailMsg:
		if msg.name != p.detailOf {
			return nil // the selection moved on meanwhile
		}
		if msg.err == nil {
			p.detail = msg.detail
		}
		// the row grew or shrank: keep it in the window
		p.scroll(len(p.shown), p.rowHeight)
	case dryRunMsg:
		p.gotDryRun(msg)
	case tea.PasteMsg:
		p.filterKey(msg)
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
		lines := []string{
			p.row(sel,
				cell{stateGlyph(w.State) + " ", stateSt},
				cell{pad(w.Name, p.nameW) + " ", st.Bold},
				cell{pad(state, p.stateW), stateSt}),
			p.row(false, cell{"  " + fit(sched, p.width-2), st.Dim}),
		}
		for _, l := range p.unwatchedLines(i) {
			lines = append(lines, p.row(false, cell{l, st.Warn}))
		}
		for _, l := range p.answerLines(i) {
			lines = append(lines, p.row(false, cell{l, st.Dim}))
		}
		return lines
	}, "")
}
