package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
	"keep/engine/api"
)

// runsPane (4) is the Run log of the selected workflow, newest first, and,
// one enter away, a run's trace. This is where ids, phases and handlers
// belong: the person came here to look under the hood.
type runsPane struct {
	pagedList[api.RunView]

	// The open trace, if any, already laid out for the pane's width, and
	// the workflow of its run: a failed run's card in Attention opens one
	// of any workflow, whatever pane 1 has selected.
	traceRun   string
	traceWf    string
	trace      []api.TraceLine
	traceLines []string
	traceOff   int
	traceErr   error

	idW, statusW, ageW, handlerW int
}

// runsMsg is a page of runs.
type runsMsg = pageMsg[api.RunView]

func newRunsPane(sh *shared) *runsPane {
	p := &runsPane{}
	p.pagedList = newPagedList(sh, "run", func(r api.RunView) string { return r.ID }, sh.api.Runs, p.rowHeight)
	return p
}

func (p *runsPane) Title() string {
	switch {
	case p.traceRun != "":
		return p.traceTitle()
	case p.workflow != "":
		return "4 Run log · " + p.workflow + p.titleNote()
	}
	return "4 Run log"
}

// traceTitle names the trace's run and its workflow. The box cuts a title
// too long for it at its end: the workflow's name gives way first, as the
// number is what tells this trace from another.
func (p *runsPane) traceTitle() string {
	head, run := "4 Run log · ", "trace of #"+p.traceRun
	wf := p.traceWf
	// the box puts a space either side of its title
	if room := p.width + p.gutter - 2 - cells(head+" · "+run); p.width > 0 && cells(wf) > room {
		wf = fit(wf, room)
		if room < 4 {
			wf = ""
		}
	}
	if wf == "" {
		return head + run
	}
	return head + wf + " · " + run
}

func (p *runsPane) SetSize(w, h int) {
	p.pagedList.SetSize(w, h)
	p.idW = len("#123456") + 1
	p.statusW = len(engine.RunPausedReconciliation) + 1
	p.ageW = len("59 min ago")
	p.handlerW = max(p.width-p.idW-p.statusW-p.ageW-1, 1)
	p.layoutTrace()
}

func (p *runsPane) traceQuery() query {
	if p.traceRun == "" {
		return nil
	}
	id := p.traceRun
	return func(ctx context.Context) tea.Msg {
		lines, err := p.sh.api.Trace(ctx, id)
		return traceMsg{runID: id, lines: lines, err: err}
	}
}

// SetWorkflow shows another workflow's runs. A trace open on the last
// one's run is closed: under another workflow's name it reads as a run of
// that one.
func (p *runsPane) SetWorkflow(name string) tea.Cmd {
	if name != p.workflow {
		p.closeTrace()
	}
	return p.pagedList.SetWorkflow(name)
}

func (p *runsPane) closeTrace() { p.traceRun, p.traceWf, p.trace, p.traceLines = "", "", nil, nil }

// OpenTrace shows a run's trace (from this list or from a failed run in
// the Attention pane).
func (p *runsPane) OpenTrace(runID, workflow string) tea.Cmd {
	p.traceRun, p.traceWf, p.trace, p.traceLines, p.traceOff, p.traceErr = runID, workflow, nil, nil, 0, nil
	return p.sh.cmd(p.traceQuery())
}

func (p *runsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case runsMsg:
		return p.gotPage(msg)
	case traceMsg:
		if msg.runID != p.traceRun {
			return nil
		}
		p.trace, p.traceErr = msg.lines, msg.err
		p.layoutTrace()
	case tea.PasteMsg:
		cmd, _ := p.filterKey(msg)
		return cmd
	case tea.KeyPressMsg:
		if p.traceRun != "" {
			return p.traceKey(msg)
		}
		if cmd, handled := p.filterKey(msg); handled {
			return cmd
		}
		k := p.sh.keys
		switch {
		case keyIs(msg, k.Back):
			p.filter.Clear()
			return p.restart()
		case keyIs(msg, k.Enter):
			if s := p.Selected(); s != nil {
				wf := s.Workflow
				if wf == "" {
					wf = p.workflow
				}
				return p.OpenTrace(s.ID, wf)
			}
		case keyIs(msg, k.Retry):
			if s := p.Selected(); s != nil {
				wf := s.Workflow
				if wf == "" {
					wf = p.workflow
				}
				// the block the workflow stood on when this row was read
				to := fmt.Sprintf("%s@%d", wf, s.WorkflowBlock)
				return p.sh.act("retrying "+wf, func(ctx context.Context) error { return p.sh.api.Retry(ctx, to) })
			}
		default:
			cmd, _ := p.navigate(msg, p.listHeight()/2)
			return cmd
		}
	}
	return nil
}

func (p *runsPane) traceKey(msg tea.KeyPressMsg) tea.Cmd {
	k := p.sh.keys
	last := max(len(p.traceLines)-p.height, 0)
	switch {
	case keyIs(msg, k.Back):
		p.closeTrace()
	case keyIs(msg, k.Up):
		p.traceOff--
	case keyIs(msg, k.Down):
		p.traceOff++
	case keyIs(msg, k.PageUp):
		p.traceOff -= p.height
	case keyIs(msg, k.PageDown):
		p.traceOff += p.height
	case keyIs(msg, k.Top):
		p.traceOff = 0
	case keyIs(msg, k.Bottom):
		p.traceOff = last
	}
	p.traceOff = max(min(p.traceOff, last), 0)
	return nil
}

