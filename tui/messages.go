package tui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
	"keep/engine/api"
)

// shared is what every pane needs from the program: the API, the clock,
// the looks and the keys. One value, handed to each pane, so a pane never
// reaches into the root model.
type shared struct {
	ctx  context.Context
	api  api.API
	now  func() time.Time
	log  *slog.Logger
	st   *styles
	keys *keyMap

	// onWay counts actions made (act) whose outcome (doneMsg) has not come
	// back: q waits for them, else keep closes the engine under an answer
	// the person believes given. Only Update touches it.
	onWay int
	// sent holds the cards (cardKey) whose answer is on its way, or was
	// taken and the list not yet read again since: the card is still on
	// screen with its keys on, and a repeat must not answer it twice. The
	// value is -1 while on its way, then the count of re-reads begun
	// (Model.reads) when it was taken: a re-read begun after clears it.
	sent map[string]int
	// asked is a question a key has just asked (ask), for the root to open.
	asked *confirm
}

// cardKey names a card as asked: a call asked about again (a new attempt)
// is a new question, which may be answered anew.
func cardKey(it api.AttentionItem) string { return fmt.Sprintf("%s@%d", itemKey(it), it.Attempt) }

// callTimeout bounds one API call so a wedged daemon shows as an error in
// the status line instead of a frozen pane.
const callTimeout = 30 * time.Second

func (sh *shared) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(sh.ctx, callTimeout)
}

// query is one read the TUI makes; refresh runs several in one Cmd.
type query func(ctx context.Context) tea.Msg

func (sh *shared) cmd(q query) tea.Cmd {
	if q == nil {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := sh.callCtx()
		defer cancel()
		return q(ctx)
	}
}

// Messages. Each carries what it answers, so an answer that arrives after
// the user moved on (another workflow, another filter) can be told apart.
type (
	// notifyMsg is an engine notification, sent in by Run.
	notifyMsg api.Notification

	workflowsMsg struct {
		items []api.WorkflowView
		err   error
	}
	// workflowDetailMsg is the selected workflow's detail, read for the
	// answers given about it (workflowsPane.detail).
	workflowDetailMsg struct {
		name   string
		detail *api.WorkflowDetail
		err    error
	}
	attentionMsg struct {
		items []api.AttentionItem
		err   error
	}
	traceMsg struct {
		runID string
		lines []api.TraceLine
		err   error
	}
	// refreshMsg is the answer to one re-read of everything on screen.
	// n is which re-read it is (Model.reads).
	refreshMsg struct {
		msgs []tea.Msg
		n    int
	}

	// doneMsg is the outcome of an action (approve, pause, …).
	doneMsg struct {
		what string
		err  error
		// card is the card (cardKey) this answered, if any
		card string
	}
	// focusMsg asks the root to focus another pane.
	focusMsg struct{ to focus }
	// openTraceMsg asks the Run log to open a run's trace; workflow is
	// the run's, which need not be the one selected in pane 1.
	openTraceMsg struct{ runID, workflow string }

	toastDoneMsg struct{ id int }
	// settledMsg: a card held under the cursor has been there long
	// enough; Update's syncKeys turns its answers on.
	settledMsg struct{}
	tickMsg    struct{}
)

// act runs an action against the engine and reports how it went; success
// text is what the status line says.
func (sh *shared) act(what string, f func(ctx context.Context) error) tea.Cmd {
	return sh.actOn("", what, f)
}

// actOn is act answering the card named card (cardKey): until it comes
// back and the list is read again, the card takes no other answer.
func (sh *shared) actOn(card, what string, f func(ctx context.Context) error) tea.Cmd {
	sh.onWay++
	if card != "" {
		if sh.sent == nil {
			sh.sent = map[string]int{}
		}
		sh.sent[card] = -1
	}
	return func() tea.Msg {
		ctx, cancel := sh.callCtx()
		defer cancel()
		err := f(ctx)
		if err != nil {
			sh.log.Warn("action failed", "action", what, "err", err)
		} else {
			sh.log.Info("action", "action", what)
		}
		return doneMsg{what: what, err: err, card: card}
	}
}

// answer is act for an answer given on a card: a card no longer waiting
// (answered elsewhere, or moved on while the engine restarted under this
// screen) says so, rather than that the answer failed.
func (sh *shared) answer(card, title, what string, f func(ctx context.Context) error) tea.Cmd {
	return sh.actOn(card, what, func(ctx context.Context) error {
		err := f(ctx)
		if errors.Is(err, engine.ErrRefused) || errors.Is(err, engine.ErrNotFound) {
			return goneErr{title: title, err: err}
		}
		return err
	})
}

// goneErr: the card answered is no longer waiting.
type goneErr struct {
	title string
	err   error
}

func (g goneErr) Error() string {
	return fmt.Sprintf("%s is no longer waiting (%v); the list is read again", g.title, g.err)
}

func (g goneErr) Unwrap() error { return g.err }

// ask opens a "sure? y/n" question; yes makes the action run builds
// (built only then, so a question cancelled is no action on its way). The
// root opens it in the Update of the key that asked (Model.Update), never
// by a message of its own: a repeat of the key, read before such a message
// came, asked again, and the question answered once opened a second time.
func (sh *shared) ask(question, consequence string, run func() tea.Cmd) tea.Cmd {
	sh.asked = &confirm{question: question, consequence: consequence, run: run}
	return nil
}
