package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"keep/engine"
	"keep/engine/api"
	"keep/tui/printable"
)

// Options configure the TUI. The zero value is usable.
type Options struct {
	// Now is the clock relative times are computed from; time.Now if nil.
	Now func() time.Time
	// Logger receives the TUI's logs. They must go to a file the caller
	// opened, never the terminal (it is the screen). Discarded if nil.
	Logger *slog.Logger
	// NoColor drops colour (emphasis stays). Set also when NO_COLOR is set
	// in the environment.
	NoColor bool
	// StartupNote is shown once in the status line, e.g. how to try the demo.
	StartupNote string
	// DemoInbox, set on a first run, is the demo's folder: named on the
	// first screen (the header) until the first file is dropped there.
	DemoInbox string
}

type focus int

const (
	focusWorkflows focus = iota
	focusInputs
	focusAttention
	focusRuns
	focusAccounts
	paneCount
)

// Model is the root: it lays the panes out, routes keys (global ones first,
// then the focused pane), and turns engine notifications into re-reads.
type Model struct {
	sh   *shared
	info api.Info

	wf    *workflowsPane
	in    *inputsPane
	at    *attentionPane
	rn    *runsPane
	ac    *accountsPane
	panes [paneCount]pane

	focus focus
	// touched: the person has pressed a key, so focus is theirs to move.
	touched bool
	// lower is which of Attention and Run log the wide layout shows below.
	lower focus

	lay  layout
	help help.Model

	confirm *confirm
	toast   *toast
	toastN  int
	// Status line sources, most urgent first: errText, flash, last note.
	errText string
	flash   string
	last    string
	note    string
	// demoInbox: Options.DemoInbox until a file is dropped there
	demoInbox string

	// quitting: q was pressed with actions on their way (shared.onWay);
	// keep quits when the last comes back, or at a second q.
	quitting bool

	// One re-read at a time; notifications during it make one more.
	refreshing bool
	dirty      bool
	// reads counts the re-reads begun (shared.sent).
	reads int

	noTimers bool
}

// New builds the TUI's model over an engine.API. Use Run to start it on a
// terminal; New alone is for tests and embedding.
func New(api api.API, opts Options) *Model {
	if api == nil {
		panic("tui.New: nil engine.API")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	sh := &shared{
		ctx:  context.Background(),
		api:  printableAPI{api: api},
		now:  opts.Now,
		log:  opts.Logger.With("component", "tui"),
		st:   newStyles(opts.NoColor),
		keys: newKeyMap(),
	}
	m := &Model{sh: sh, info: sh.api.Info(), note: opts.StartupNote, lower: focusAttention, demoInbox: opts.DemoInbox}
	m.wf, m.in, m.at, m.rn = newWorkflowsPane(sh), newInputsPane(sh), newAttentionPane(sh), newRunsPane(sh)
	m.ac = newAccountsPane(sh)
	m.panes = [paneCount]pane{m.wf, m.in, m.at, m.rn, m.ac}
	m.help = help.New()
	m.help.Styles = sh.st.Help
	m.help.ShortSeparator = " · "
	m.wf.Focus()
	m.syncKeys()
	return m
}

func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.sh.cmd(m.wf.query), m.sh.cmd(m.at.query), m.sh.cmd(m.ac.query), m.after(time.Minute, tickMsg{}))
}

