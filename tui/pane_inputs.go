package tui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
)

// inputsPane (2) shows the selected workflow's inputs, newest first, each
// with the outputs it caused, a page at a time.
type inputsPane struct {
	pagedList[api.InputView]
	expanded map[string]bool

	ageW, statusW, titleW, outStateW int
}

// inputsMsg is a page of inputs.
type inputsMsg = pageMsg[api.InputView]

func newInputsPane(sh *shared) *inputsPane {
	p := &inputsPane{expanded: map[string]bool{}}
	p.pagedList = newPagedList(sh, "input", func(in api.InputView) string { return in.InputID }, sh.api.Inputs, p.rowHeight)
	p.cardID = func() string {
		s := p.Selected()
		if s == nil {
			return ""
		}
		if p.expanded[s.InputID] {
			return s.InputID + " open"
		}
		return s.InputID
	}
	return p
}

func (p *inputsPane) Title() string {
	if p.workflow == "" {
		return "2 Inputs → Outputs"
	}
	return "2 Inputs → Outputs · " + p.workflow + p.titleNote()
}

func (p *inputsPane) SetSize(w, h int) {
	p.pagedList.SetSize(w, h)
	p.ageW = len("99 days ago") + 1
	p.statusW = len("done, no changes")
	p.outStateW = len("uncertain, needs you")
	p.titleW = max(p.width-2-p.ageW-p.statusW-1, 1)
}

func (p *inputsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case inputsMsg:
		return p.gotPage(msg)
	case tea.PasteMsg:
		cmd, _ := p.filterKey(msg)
		return cmd
	case tea.KeyPressMsg:
		if cmd, handled := p.filterKey(msg); handled {
			return cmd
		}
		k := p.sh.keys
		switch {
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
				return skipInput(p.sh, s.InputID, s.Title, "")
			}
		case p.cardKey(msg, len(p.items), p.rowHeight):
		default:
			cmd, _ := p.navigate(msg, p.listHeight())
			return cmd
		}
	}
	return nil
}

// skipInput asks first: skipping cannot be undone.
// card is the attention card skipped (cardKey), "" from the Inputs pane.
func skipInput(sh *shared, id, title, card string) tea.Cmd {
	return sh.ask("skip "+quoted(fit(oneLine(title), 40))+"?",
		"skip: the events will be marked skipped and not processed",
		func() tea.Cmd {
			return sh.actOn(card, "skipped "+fit(oneLine(title), 40), func(ctx context.Context) error { return sh.api.SkipInput(ctx, id) })
		})
}

// quoted marks a title off in a question. The title came through
// printableAPI and is shown as is: %q would escape it a second time, and the
// question would name a title the list does not show.
func quoted(title string) string { return `"` + title + `"` }

func canSkipInput(status string) bool {
	return status == api.InputPending || status == api.InputNeedsAttention
}

func (p *inputsPane) EnableKeys(k *keyMap) {
	k.Filter.SetEnabled(p.workflow != "")
	s := p.Selected()
	k.Enter.SetEnabled(s != nil && len(s.Outputs) > 0)
	k.Enter.SetHelp("enter", "details")
	if s != nil && p.expanded[s.InputID] {
		k.Enter.SetHelp("enter", "fold")
	}
	k.SkipInput.SetEnabled(s != nil && canSkipInput(s.Status) && p.rowShown(len(p.items), p.rowHeight, 1))
	k.Back.SetEnabled(p.filter.Active() || (s != nil && p.expanded[s.InputID]))
	p.enableCardKeys(k, len(p.items), p.rowHeight)
}

func (p *inputsPane) rowHeight(i int) int { return len(p.rowLines(i, false)) }

func (p *inputsPane) rowLines(i int, sel bool) []string {
	st := p.sh.st
	now := p.sh.now()
	in := p.items[i]
	statusSt := st.Dim
	switch {
	case in.Status == api.InputNeedsAttention || in.Stale:
		statusSt = st.Warn
	case in.Status == api.InputDone:
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
		call, own := callLines(callView{o.Connector, o.Method, o.Target, o.Preview, o.Params}, p.width-len(detail), api.ArgumentRoom, cardArguments,
			"keep mutations "+in.Workflow+" --json has every one")
		for _, l := range call {
			lines = append(lines, p.row(false, cell{detail + l, st.Dim}))
		}
		for _, l := range own {
			lines = append(lines, p.row(false, cell{detail + l, st.Dim}))
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
	return p.view("No input matches.", "No inputs yet.", p.rowLines)
}
