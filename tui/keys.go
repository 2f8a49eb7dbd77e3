package tui

import (
	"charm.land/bubbles/v2/key"
)

// keyMap is every key the TUI answers to, as data: the help bar is built
// from it, and a binding that does not apply to the focused pane and its
// selection is disabled, so it neither fires nor shows in help.
type keyMap struct {
	// Answers and actions.
	Approve       key.Binding
	ApproveAlways key.Binding
	Reject        key.Binding
	TryAgain      key.Binding
	Happened      key.Binding
	NotHappened   key.Binding
	Skip          key.Binding
	SkipInput     key.Binding
	Retry         key.Binding
	RunNow        key.Binding
	Pause         key.Binding
	DryRun        key.Binding

	// Moving about.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	// Within a card taller than its pane.
	CardDown key.Binding
	CardUp   key.Binding
	Enter    key.Binding
	Back     key.Binding
	Filter   key.Binding
	NextPane key.Binding
	PrevPane key.Binding
	Pane1    key.Binding
	Pane2    key.Binding
	Pane3    key.Binding
	Pane4    key.Binding
	Pane5    key.Binding
	Help     key.Binding
	Quit     key.Binding

	// The confirmation prompt's own keys.
	Yes key.Binding
	No  key.Binding

	// words are each action's help as first made: a pane renames esc or
	// enter for what they do there, and the next pane must not inherit it.
	words map[*key.Binding]key.Help
}

func newKeyMap() *keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	one := func(k, desc string) key.Binding { return b([]string{k}, k, desc) }
	km := &keyMap{
		Approve:       one("a", "approve"),
		ApproveAlways: one("A", "always"),
		Reject:        one("x", "reject"),
		// a reconciliation prompt's answers: one key, one meaning each, none
		// a confirmation's y or n ("n" there is "no", never "didn't happen")
		TryAgain:    one("c", "check again"),
		Happened:    one("h", "it happened"),
		NotHappened: one("f", "it didn't happen"),
		Skip:        one("s", "skip"),
		SkipInput:   one("S", "skip input"),
		Retry:       one("r", "retry"),
		RunNow:      one("R", "run now"),
		Pause:       one("p", "pause"),
		DryRun:      one("d", "dry run"),

		Up:       b([]string{"k", "up"}, "↑/k", "up"),
		Down:     b([]string{"j", "down"}, "↓/j", "down"),
		PageUp:   b([]string{"pgup", "ctrl+b"}, "pgup", "page up"),
		PageDown: b([]string{"pgdown", "ctrl+f", "space"}, "pgdn", "page down"),
		Top:      b([]string{"g", "home"}, "g", "top"),
		Bottom:   b([]string{"G", "end"}, "G", "bottom"),
		CardDown: b([]string{"J", "ctrl+d"}, "J", "card ↓"),
		CardUp:   b([]string{"K", "ctrl+u"}, "K", "card ↑"),
		Enter:    one("enter", "details"),
		Back:     one("esc", "back"),
		Filter:   one("/", "filter"),
		NextPane: one("tab", "pane"),
		PrevPane: one("shift+tab", "prev pane"),
		Pane1:    one("1", "workflows"),
		Pane2:    one("2", "inputs"),
		Pane3:    one("3", "attention"),
		Pane4:    one("4", "run log"),
		Pane5:    one("5", "accounts"),
		Help:     one("?", "help"),
		Quit:     b([]string{"q", "ctrl+c"}, "q", "quit"),

		Yes: b([]string{"y", "Y"}, "y", "yes"),
		No:  b([]string{"n", "N", "esc"}, "n", "no"),
	}
	km.words = map[*key.Binding]key.Help{}
	for _, b := range append(km.actions(), &km.Pause) {
		km.words[b] = b.Help()
	}
	return km
}

// reset turns every action off and gives it back its own help word, so
// that what a pane switches on and names is all that shows.
func (k *keyMap) reset() {
	for _, b := range k.actions() {
		b.SetEnabled(false)
	}
	for b, h := range k.words {
		b.SetHelp(h.Key, h.Desc)
	}
}

// actions are the bindings a pane switches on for its selection.
func (k *keyMap) actions() []*key.Binding {
	return []*key.Binding{&k.Approve, &k.ApproveAlways, &k.Reject, &k.TryAgain, &k.Happened,
		&k.NotHappened, &k.Skip, &k.SkipInput, &k.Retry, &k.CardDown, &k.CardUp, &k.Enter, &k.Back, &k.Filter, &k.DryRun}
}

// paneKeys are every key a pane has, whether or not its selection takes
// it now: ? lists them all, the ones that do not apply now as such
// (Model.fullHelp). R and p act on the current workflow from any pane.
func (k *keyMap) paneKeys(f focus) []*key.Binding {
	every := []*key.Binding{&k.RunNow, &k.Pause, &k.Enter, &k.Back, &k.Filter}
	switch f {
	case focusWorkflows:
		return append(every, &k.DryRun)
	case focusInputs:
		return append(every, &k.SkipInput, &k.CardDown, &k.CardUp)
	case focusAttention:
		return append(every, &k.Approve, &k.ApproveAlways, &k.Reject, &k.TryAgain, &k.Happened, &k.NotHappened,
			&k.Skip, &k.SkipInput, &k.Retry, &k.CardDown, &k.CardUp)
	case focusRuns:
		return append(every, &k.Retry)
	case focusAccounts:
		return []*key.Binding{&k.RunNow, &k.Pause, &k.Back, &k.Filter}
	}
	return nil
}

// ShortHelp is the one-line help bar, in the sketch's order: answers
// first, then what works everywhere.
func (k *keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Approve, k.ApproveAlways, k.Reject, k.TryAgain, k.Happened, k.NotHappened,
		k.Skip, k.SkipInput, k.Retry, k.CardDown, k.CardUp, k.Enter, k.Back, k.RunNow, k.Pause, k.Filter, k.NextPane, k.Help, k.Quit}
}

// FullHelp is what `?` opens (Model.fullHelp picks from it), by column:
// four columns, so that with every answer shown it fits 80 columns.
func (k *keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Approve, k.ApproveAlways, k.Reject, k.Retry, k.TryAgain, k.Happened, k.NotHappened, k.Skip, k.SkipInput},
		{k.RunNow, k.Pause, k.DryRun, k.Filter, k.Enter, k.Back},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.CardDown, k.CardUp, k.Top, k.Bottom, k.Help},
		{k.NextPane, k.PrevPane, k.Pane1, k.Pane2, k.Pane3, k.Pane4, k.Pane5, k.Quit},
	}
}

// confirmKeys is the help shown while a "sure? y/n" question is open:
// nothing else works then, so nothing else is offered.
type confirmKeys struct{ k *keyMap }

func (c confirmKeys) ShortHelp() []key.Binding  { return []key.Binding{c.k.Yes, c.k.No} }
func (c confirmKeys) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }

// filterKeys is the help shown while typing a filter.
type filterKeys struct{}

var (
	filterApply = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter"))
	filterClear = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear"))
)

func (filterKeys) ShortHelp() []key.Binding  { return []key.Binding{filterApply, filterClear} }
func (filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{filterKeys{}.ShortHelp()} }