func (m *Model) focused() pane { return m.panes[m.focus] }

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.sh.asked != nil {
		m.confirm, m.sh.asked = m.sh.asked, nil
	}
	// a question or a filter opening or closing changes the help's height
	// (helpView): the panes take back, or give, its rows
	if m.lay.width > 0 && m.helpRows() != m.lay.helpH {
		m.relayout()
	}
	m.syncKeys()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.lay.width, m.lay.height = msg.Width, msg.Height
		m.relayout()
		m.startOnPrompt()
	case tea.KeyPressMsg:
		m.touched = true
		return m.key(msg)
	case tea.PasteMsg:
		// text for the filter being typed; anywhere else a paste is not
		// keys, and must not answer or act as if it were typed
		if m.confirm == nil && m.focused().Editing() {
			m.touched = true
			return tea.Batch(m.focused().Update(msg), m.follow())
		}
	case notifyMsg:
		n := api.Notification(msg)
		printable.Deep(&n) // its text may quote a script
		return m.notified(n)
	case workflowsMsg:
		m.loadErr("workflows", msg.err)
		m.wf.Update(msg)
		return m.follow()
	case workflowDetailMsg:
		if msg.name == m.wf.detailOf {
			m.loadErr("the workflow's answers", msg.err)
		}
		return m.wf.Update(msg)
	case attentionMsg:
		m.loadErr("what needs you", msg.err)
		cmd := m.at.Update(msg)
		m.startOnPrompt()
		if m.at.holding() {
			// its keys come on by themselves once it has been read
			cmd = tea.Batch(cmd, m.after(settleFor, settledMsg{}))
		}
		return cmd
	case inputsMsg:
		m.loadErr("inputs", msg.err)
		cmd := m.in.Update(msg)
		// the demo's welcome note is its first input; a second is a file
		// the person dropped, and the header stops naming the folder
		if m.demoInbox != "" && m.in.workflow == "demo" && len(m.in.items) > 1 {
			m.demoInbox = ""
		}
		return cmd
	case accountsMsg:
		m.loadErr("accounts", msg.err)
		return m.ac.Update(msg)
	case runsMsg:
		m.loadErr("runs", msg.err)
		return m.rn.Update(msg)
	case traceMsg:
		return m.rn.Update(msg)
	case dryRunMsg:
		return m.wf.Update(msg)
	case focusMsg:
		m.setFocus(msg.to)
	case refreshMsg:
		var cmds []tea.Cmd
		for _, sub := range msg.msgs {
			cmds = append(cmds, m.update(sub))
		}
		m.refreshing = false
		// a card answered before this read began has been read again:
		// still there, it asks anew
		for card, after := range m.sh.sent {
			if after >= 0 && msg.n > after {
				delete(m.sh.sent, card)
			}
		}
		if m.dirty {
			m.dirty = false
			cmds = append(cmds, m.refresh())
		}
		return tea.Batch(cmds...)
	case doneMsg:
		m.sh.onWay = max(m.sh.onWay-1, 0)
		if msg.card != "" {
			if msg.err != nil {
				// not taken: the card may be answered again
				delete(m.sh.sent, msg.card)
			} else {
				m.sh.sent[msg.card] = m.reads
			}
		}
		if m.quitting && m.sh.onWay == 0 {
			m.quitting = false
			if msg.err == nil {
				return tea.Quit
			}
			// it failed: keep stays to say so (below), and q quits then
		}
		var gone goneErr
		switch {
		case errors.As(msg.err, &gone):
			m.errText, m.flash = oneLine(gone.Error()), ""
		case msg.err != nil:
			m.errText = msg.what + " failed: " + oneLine(msg.err.Error())
			if text, ok := m.awayText(msg.err); ok {
				m.errText = "nothing done: " + text
			}
			m.flash = ""
		default:
			m.errText, m.flash = "", msg.what
		}
		return m.refresh()
	case openTraceMsg:
		m.setFocus(focusRuns)
		return m.rn.OpenTrace(msg.runID, msg.workflow)
	case toastDoneMsg:
		if m.toast != nil && m.toast.id == msg.id {
			m.toast = nil
		}
	case tickMsg:
		// Only relative times change; the next View re-renders them.
		return m.after(time.Minute, tickMsg{})
	}
	return nil
}

// loadErr puts a failed read in the status line; the pane keeps what it
// showed, so a daemon hiccup does not blank the screen. The same read
// succeeding takes the complaint away: it no longer holds.
func (m *Model) loadErr(what string, err error) {
	prefix := "could not read " + what + ": "
	switch {
	case err != nil:
		m.sh.log.Warn("read failed", "what", what, "err", err)
		if text, ok := m.awayText(err); ok {
			// an action refused for the same reason keeps saying so
			if !strings.Contains(m.errText, text) {
				m.errText = text
			}
		} else {
			m.errText = prefix + oneLine(err.Error())
		}
	case strings.HasPrefix(m.errText, prefix) || strings.Contains(m.errText, awayHead):
		m.errText = ""
	}
}

// engineAway is an error saying the engine this screen acts through is not
// there: the daemon was stopped or killed (engine/daemon's AwayError, which
// names its socket). Recognised by its method, the TUI stays on api.API and
// knows nothing of the transport.
type engineAway interface {
	error
	EngineAway() (socket string)
}

// awayHead begins the status line while the engine is away.
const awayHead = "keep's engine is not running"

