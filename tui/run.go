package tui

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"keep/engine"
)

// Run shows the TUI on the terminal until the person quits or ctx ends.
// Engine notifications are bridged into the program with Send: the engine
// never calls the UI, and the panes re-read what they show in a Cmd.
func Run(ctx context.Context, api engine.API, opts Options) error {
	m := New(api, opts)
	m.sh.ctx = ctx
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if m.sh.st.noColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)

	notes, cancel := m.sh.api.Subscribe()
	defer cancel()
	stop := make(chan struct{})
	bridged := make(chan struct{})
	go func() {
		defer close(bridged)
		bridge(notes, p.Send, stop)
	}()

	_, err := p.Run()
	close(stop)
	<-bridged
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		// The caller ended it: a clean stop, not a failure.
		return nil
	}
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// bridge forwards notifications into the program until notes closes or
// stop does. Send blocks only on the program, never on the engine (the
// engine's sends to notes do not block).
func bridge(notes <-chan engine.Notification, send func(tea.Msg), stop <-chan struct{}) {
	for {
		select {
		case n, ok := <-notes:
			if !ok {
				return
			}
			send(notifyMsg(n))
		case <-stop:
			return
		}
	}
}
