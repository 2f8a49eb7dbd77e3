package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"keep/engine/api"
	"keep/tui/printable"
)

// attentionPane (3) is everything waiting on the person: approvals,
// uncertain mutations, failed runs, blocked workflows, stale inputs. Each
// shows what the host observed (the parameters), not only the script's
// title, and only the answers it accepts now.
type attentionPane struct {
	localList[api.AttentionItem]
	expanded map[string]bool
	labelW   int

	// held is the card that came under the cursor without the person
	// putting it there (the one there was answered, here or elsewhere,
	// and the next slid up or arrived), and heldSince when: a key pressed twice, or
	// just as the list changed, would otherwise answer a card nobody has
	// read. Its answers wait settleFor, or a key that chooses it.
	held      string
	heldSince time.Time
}

// settleFor is how long a card that moved under the cursor by itself is
// on screen before its answer keys act: longer than a double press, far
// shorter than reading a card.
const settleFor = time.Second

// selectedKey names the selected card, "" when there is none.
func (p *attentionPane) selectedKey() string {
	if it := p.Selected(); it != nil {
		return itemKey(*it)
	}
	return ""
}

// settled says whether the selected card is the person's to answer: they
// chose it, it was the first on screen, or it has been there settleFor.
func (p *attentionPane) settled() bool {
	return p.held == "" || p.held != p.selectedKey() || !p.sh.now().Before(p.heldSince.Add(settleFor))
}

// holding says whether the selected card's answers wait now.
func (p *attentionPane) holding() bool { return !p.settled() }

// chosen: the person put the cursor where it is.
func (p *attentionPane) chosen() { p.held = "" }