// awayText is what the status line says when err is the engine being away:
// what is wrong, on which database, how to start it, and that the screen
// comes back by itself (listen). A transport's "dial unix … connection
// refused" means nothing to the person; it goes to the log with the rest
// of the error.
func (m *Model) awayText(err error) (string, bool) {
	var a engineAway
	if !errors.As(err, &a) {
		return "", false
	}
	where := m.info.DBPath
	if where == "" {
		where = a.EngineAway()
	}
	// what is wrong and how to mend it first, so that 80 columns show them
	return fmt.Sprintf("%s: start it with keep --daemon (reconnects by itself) · or keep service install · %s",
		awayHead, homePath(where)), true
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	// what the keys do is decided now, not when the last message came (a
	// card held under the cursor settles with time alone)
	m.syncKeys()
	if m.confirm != nil {
		return m.confirmKey(msg)
	}
	m.errText = ""
	k := m.sh.keys
	p := m.focused()
	if p.Editing() {
		if msg.String() == "ctrl+c" {
			return m.quit()
		}
		m.quitting = false
		return tea.Batch(p.Update(msg), m.follow())
	}
	if !keyIs(msg, k.Quit) {
		m.quitting = false // the person went on: a late answer must not end keep under them
	}
	switch {
	case keyIs(msg, k.Quit):
		return m.quit()
	case keyIs(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.relayout()
	case keyIs(msg, k.NextPane):
		m.setFocus((m.focus + 1) % paneCount)
	case keyIs(msg, k.PrevPane):
		m.setFocus((m.focus + paneCount - 1) % paneCount)
	case keyIs(msg, k.Pane1):
		m.setFocus(focusWorkflows)
	case keyIs(msg, k.Pane2):
		m.setFocus(focusInputs)
	case keyIs(msg, k.Pane3):
		m.setFocus(focusAttention)
	case keyIs(msg, k.Pane4):
		m.setFocus(focusRuns)
	case keyIs(msg, k.Pane5):
		m.setFocus(focusAccounts)
	case keyIs(msg, k.RunNow):
		if w := m.current(); w != nil {
			name := w.Name
			return m.sh.act("asked "+name+" to run now", func(ctx context.Context) error { return m.sh.api.RunNow(ctx, name) })
		}
	case keyIs(msg, k.Pause):
		if w := m.current(); w != nil {
			name := w.Name
			if m.resumes(*w) {
				to := m.resumeTo(*w)
				return m.sh.act("resumed "+name, func(ctx context.Context) error { return m.sh.api.Resume(ctx, to) })
			}
			// one key stops a workflow: asked first, as reject and skip are
			return m.sh.ask(fmt.Sprintf("pause %s?", name), "pause: no new run starts until you resume it (p again); a run under way stops at its next step",
				func() tea.Cmd {
					return m.sh.act("paused "+name, func(ctx context.Context) error { return m.sh.api.Pause(ctx, name) })
				})
		}
	case m.answerOnWay(msg):
		it := m.at.Selected()
		m.errText = "your answer to " + fit(oneLine(it.Title), 40) + " is on its way: it is not sent twice"
	case m.heldAnswer(msg):
		it := m.at.Selected()
		m.errText = fit(oneLine(it.Title), 40) + " has just come under the cursor: read it, then answer (or j/k to choose it)"
	case m.unseenAnswer(msg):
		m.errText = m.unseenText()
	case m.answersFromAnywhere(msg):
		return m.at.answer(msg, *m.at.Selected())
	case m.idleKey(msg) != "":
		m.errText = m.idleKey(msg)
	default:
		cmd := p.Update(msg)
		if m.focus == focusWorkflows {
			return tea.Batch(cmd, m.follow())
		}
		return cmd
	}
	return nil
}

// idleKey says why msg does nothing, when it is an answer or an action
// key that is off where the person is: a key pressed and silently ignored
// reads as a dead key, or as an answer given. "" when msg is no such key,
// or it is on (the pane acts on it).
func (m *Model) idleKey(msg tea.KeyPressMsg) string {
	k := m.sh.keys
	for _, b := range []*key.Binding{&k.Approve, &k.ApproveAlways, &k.Reject, &k.TryAgain, &k.Happened, &k.NotHappened,
		&k.Skip, &k.SkipInput, &k.Retry, &k.DryRun, &k.RunNow, &k.Pause} {
		if b.Enabled() || !slices.Contains(b.Keys(), msg.String()) {
			continue
		}
		what := b.Help().Key + " (" + k.words[b].Desc + ")"
		switch {
		case m.showsDryRun(m.focus) || (m.focus == focusWorkflows && m.wf.dry != nil):
			return what + " does nothing in the dry run: esc goes back"
		case !m.drawn(m.focus):
			return what + " does nothing: the pane has no room to show what it would act on"
		case !slices.Contains(k.paneKeys(m.focus), b):
			return what + " is not a key of this pane: ? lists the keys here"
		}
		return what + " does nothing here: the selection does not take it (? lists what it takes)"
	}
	return ""
}

// quit ends the program, unless an action is still on its way to the
// engine: keep would then close the engine under an answer the person
// believes given. It says so and quits when the answer is taken; q again
// quits at once.
func (m *Model) quit() tea.Cmd {
	if m.sh.onWay == 0 || m.quitting {
		return tea.Quit
	}
	m.quitting = true
	m.errText = "your last answer or action is on its way to the engine: keep quits once it is taken · q again quits now"
	if m.sh.onWay > 1 {
		m.errText = fmt.Sprintf("%d answers or actions are on their way to the engine: keep quits once they are taken · q again quits now", m.sh.onWay)
	}
	return nil
}

// attentionInView is the selected attention item when it is an approval or
// a reconciliation prompt shown on screen below another focused pane: its
// answer keys work from there too, so the person need not move first.
func (m *Model) attentionInView() *api.AttentionItem {
	if m.focus == focusAttention || !m.lay.wide || !m.drawn(focusAttention) || !m.at.selectionShown() || m.at.holding() {
		return nil
	}
	it := m.at.Selected()
	if it == nil || (it.Kind != api.AttentionApproval && it.Kind != api.AttentionReconciliation) {
		return nil
	}
	return it
}

// answerOnWay says whether msg would answer the selected attention card
// while an answer to it is on its way (shared.sent).
func (m *Model) answerOnWay(msg tea.KeyPressMsg) bool {
	it := m.at.Selected()
	if it == nil {
		return false
	}
	if _, ok := m.sh.sent[cardKey(*it)]; !ok {
		return false
	}
	return m.answersSelected(msg) || m.answersFromAnywhere(msg)
}

// heldAnswer says whether msg would answer the selected attention card,
// on screen where its keys act, but for the card having just moved under
// the cursor by itself (attentionPane.held).
func (m *Model) heldAnswer(msg tea.KeyPressMsg) bool {
	return m.at.holding() && m.at.selectionShown() && m.answersSelected(msg)
}

// answersSelected says whether msg is one of the selected attention card's
// answer keys where the person is: any of them in Attention, those that
// act from anywhere when the card is on screen below another pane.
func (m *Model) answersSelected(msg tea.KeyPressMsg) bool {
	it := m.at.Selected()
	if it == nil {
		return false
	}
	// in Attention itself a key is the card's answer whether or not its
	// box has room to be drawn: refused then, but never without a word
	if m.focus != focusAttention {
		if !m.drawn(focusAttention) || !m.lay.wide || (it.Kind != api.AttentionApproval && it.Kind != api.AttentionReconciliation) {
			return false
		}
		for _, b := range m.anywhereKeys(*it) {
			if slices.Contains(b.Keys(), msg.String()) {
				return true
			}
		}
		return false
	}
	return isAnswer(m.sh.keys, *it, msg)
}

// unseenAnswer says whether msg would answer the selected attention card
// but for the card's title and call not being all on screen, where its
// keys act only once they are: the key is refused, and the person told why
// (else the card looks as if it could not be answered at all).
func (m *Model) unseenAnswer(msg tea.KeyPressMsg) bool {
	return !m.at.holding() && !m.at.selectionShown() && m.answersSelected(msg)
}

// unseenText says why the selected card cannot be answered now, and what
// brings its answers back.
func (m *Model) unseenText() string {
	it := m.at.Selected()
	title := fit(oneLine(it.Title), 40)
	covered := m.at.covered
	m.at.covered = 0
	underToast := covered > 0 && m.at.selectionShown()
	m.at.covered = covered
	// a card taller than the pane is scrolled to the rest of its call
	scroll := ""
	if m.drawn(focusAttention) && m.at.tall(len(m.at.shown), m.at.rowHeight) {
		scroll = m.sh.keys.CardDown.Help().Key + " scrolls it, or "
	}
	// what to do first: a narrow window shows the start of the line
	switch {
	case underToast:
		return "a notice covers the card: answer once it goes · " + title
	case m.at.expanded[itemKey(*it)]:
		return "the opened card runs past the pane: " + scroll + "esc folds it, then answer · " + title
	case m.help.ShowAll:
		return "the card does not fit beside the help: " + scroll + "? closes it, then answer · " + title
	}
	larger := "a taller window"
	if !m.lay.wide && m.lay.width < minWidth {
		larger = "a wider window"
	}
	return "the card does not fit: " + scroll + larger + " shows it, then answer · " + title
}

// drawn says whether pane f's own content is on screen now: its box is
// laid out, tall enough to show rows, and not given over to the dry run
// (which is the Workflows pane's own content). A pane that is not drawn
// gets no action keys: nothing is answered, skipped or retried blind.
func (m *Model) drawn(f focus) bool {
	l := m.lay
	switch {
	case l.width <= 0 || l.height <= 0:
		return false
	case f != focusWorkflows && m.showsDryRun(f):
		return false
	case l.wide && (f == focusWorkflows || f == focusInputs):
		return true
	case l.wide:
		return f == m.lower && l.bottomH >= minBoxHeight
	}
	return f == m.focus && !l.cramped()
}

// anywhereKeys are the answer keys of it that act from any pane: those of
// approvals and reconciliations, none of which another pane uses. "Always"
// widens a grant for good, so it is given only in Attention itself.
func (m *Model) anywhereKeys(it api.AttentionItem) []*key.Binding {
	answers := it.Answers
	if len(answers) == 0 {
		answers = defaultAnswers[it.Kind]
	}
	keys := answerKeys(m.sh.keys, it.Kind)
	var out []*key.Binding
	for _, a := range answers {
		switch a {
		case "approve", "reject", "try-again", "happened", "not-happened", "skip":
			out = append(out, keys[a])
		}
	}
	return out
}

// answersFromAnywhere says whether msg answers the attention item in view.
func (m *Model) answersFromAnywhere(msg tea.KeyPressMsg) bool {
	it := m.attentionInView()
	if it == nil {
		return false
	}
	for _, b := range m.anywhereKeys(*it) {
		if keyIs(msg, *b) {
			return true
		}
	}
	return false
}

func paused(w api.WorkflowView) bool {
	return w.Status == engine.WorkflowPaused || w.State == api.StatePaused
}

// resumes says whether p resumes rather than pauses: the workflow is
// paused, or it is blocked and the engine offers "resume" to clear it.
func (m *Model) resumes(w api.WorkflowView) bool {
	if paused(w) {
		return true
	}
	if it := m.at.Selected(); m.focus == focusAttention && it != nil && it.Workflow == w.Name {
		return slices.Contains(it.Answers, "resume")
	}
	return false
}

// resumeTo names w with the block the screen drew it on (the selected
// card's, when it offers the resume): the engine refuses a resume once
// another block stands, rather than clear one nobody was shown.
func (m *Model) resumeTo(w api.WorkflowView) string {
	if it := m.at.Selected(); m.focus == focusAttention && it != nil && it.Workflow == w.Name && slices.Contains(it.Answers, "resume") {
		return it.WorkflowAnswerID()
	}
	return w.Block.AnswerTo(w.Name)
}

// current is the workflow R and p act on: the one the selected attention
// item is about when Attention is focused, else the one selected in pane 1.
func (m *Model) current() *api.WorkflowView {
	if m.focus == focusAttention {
		if it := m.at.Selected(); it != nil {
			for i := range m.wf.all {
				if m.wf.all[i].Name == it.Workflow {
					return &m.wf.all[i]
				}
			}
		}
	}
	return m.wf.Selected()
}

// follow makes the Inputs and Run log panes show the selected workflow,
// and reads the answers given about it for its row.
func (m *Model) follow() tea.Cmd {
	name := ""
	if w := m.wf.Selected(); w != nil {
		name = w.Name
	}
	return tea.Batch(m.in.SetWorkflow(name), m.rn.SetWorkflow(name), m.wf.SetDetail(name))
}

func (m *Model) setFocus(f focus) {
	m.focused().Blur()
	m.focus = f
	m.focused().Focus()
	if f == focusAttention || f == focusRuns || f == focusAccounts {
		m.lower = f
	}
}

func (m *Model) notified(n api.Notification) tea.Cmd {
	m.sh.log.Debug("notification", "kind", n.Kind, "workflow", n.Workflow)
	if echoes(n) {
		return nil
	}
	// The newest news wins the status line; an error stays until a key.
	m.note, m.flash = "", ""
	m.last = n.Text
	if m.last == "" {
		m.last = strings.TrimSpace(strings.ReplaceAll(n.Kind, ".", " ") + " " + n.Workflow)
	}
	var cmds []tea.Cmd
	if text, ok := toastText(n); ok {
		m.toastN++
		m.toast = &toast{id: m.toastN, text: text}
		cmds = append(cmds, m.after(toastFor, toastDoneMsg{id: m.toastN}))
	}
	switch n.Kind {
	case api.NoteNotifySend, api.NoteNotifyUser:
		// news for the person, not a change: nothing to read again
		m.last = personText(n)
		if n.Kind == api.NoteNotifySend {
			cmds = append(cmds, tea.Raw(bell))
		}
		return tea.Batch(cmds...)
	}
	return tea.Batch(append(cmds, m.refresh())...)
}

// refresh re-reads everything on screen in one Cmd. It never overlaps
// itself: a notification during a re-read asks for one more after it.
func (m *Model) refresh() tea.Cmd {
	if m.refreshing {
		m.dirty = true
		return nil
	}
	m.refreshing = true
	m.reads++
	n := m.reads
	qs := []query{m.wf.query, m.wf.detailQuery(), m.at.query, m.in.reload(), m.rn.reload(), m.rn.traceQuery(), m.ac.query}
	return func() tea.Msg {
		ctx, cancel := m.sh.callCtx()
		defer cancel()
		out := refreshMsg{n: n}
		for _, q := range qs {
			if q != nil {
				out.msgs = append(out.msgs, q(ctx))
			}
		}
		return out
	}
}

// syncKeys switches each binding on or off for the focused pane and its
// selection, so help shows only what works now.
func (m *Model) syncKeys() {
	k := m.sh.keys
	k.reset()
	if m.confirm != nil {
		return
	}
	m.coverToast()
	if m.drawn(m.focus) {
		m.focused().EnableKeys(k)
	}
	if it := m.attentionInView(); it != nil {
		for _, b := range m.anywhereKeys(*it) {
			b.SetEnabled(true)
		}
	}
	w := m.current()
	live := w != nil && w.Status != engine.WorkflowArchived
	k.RunNow.SetEnabled(live)
	k.Pause.SetEnabled(live)
	if live && m.resumes(*w) {
		k.Pause.SetHelp("p", "resume")
	}
}

// relayout sizes every pane for the current window and help height.
func (m *Model) relayout() {
	st := m.sh.st
	m.help.SetWidth(max(m.lay.width-1, 0)) // the bar is indented by one
	m.lay = computeLayout(m.lay.width, m.lay.height, m.helpRows())
	l := m.lay
	if l.wide {
		m.wf.SetSize(st.inner(l.leftW, l.topH))
		m.in.SetSize(st.inner(l.rightW, l.topH))
		m.at.SetSize(st.inner(l.width, l.bottomH))
		m.rn.SetSize(st.inner(l.width, l.bottomH))
		m.ac.SetSize(st.inner(l.width, l.bottomH))
		_, m.wf.dryH = st.inner(l.width, l.bottomH)
		return
	}
	for _, p := range m.panes {
		p.SetSize(st.inner(l.width, l.paneH))
	}
	_, m.wf.dryH = st.inner(l.width, l.paneH)
}

func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "keep"
	return v
}

