package tui

import tea "charm.land/bubbletea/v2"

// confirm is an open "sure? y/n" question. While it is open no other key
// works, so an answer cannot slip past it.
type confirm struct {
	question    string
	consequence string
	run         func() tea.Cmd
}

func (m *Model) confirmKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.sh.keys
	switch {
	case keyIs(msg, k.Yes):
		run := m.confirm.run
		m.confirm = nil
		return run()
	case keyIs(msg, k.No), msg.String() == "ctrl+c":
		m.confirm = nil
		m.flash = "cancelled"
	}
	return nil
}