// isAnswer says whether msg is one of the keys that answer it, whether or
// not they are on now.
func isAnswer(k *keyMap, it api.AttentionItem, msg tea.KeyPressMsg) bool {
	answers := it.Answers
	if len(answers) == 0 {
		answers = defaultAnswers[it.Kind]
	}
	keys := answerKeys(k, it.Kind)
	for _, a := range answers {
		if b, ok := keys[a]; ok && slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

func newAttentionPane(sh *shared) *attentionPane {
	p := &attentionPane{expanded: map[string]bool{}}
	p.localList = localList[api.AttentionItem]{base: base{sh: sh}, key: itemKey, rowHeight: p.rowHeight, stay: true,
		match: func(it api.AttentionItem, f string) bool {
			return strings.Contains(strings.ToLower(it.Workflow+" "+it.Title+" "+kindLabel(it.Kind)), f)
		}}
	p.cardID = func() string {
		k := p.selectedKey()
		if p.expanded[k] {
			k += " open"
		}
		return k
	}
	return p
}

func (p *attentionPane) Title() string {
	if len(p.all) == 0 {
		return "3 Attention"
	}
	return fmt.Sprintf("3 Attention (%d)", len(p.all))
}

func (p *attentionPane) SetSize(w, h int) {
	p.base.SetSize(w, h)
	p.labelW = len("UNCERTAIN") + 2
}

func (p *attentionPane) query(ctx context.Context) tea.Msg {
	items, err := p.sh.api.Attention(ctx)
	return attentionMsg{items: items, err: err}
}

func itemKey(it api.AttentionItem) string { return string(it.Kind) + "/" + it.ID }

func (p *attentionPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case attentionMsg:
		// the first read is the first screen; after it, a card that
		// comes under the cursor came by itself (an empty list too: the
		// next card may arrive a moment after the last was answered)
		before, read := p.selectedKey(), p.loaded
		p.got(msg.items, msg.err)
		if after := p.selectedKey(); read && after != "" && after != before {
			p.held, p.heldSince = after, p.sh.now()
		}
	case tea.PasteMsg:
		if p.filterKey(msg) {
			p.chosen()
		}
	case tea.KeyPressMsg:
		if p.filterKey(msg) {
			p.chosen()
			return nil
		}
		k := p.sh.keys
		it := p.Selected()
		switch {
		case keyIs(msg, k.Back):
			p.chosen()
			if it != nil && p.expanded[itemKey(*it)] {
				delete(p.expanded, itemKey(*it))
			} else {
				p.filter.Clear()
				p.apply()
			}
		case keyIs(msg, k.Enter) && it != nil:
			p.chosen()
			if it.Kind == api.AttentionFailedRun {
				id, wf := it.ID, it.Workflow
				return func() tea.Msg { return openTraceMsg{runID: id, workflow: wf} }
			}
			p.expanded[itemKey(*it)] = !p.expanded[itemKey(*it)]
			p.scroll(len(p.shown), p.rowHeight)
		case p.moveKey(msg, 1):
			p.chosen()
		case p.cardKey(msg, len(p.shown), p.rowHeight):
		case it != nil:
			return p.answer(msg, *it)
		}
	}
	return nil
}

// answer turns an answer key into the engine call, asking first for the
// ones that cannot be taken back, and saying what will follow.
func (p *attentionPane) answer(msg tea.KeyPressMsg, it api.AttentionItem) tea.Cmd {
	sh, k := p.sh, p.sh.keys
	title := fit(oneLine(it.Title), 40)
	card := cardKey(it)
	resolve := func(a api.Answer, what string) tea.Cmd {
		return sh.answer(card, title, what, func(ctx context.Context) error { return sh.api.Resolve(ctx, it.AnswerID(), a) })
	}
	q := func(verb string) string { return verb + " " + quoted(title) + "?" }
	if it.Kind == api.AttentionProposal {
		return proposalAnswer(sh, msg, it, card)
	}
	switch {
	case keyIs(msg, k.Approve):
		return sh.answer(card, title, "approved "+title, func(ctx context.Context) error { return sh.api.Approve(ctx, it.AnswerID(), false) })
	case keyIs(msg, k.ApproveAlways):
		return sh.answer(card, title, "approved "+title+", and always for "+fit(printable.Line(it.Scope), 30), func(ctx context.Context) error { return sh.api.Approve(ctx, it.AnswerID(), true) })
	case keyIs(msg, k.Reject):
		return sh.ask(q("reject"), "reject: the change will not be made; the events behind it will be marked skipped",
			func() tea.Cmd {
				return sh.answer(card, title, "rejected "+title, func(ctx context.Context) error { return sh.api.Reject(ctx, it.AnswerID()) })
			})
	case keyIs(msg, k.TryAgain):
		return resolve(api.TryAgain, "checking again: "+title)
	case keyIs(msg, k.Happened):
		return sh.ask(q("it happened:"), "it happened: it will be recorded as done and the workflow goes on",
			func() tea.Cmd { return resolve(api.Happened, "recorded as happened: "+title) })
	case keyIs(msg, k.NotHappened):
		return sh.ask(q("it didn't happen:"), "it didn't happen: sent again under the same idempotency key",
			func() tea.Cmd { return resolve(api.NotHappened, "recorded as not happened: "+title) })
	case keyIs(msg, k.Skip):
		return sh.ask(q("skip"), "skip: the change will not be made; the events will be marked skipped and not processed",
			func() tea.Cmd { return resolve(api.SkipIt, "skipped "+title) })
	case keyIs(msg, k.SkipInput):
		return skipInput(sh, it.ID, it.Title, card)
	case keyIs(msg, k.Retry):
		wf := it.Workflow
		if it.Kind == api.AttentionBlockedWorkflow && wf == "" {
			wf = it.ID
		}
		// the block this card drew, never whatever stands when the key lands
		at := it
		at.Workflow = wf
		return sh.actOn(card, "retrying "+wf, func(ctx context.Context) error { return sh.api.Retry(ctx, at.WorkflowAnswerID()) })
	}
	return nil
}

// defaultAnswers are what each kind accepts when the engine does not say.
var defaultAnswers = map[api.AttentionKind][]string{
	api.AttentionApproval:        {"approve", "approve-always", "reject"},
	api.AttentionReconciliation:  {"try-again", "happened", "not-happened", "skip"},
	api.AttentionFailedRun:       {"retry"},
	api.AttentionBlockedWorkflow: {"retry"},
	api.AttentionStaleInput:      {"skip-input"},
}

// answerKeys maps the engine's answer names to the keys that give them.
func answerKeys(k *keyMap, kind api.AttentionKind) map[string]*key.Binding {
	m := map[string]*key.Binding{
		"approve": &k.Approve, "approve-always": &k.ApproveAlways, "reject": &k.Reject,
		"try-again": &k.TryAgain, "happened": &k.Happened, "not-happened": &k.NotHappened,
		"skip": &k.Skip, "retry": &k.Retry, "skip-input": &k.SkipInput,
		"accept": &k.Approve, // a proposal (proposal.go)
	}
	if kind == api.AttentionStaleInput {
		m["skip"] = &k.SkipInput // skipping a stale input is skipping the input
	}
	return m
}

func (p *attentionPane) EnableKeys(k *keyMap) {
	k.Filter.SetEnabled(true)
	it := p.Selected()
	k.Back.SetEnabled(p.filter.Active() || (it != nil && p.expanded[itemKey(*it)]))
	if it == nil {
		return
	}
	k.Enter.SetEnabled(true)
	k.Enter.SetHelp("enter", "details")
	if it.Kind == api.AttentionFailedRun {
		k.Enter.SetHelp("enter", "trace")
	}
	p.enableCardKeys(k, len(p.shown), p.rowHeight)
	if !p.selectionShown() || p.holding() {
		return // its answers wait until the person can read it
	}
	answers := it.Answers
	if len(answers) == 0 {
		answers = defaultAnswers[it.Kind]
	}
	keys := answerKeys(k, it.Kind)
	for _, a := range answers {
		if b, ok := keys[a]; ok {
			b.SetEnabled(true)
		}
	}
}

func (p *attentionPane) rowHeight(i int) int { return len(p.rowLines(i, false)) }

// selectionShown says whether the selected card's title and call are all
// on screen: its answer keys act only then. A card taller than the pane
// counts them once they have all been on screen as it was scrolled.
func (p *attentionPane) selectionShown() bool {
	if p.cursor >= len(p.shown) {
		return false
	}
	return p.rowShown(len(p.shown), p.rowHeight, p.mustSee(p.cursor))
}

// mustSee is how many of card i's first lines must be on screen before it
// can be answered: the title and the whole call.
func (p *attentionPane) mustSee(i int) int {
	_, n := p.card(i, false)
	return n
}

func (p *attentionPane) rowLines(i int, sel bool) []string {
	lines, _ := p.card(i, sel)
	return lines
}

// card is item i's lines, and how many of them are its title and call.
func (p *attentionPane) card(i int, sel bool) (lines []string, must int) {
	st := p.sh.st
	it := p.shown[i]
	ind := strings.Repeat(" ", p.labelW)
	w := max(p.width-p.labelW, 1)
	open := p.expanded[itemKey(it)]
	head := it.Title
	if it.Workflow != "" {
		head = it.Workflow + " · " + it.Title
	}
	n := 3
	if open {
		n = 12
	}
	for j, l := range wrap(head, w, n) {
		label := ind
		if j == 0 {
			label = pad(kindLabel(it.Kind), p.labelW)
		}
		lines = append(lines, p.row(sel && j == 0, cell{label, st.Kind}, cell{l, st.Bold}))
	}
	add := func(s string, look cell) {
		lines = append(lines, p.row(false, cell{ind, lipglossPlain}, cell{fit(s, w), look.style}))
	}
	// Beside the script's title, the call as the host observed it, wrapped
	// and never cut: this is what an answer acts on.
	const callLabel = "call: "
	if it.Kind == api.AttentionProposal {
		// a proposal makes no call: its summary, dry run and diff, whole
		// once opened
		pn := 2
		if open {
			pn = proposalLines(it)
		}
		for j, l := range previewLines(it.Preview, pn) {
			add(l, cell{style: st.Dim})
			if j == 1 {
				must = len(lines) // what it adds: on screen before an answer counts
			}
		}
		if must == 0 {
			must = len(lines)
		}
	} else {
		// every argument named; an opened card shows each one whole
		room, limit := api.ArgumentRoom, cardArguments
		if open {
			room, limit = 0, 0
		}
		call, own := callLines(callView{it.Connector, it.Method, it.Target, it.Preview, it.Params}, w-len(callLabel), room, limit,
			"enter shows every one")
		for j, l := range call {
			label := strings.Repeat(" ", len(callLabel))
			if j == 0 {
				label = callLabel
			}
			add(label+l, cell{style: st.Dim})
		}
		for _, l := range own {
			add(strings.Repeat(" ", len(callLabel))+l, cell{style: st.Dim})
		}
		must = len(lines)
	}
	n = 2
	if open {
		n = 8
	}
	for _, l := range wrap(it.Reason, w, n) {
		add(l, cell{style: st.Warn})
	}
	for _, l := range answeredLines(p.sh.now(), it, w) {
		add(l, cell{style: st.Dim})
	}
	if it.Kind == api.AttentionApproval && accepts(it, "approve-always") {
		// both answers, named where they are given: approving covers
		// this call; always covers the scope shown, from now on
		// wrapped, never cut: a cut path reads as its folder, a wider
		// grant than A gives
		for _, l := range wrapAll(approveChoices(p.sh.keys, it), w) {
			add(l, cell{style: lipglossPlain})
		}
	}
	if it.Command != "" {
		add("fix: run "+it.Command, cell{style: st.Bold})
	}
	if it.Check != "" {
		for _, l := range wrap("check by hand: "+it.Check, w, n) {
			add(l, cell{style: lipglossPlain})
		}
	}
	if len(it.Inputs) > 0 {
		add("because of: "+strings.Join(it.Inputs, "; "), cell{style: st.Dim})
	}
	if open && !it.CreatedAt.IsZero() {
		add("since "+ago(p.sh.now(), it.CreatedAt), cell{style: st.Dim})
	}
	return lines, must
}

// accepts says whether it takes answer now.
func accepts(it api.AttentionItem, answer string) bool {
	answers := it.Answers
	if len(answers) == 0 {
		answers = defaultAnswers[it.Kind]
	}
	for _, a := range answers {
		if a == answer {
			return true
		}
	}
	return false
}

// approveChoices names what each approval key covers.
func approveChoices(k *keyMap, it api.AttentionItem) string {
	scope := printable.Line(it.Scope)
	if scope == "" {
		scope = it.Connector + "." + it.Method
	}
	return fmt.Sprintf("%s: this call · %s: always, for %s", k.Approve.Help().Key, k.ApproveAlways.Help().Key, scope)
}

func (p *attentionPane) View() string {
	switch {
	case !p.loaded && p.err == nil:
		return p.message("Loading…")
	case len(p.shown) == 0 && p.filter.Value() != "":
		return p.message("Nothing matches.")
	case len(p.shown) == 0:
		return p.message("Nothing needs you.")
	}
	return p.render(len(p.shown), p.rowLines, "")
}