// render draws the screen; split from View so tests and benchmarks can
// read the text.
func (m *Model) render() string {
	l := m.lay
	if l.width <= 0 || l.height <= 0 {
		return ""
	}
	if l.cramped() {
		return m.cramped()
	}
	parts := []string{m.header()}
	if l.wide {
		top := lipgloss.JoinHorizontal(lipgloss.Top,
			m.box(focusWorkflows, l.leftW, l.topH), m.box(focusInputs, l.rightW, l.topH))
		parts = append(parts, top)
		if l.bottomH >= minBoxHeight {
			parts = append(parts, m.box(m.lower, l.width, l.bottomH))
		}
	} else {
		parts = append(parts, m.tabs(), m.box(m.focus, l.width, l.paneH))
	}
	parts = append(parts, m.statusLine(), m.helpView())
	screen := strings.Join(parts, "\n")
	if h := lipgloss.Height(screen); h > l.height {
		screen = strings.Join(strings.Split(screen, "\n")[:l.height], "\n")
	}
	if m.toast != nil {
		screen = m.overlayToast(screen)
	}
	return screen
}

// cramped is the screen of a window with no room for a pane. In the
// pane's place a line says so and what would do; an empty screen, or one
// of bars with nothing between, looked broken. Around it goes as much of
// the rest as fits, the help bar (q, ?) before the header, the status
// line and the tabs, each where it always is.
func (m *Model) cramped() string {
	l := m.lay
	type line struct {
		text string
		rank int // lower is kept first
	}
	var lines []line
	add := func(rank int, texts ...string) {
		for _, t := range texts {
			lines = append(lines, line{t, rank})
		}
	}
	add(2, m.header())
	add(4, m.tabs())
	add(0, m.sh.st.Warn.Render(fitStyled(" "+m.tooSmall(), l.width)))
	for i := 1; i < l.paneH; i++ {
		add(5, strings.Repeat(" ", l.width))
	}
	add(3, m.statusLine())
	add(1, strings.Split(m.helpView(), "\n")...)
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return lines[a].rank - lines[b].rank })
	keep := make([]bool, len(lines))
	for _, i := range order[:min(l.height, len(order))] {
		keep[i] = true
	}
	var out []string
	for i, ln := range lines {
		if keep[i] {
			out = append(out, ln.text)
		}
	}
	return strings.Join(out, "\n")
}