// failed says whether a run ended in a failure a retry may help with.
func failed(status engine.RunStatus) bool {
	return status == engine.RunFailedLogic || status == engine.RunFailedInternal
}

func runPaused(status engine.RunStatus) bool {
	switch status {
	case engine.RunPausedTransient, engine.RunPausedApproval, engine.RunPausedReconciliation:
		return true
	}
	return false
}

func (p *runsPane) EnableKeys(k *keyMap) {
	if p.traceRun != "" {
		k.Back.SetEnabled(true)
		k.Back.SetHelp("esc", "close trace")
		return
	}
	k.Filter.SetEnabled(p.workflow != "")
	k.Back.SetEnabled(p.filter.Active())
	s := p.Selected()
	k.Enter.SetEnabled(s != nil)
	k.Enter.SetHelp("enter", "trace")
	k.Retry.SetEnabled(s != nil && failed(s.Status) && p.rowShown(len(p.items), p.rowHeight, 1))
}

func (p *runsPane) rowHeight(i int) int { return len(p.rowLines(i, false)) }

func (p *runsPane) rowLines(i int, sel bool) []string {
	st := p.sh.st
	r := p.items[i]
	statusSt := st.Dim
	switch {
	case failed(r.Status):
		statusSt = st.Bad
	case runPaused(r.Status):
		statusSt = st.Warn
	}
	handler := r.Handler
	// a producer's run has no phases of its own to show (its ledger
	// phase is the consumer's machine: "preparing" would mislabel it)
	if r.Phase != "" && r.HandlerType != "producer" {
		handler += " · " + string(r.Phase)
	}
	lines := []string{p.row(sel,
		cell{pad("#"+r.ID, p.idW), st.Dim},
		cell{pad(handler, p.handlerW) + " ", st.Bold},
		cell{pad(string(r.Status), p.statusW), statusSt},
		cell{padLeft(ago(p.sh.now(), r.CreatedAt), p.ageW), st.Dim})}
	var more []string
	if r.RetryOf != "" {
		more = append(more, "retry of #"+r.RetryOf)
	}
	if len(more) > 0 {
		lines = append(lines, p.row(false, cell{strings.Repeat(" ", p.idW) + fit(strings.Join(more, " · "), p.width-p.idW), st.Dim}))
	}
	if r.Error != "" {
		lines = append(lines, p.row(false, cell{strings.Repeat(" ", p.idW) + fit(oneLine(r.Error), p.width-p.idW), st.Bad}))
	}
	return lines
}

// layoutTrace lays the trace out once (per load and per resize), so
// scrolling it is only slicing.
func (p *runsPane) layoutTrace() {
	p.traceLines = p.traceLines[:0]
	if p.traceRun == "" || p.width == 0 {
		return
	}
	st := p.sh.st
	const ind = "          "
	w := max(p.width-len(ind), 1)
	add := func(s string) { p.traceLines = append(p.traceLines, s) }
	for _, t := range p.trace {
		at := t.At.In(p.sh.now().Location()).Format("15:04:05")
		switch t.Kind {
		case "call":
			head := fmt.Sprintf("%s  %s  %s.%s", at, t.Phase, t.Connector, t.Method)
			if t.DurationMS > 0 || t.Error == "" {
				head += fmt.Sprintf("  %d ms", t.DurationMS)
			}
			add(st.Bold.Render(fit(head, p.width)))
			if t.Args != "" {
				for _, l := range wrap("args "+jsonShown([]byte(t.Args)), w, 3) {
					add(ind + st.Dim.Render(l))
				}
			}
			if t.Result != "" {
				for _, l := range wrap("→ "+jsonShown([]byte(t.Result)), w, 3) {
					add(ind + st.Dim.Render(l))
				}
			}
			if t.Error != "" {
				for _, l := range wrap("✗ "+t.Error, w, 3) {
					add(ind + st.Bad.Render(l))
				}
			}
		default:
			// console lines and host notes carry their text in Args or Result.
			text := t.Args
			if text == "" {
				text = t.Result
			}
			label := "console"
			if t.Kind != "log" {
				label = t.Kind
			}
			head := fmt.Sprintf("%s  %s  %s  ", at, t.Phase, label)
			for j, l := range wrap(text, max(p.width-len(head), 1), 4) {
				if j == 0 {
					add(st.Dim.Render(head) + l)
				} else {
					add(strings.Repeat(" ", len(head)) + l)
				}
			}
			if t.Error != "" {
				add(ind + st.Bad.Render(fit("✗ "+oneLine(t.Error), w)))
			}
		}
	}
	p.traceOff = max(min(p.traceOff, len(p.traceLines)-p.height), 0)
}

func (p *runsPane) View() string {
	if p.traceRun != "" {
		switch {
		case p.traceErr != nil:
			return p.message("could not load the trace: " + oneLine(p.traceErr.Error()))
		case p.trace == nil:
			return p.message("Loading…")
		case len(p.traceLines) == 0:
			return p.message("This run called nothing and logged nothing.")
		}
		end := min(p.traceOff+p.height, len(p.traceLines))
		lines := make([]string, 0, p.height)
		for _, l := range p.traceLines[p.traceOff:end] {
			lines = append(lines, pad(l, p.width))
		}
		for len(lines) < p.height {
			lines = append(lines, strings.Repeat(" ", p.width))
		}
		return p.framed(lines, -1)
	}
	return p.view("No run matches.", "No runs yet.", p.rowLines)
}
