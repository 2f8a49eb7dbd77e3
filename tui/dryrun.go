package tui

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
	"keep/tui/printable"
)

// The dry run (d on Workflows): what the selected workflow's next runs would
// do, worked out by the engine on a throw-away copy (API.DryRun) — real
// reads, every mutation captured — and shown in place of the list until esc.

// dryRunTimeout is longer than an ordinary call: a dry run makes the
// workflow's real reads.
const dryRunTimeout = 5 * time.Minute

type dryRunMsg struct {
	workflow string
	rep      *api.TryReport
	err      error
}

type dryRun struct {
	workflow string
	rep      *api.TryReport
	err      error
	offset   int
}

func (a printableAPI) DryRun(ctx context.Context, workflow string, opts api.TryOptions) (*api.TryReport, error) {
	return clean(a.api.DryRun(ctx, workflow, opts))
}

func (a printableAPI) Script(ctx context.Context, workflow string) (*api.ScriptView, error) {
	return clean(a.api.Script(ctx, workflow))
}

func (p *workflowsPane) startDryRun(name string) tea.Cmd {
	p.dry = &dryRun{workflow: name}
	sh := p.sh
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(sh.ctx, dryRunTimeout)
		defer cancel()
		rep, err := sh.api.DryRun(ctx, name, api.TryOptions{})
		return dryRunMsg{workflow: name, rep: rep, err: err}
	}
}

func (p *workflowsPane) gotDryRun(msg dryRunMsg) {
	if p.dry == nil || p.dry.workflow != msg.workflow || p.dry.rep != nil || p.dry.err != nil {
		return // closed, or another workflow's
	}
	p.dry.rep, p.dry.err = msg.rep, msg.err
}

// dryRunKey handles keys while the dry run is shown: esc closes it, the
// movement keys scroll.
func (p *workflowsPane) dryRunKey(msg tea.KeyPressMsg) {
	k := p.sh.keys
	d := p.dry
	switch {
	case keyIs(msg, k.Back):
		p.dry = nil
	case keyIs(msg, k.Up):
		d.offset--
	case keyIs(msg, k.Down):
		d.offset++
	case keyIs(msg, k.PageUp):
		d.offset -= max(p.dryH-1, 1)
	case keyIs(msg, k.PageDown):
		d.offset += max(p.dryH-1, 1)
	case keyIs(msg, k.Top):
		d.offset = 0
	case keyIs(msg, k.Bottom):
		d.offset = math.MaxInt / 2 // dryRunBox stops it at the last screenful; j after it must not overflow
	}
}

// reportLines wraps one line of the report to w cells, its continuations under
// the text (past the indent and any bullet), so each item still reads as one.
func reportLines(l string, w int) []string {
	text := strings.TrimLeft(l, " ")
	if text == "" {
		return []string{""}
	}
	ind := strings.Repeat(" ", len(l)-len(text))
	if strings.HasPrefix(text, "• ") {
		ind += "  "
	}
	var out []string
	for i, piece := range breakLines(text, max(w-len(ind), 1)) {
		if i == 0 {
			out = append(out, l[:len(l)-len(text)]+piece)
			continue
		}
		out = append(out, ind+piece)
	}
	return out
}

// showsDryRun says whether the box of f shows the dry run instead: the
// large lower box in the wide layout while Workflows has the focus, the
// Workflows box in tabs. Moving to the pane below shows that pane again.
func (m *Model) showsDryRun(f focus) bool {
	if m.wf.dry == nil {
		return false
	}
	if m.lay.wide {
		return f == m.lower && m.focus == focusWorkflows
	}
	return f == focusWorkflows
}

func (m *Model) dryRunBox(w, h int) string {
	st := m.sh.st
	d := m.wf.dry
	iw, ih := st.inner(w, h)
	// wrapped, not cut: what a run would do is the point, and no key
	// scrolls sideways to the rest of a line
	var body []string
	for _, l := range d.lines() {
		body = append(body, reportLines(l, iw)...)
	}
	d.offset = max(min(d.offset, len(body)-ih), 0)
	lines := make([]string, 0, ih)
	for _, l := range body[d.offset:] {
		if len(lines) == ih {
			break
		}
		lines = append(lines, pad(fit(l, iw), iw))
	}
	for len(lines) < ih {
		lines = append(lines, strings.Repeat(" ", iw))
	}
	title := " Dry run · " + d.workflow + " · nothing is performed "
	return st.box(title, strings.Join(lines, "\n"), w, h, true)
}

// lines is the report in words, mutations first: they are the point.
func (d *dryRun) lines() []string {
	switch {
	case d.err != nil:
		return []string{"could not dry-run: " + oneLine(d.err.Error()), "esc: back"}
	case d.rep == nil:
		return []string{"Running it on a throw-away copy (real reads, no changes)…"}
	}
	r := d.rep
	out := []string{fmt.Sprintf("A throw-away copy that started %s: %d new inputs, %d mutations, %d events left pending.",
		r.StartedFrom, len(r.Inputs), len(r.Mutations), r.PendingEvents)}
	if r.Note != "" {
		out = append(out, r.Note)
	}
	if r.LimitReached {
		out = append(out, "Stopped at the limit of captured mutations; there is more.")
	}
	if len(r.Mutations) == 0 {
		out = append(out, "It would change nothing.")
	}
	for _, m := range r.Mutations {
		// what a script wrote stays on its line (printable.Line)
		what := printable.Line(m.Preview)
		if what == "" {
			what = m.Connector + "." + m.Method
		}
		out = append(out, "• "+what)
		if len(m.CausedBy) > 0 {
			out = append(out, "    for "+printable.Line(strings.Join(m.CausedBy, ", ")))
		}
		if m.NeedsApproval {
			out = append(out, "    "+m.Approval)
		}
	}
	out = append(out, "", "Runs:")
	for _, run := range r.Runs {
		line := fmt.Sprintf("  %s %s: %s", run.HandlerType, printable.Line(run.Handler), run.Status)
		if run.Error != "" {
			line += " — " + oneLine(run.Error)
		}
		out = append(out, line)
	}
	return append(out, "", "esc: back")
}