// tooSmall says why no pane is drawn, in the longest words that fit: what
// is short, and the size that draws one.
func (m *Model) tooSmall() string {
	l := m.lay
	if big := computeLayout(l.width, l.height, 1); !big.cramped() {
		return "the help takes the pane's room: ? closes it"
	}
	what, need, short := "small", fmt.Sprintf("%d rows", minHeight), fmt.Sprintf("%d rows", minHeight)
	switch {
	case l.width < minWidth && l.height < minHeight:
		need = fmt.Sprintf("%d×%d", minWidth, minHeight)
		short = need
	case l.width < minWidth:
		what, need, short = "narrow", fmt.Sprintf("%d columns", minWidth), fmt.Sprintf("%d cols", minWidth)
	}
	for _, s := range []string{
		fmt.Sprintf("window too %s for a pane: it needs %s, this one is %d×%d", what, need, l.width, l.height),
		fmt.Sprintf("window too %s: needs %s", what, need),
		fmt.Sprintf("too %s: %s", what, short),
		"needs " + short,
		"min " + short,
	} {
		if cells(s)+1 <= l.width {
			return s
		}
	}
	return "≥" + short
}

func (m *Model) box(f focus, w, h int) string {
	if m.showsDryRun(f) {
		return m.dryRunBox(w, h)
	}
	p := m.panes[f]
	return m.sh.st.box(" "+p.Title()+" ", p.View(), w, h, f == m.focus)
}

