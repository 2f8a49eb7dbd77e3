package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
)

// accountsPane (5) lists the accounts connectors sign in with and their
// state: ok, expires soon, needs sign-in (with the command that fixes it).
// It reads them through the engine; an engine that cannot list them (a
// daemon's socket) says where to look instead.
type accountsPane struct {
	localList[engine.AccountView]
	unavailable bool
	nameW       int
}

type accountsMsg struct {
	items       []engine.AccountView
	unavailable bool
	err         error
}

const accountRowLines = 2

func newAccountsPane(sh *shared) *accountsPane {
	return &accountsPane{localList: localList[engine.AccountView]{base: base{sh: sh},
		match: func(a engine.AccountView, f string) bool {
			return strings.Contains(strings.ToLower(a.Name+" "+a.State), f)
		},
		key:       func(a engine.AccountView) string { return a.Name },
		rowHeight: func(int) int { return accountRowLines }}}
}

func (p *accountsPane) Title() string {
	n := 0
	for _, a := range p.all {
		if a.State != engine.AccountOK {
			n++
		}
	}
	if n > 0 {
		return fmt.Sprintf("5 Accounts (%d need you)", n)
	}
	return "5 Accounts"
}

func (p *accountsPane) SetSize(w, h int) {
	p.base.SetSize(w, h)
	p.nameW = max(p.width-2-1-len(engine.AccountNeedsSignIn), 1)
}

func (p *accountsPane) query(ctx context.Context) tea.Msg {
	l, ok := p.sh.api.(engine.AccountLister)
	if !ok {
		return accountsMsg{unavailable: true}
	}
	items, err := l.Accounts(ctx)
	if errors.Is(err, errNoAccounts) {
		return accountsMsg{unavailable: true}
	}
	return accountsMsg{items: items, err: err}
}

func (p *accountsPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case accountsMsg:
		p.unavailable = msg.unavailable
		p.got(msg.items, msg.err)
	case tea.PasteMsg:
		p.filterKey(msg)
	case tea.KeyPressMsg:
		if p.filterKey(msg) {
			return nil
		}
		switch {
		case keyIs(msg, p.sh.keys.Back):
			p.filter.Clear()
			p.apply()
		case p.moveKey(msg, p.listHeight()/accountRowLines):
		}
	}
	return nil
}

func (p *accountsPane) EnableKeys(k *keyMap) {
	k.Filter.SetEnabled(true)
	k.Back.SetEnabled(p.filter.Active())
}

func (p *accountsPane) View() string {
	if len(p.shown) == 0 {
		switch {
		case p.unavailable:
			return p.message("The running keep lists its accounts with: keep auth list")
		case !p.loaded && p.err == nil:
			return p.message("Loading…")
		case p.filter.Value() != "":
			return p.message("No account matches.")
		}
		return p.message("No accounts. Add an [accounts.NAME] section to the config, then: keep auth login NAME")
	}
	st := p.sh.st
	return p.render(len(p.shown), func(i int, sel bool) []string {
		a := p.shown[i]
		look, glyph := st.Good, "●"
		if a.State != engine.AccountOK {
			look, glyph = st.Warn, "▲"
		}
		what := a.Kind
		if a.Provider != "" {
			what += " · " + a.Provider
		}
		if a.Username != "" {
			what += " · " + a.Username
		}
		if a.Detail != "" {
			what += " · " + a.Detail
		}
		return []string{
			p.row(sel, cell{glyph + " ", look}, cell{pad(a.Name, p.nameW) + " ", st.Bold}, cell{a.State, look}),
			p.row(false, cell{"  " + fit(what, p.width-2), st.Dim}),
		}
	}, "")
}