func (m *Model) header() string {
	st := m.sh.st
	left := " keep · 1 workflow"
	if n := len(m.wf.all); n != 1 {
		left = fmt.Sprintf(" keep · %d workflows", n)
	}
	if n := len(m.at.all); n > 0 {
		left += fmt.Sprintf(" · %d need you", n)
	}
	right := m.info.Mode
	if right == "" {
		right = "in-process"
	}
	if m.info.DBPath != "" {
		right += " · " + homePath(m.info.DBPath)
	}
	if m.demoInbox != "" {
		right = "demo: drop a .txt into " + homePath(m.demoInbox)
	}
	right += " "
	w := m.lay.width
	left = fit(left, w)
	right = fit(right, max(w-ansi.StringWidth(left)-1, 0))
	gap := max(w-ansi.StringWidth(left)-ansi.StringWidth(right), 0)
	return st.Header.Render(left) + strings.Repeat(" ", gap) + st.Dim.Render(right)
}

// homePath shortens the home directory to ~, as a person writes a path.
func homePath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(p, home+"/") {
		return "~" + p[len(home):]
	}
	return p
}

// tabShort is a tab's shorter name, for a strip that does not fit whole:
// the count stays, the words around it go (the box says them).
var tabShort = strings.NewReplacer(" → Outputs", "", " need you)", ")")

func (m *Model) tabs() string {
	st := m.sh.st
	strip := func(short bool) string {
		var b strings.Builder
		for f, p := range m.panes {
			title := p.Title()
			// The tab names the pane; its context (workflow, trace) is in the box.
			if i := strings.Index(title, " · "); i > 0 {
				title = title[:i]
			}
			if short {
				title = tabShort.Replace(title)
			}
			if focus(f) == m.focus {
				b.WriteString(st.TabActive.Render(title))
			} else {
				b.WriteString(st.TabInactive.Render(title))
			}
		}
		return b.String()
	}
	s := strip(false)
	if ansi.StringWidth(s) > m.lay.width {
		s = strip(true)
	}
	return fitStyled(s, m.lay.width)
}

func (m *Model) statusLine() string {
	st := m.sh.st
	w := m.lay.width
	switch {
	case m.confirm != nil:
		return st.Ask.Render(pad(" "+m.confirm.consequence, w))
	case m.errText != "":
		return st.Error.Render(pad(" "+m.errText, w))
	case m.flash != "":
		return st.Status.Render(pad(" "+m.flash, w))
	case m.last != "":
		return st.Status.Render(pad(" last: "+oneLine(m.last), w))
	case m.note != "":
		return st.Status.Render(pad(" "+m.note, w))
	}
	return strings.Repeat(" ", w)
}

func (m *Model) helpView() string {
	st := m.sh.st
	var s string
	switch {
	case m.confirm != nil:
		q := " " + m.confirm.question + " sure? "
		s = st.Ask.Render(fit(q, m.lay.width)) + m.help.ShortHelpView(confirmKeys{m.sh.keys}.ShortHelp())
	case m.focused().Editing():
		s = " " + m.help.ShortHelpView(filterKeys{}.ShortHelp())
	case m.help.ShowAll:
		full := m.help.FullHelpView(m.fullHelp())
		full += strings.Repeat("\n", max(m.fullHelpRows()-lipgloss.Height(full), 0))
		s = " " + full + "\n" + m.notNow()
	default:
		s = " " + m.shortHelp()
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i > 0 {
			l = " " + l
		}
		lines[i] = fitStyled(l, m.lay.width)
	}
	return strings.Join(lines, "\n")
}

// shortHelp is the help bar at the window's width: what does not fit is
// left out from the end, and "? help" and "q quit" always stay, so the
// way to the rest is never cut off.
func (m *Model) shortHelp() string {
	k := m.sh.keys
	var keys []key.Binding
	for _, b := range k.ShortHelp() {
		if b.Enabled() && b.Help() != k.Help.Help() && b.Help() != k.Quit.Help() {
			keys = append(keys, b)
		}
	}
	w := max(m.lay.width-1, 0)
	// measured whole: the help's own cut would hide ? and q
	h := m.help
	h.SetWidth(0)
	for {
		s := h.ShortHelpView(append(slices.Clone(keys), k.Help, k.Quit))
		if ansi.StringWidth(s) <= w {
			return s
		}
		if len(keys) == 0 {
			// too narrow for both: the way out outlasts the way to the rest
			return h.ShortHelpView([]key.Binding{k.Quit})
		}
		keys = keys[:len(keys)-1]
	}
}

// fullHelp is what ? lists: every key of the focused pane, the ones its
// selection does not take now in parentheses (so a person learns the key
// and sees why it does nothing here), then the keys that work everywhere.
// Another pane's keys are left out.
func (m *Model) fullHelp() [][]key.Binding {
	k := m.sh.keys
	mine := map[string]bool{}
	for _, b := range k.paneKeys(m.focus) {
		mine[b.Help().Key] = true
	}
	var cols [][]key.Binding
	for _, col := range k.FullHelp() {
		var c []key.Binding
		for _, b := range col {
			switch h := b.Help(); {
			case b.Enabled():
				c = append(c, b)
			case mine[h.Key]:
				b.SetEnabled(true) // a copy: the key itself stays off
				b.SetHelp(h.Key, "("+h.Desc+")")
				c = append(c, b)
			}
		}
		if len(c) > 0 {
			cols = append(cols, c)
		}
	}
	return cols
}

// helpRows is the height helpView draws: the full help while ? has it
// open, and its line of the pane's keys that do not apply now; one line
// otherwise, and while a question or a filter has the help bar, as they
// show their own keys alone.
func (m *Model) helpRows() int {
	if m.help.ShowAll && m.confirm == nil && !m.focused().Editing() {
		return m.fullHelpRows() + notNowLines
	}
	return 1
}

// fullHelpRows is the height ? takes whichever pane is focused (the
// longest column of all), so moving between panes under it keeps the
// layout.
func (m *Model) fullHelpRows() int {
	n := 0
	for _, col := range m.sh.keys.FullHelp() {
		n = max(n, len(col))
	}
	return n
}

// notNow is the line under ? saying what the parentheses mean.
func (m *Model) notNow() string {
	return m.sh.st.Dim.Render("(in parentheses: a key of this pane its selection does not take now)")
}

// notNowLines is the height of notNow under the full help.
const notNowLines = 1

// fitStyled cuts an already styled line to w cells and pads it.
func fitStyled(s string, w int) string {
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w-1, ellipsis)
	}
	return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
}

// coverToast tells the pane under the toast (the lowest box) how many of
// its last rows the toast hides, so a card beneath it is not answered.
func (m *Model) coverToast() {
	m.wf.covered, m.in.covered, m.at.covered, m.rn.covered, m.ac.covered = 0, 0, 0, 0, 0
	if m.toast == nil {
		return
	}
	lowest := m.focus
	if m.lay.wide {
		lowest = m.lower
	}
	rows := len(strings.Split(m.toastBox(), "\n"))
	switch lowest {
	case focusWorkflows:
		m.wf.covered = rows
	case focusInputs:
		m.in.covered = rows
	case focusAttention:
		m.at.covered = rows
	case focusRuns:
		m.rn.covered = rows
	case focusAccounts:
		m.ac.covered = rows
	}
}

// toastBox is the toast as drawn.
func (m *Model) toastBox() string {
	st := m.sh.st
	frame := st.Toast.GetHorizontalFrameSize()
	return st.Toast.Render(fit(m.toast.text, min(toastMaxWidth, m.lay.width-2)-frame))
}

// overlayToast lays the toast over the screen's bottom-right corner,
// inside the lowest pane's frame, keeping what is left and right of it.
func (m *Model) overlayToast(screen string) string {
	st := m.sh.st
	l := m.lay
	box := strings.Split(m.toastBox(), "\n")
	bw := ansi.StringWidth(box[0])
	fw, fh := st.Pane.GetBorderRightSize()+st.Pane.GetPaddingRight(), st.Pane.GetBorderBottomSize()
	x, y := l.width-bw-fw, l.height-l.helpH-l.statusH-fh-len(box)
	lines := strings.Split(screen, "\n")
	if x < 0 || y < 0 || y+len(box) > len(lines) {
		return screen
	}
	for i, b := range box {
		base := lines[y+i]
		lines[y+i] = ansi.Cut(base, 0, x) + b + ansi.Cut(base, x+bw, l.width)
	}
	return strings.Join(lines, "\n")
}

// startOnPrompt: in tabs, where Attention is not on screen beside the
// other panes, the first screen opens on it while an approval or a
// reconciliation waits, so its keys work where the person starts. Once
// they press a key, focus is theirs.
func (m *Model) startOnPrompt() {
	if m.touched || m.lay.width == 0 || m.lay.wide || m.focus == focusAttention {
		return
	}
	for _, it := range m.at.all {
		if it.Kind == api.AttentionApproval || it.Kind == api.AttentionReconciliation {
			m.setFocus(focusAttention)
			return
		}
	}
}
