package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"keep/engine/api"
)

// Run shows the TUI on the terminal until the person quits or ctx ends.
// Engine notifications are bridged into the program with Send: the engine
// never calls the UI, and the panes re-read what they show in a Cmd.
func Run(ctx context.Context, keepAPI api.API, opts Options) error {
	m := New(keepAPI, opts)
	m.sh.ctx = ctx
	// Bubble Tea's own signal handler is off: it hands its quit to the
	// program unconditionally, and when the caller's ctx ends on the same
	// signal (keep's main does so) the program may have stopped reading
	// first; it then waits for that handler for ever, the terminal never
	// given back, and every later SIGTERM caught by it. The signals are
	// taken here instead, and quit the program as q does.
	//
	// The renderer wakes at every frame to compare the view, changed or
	// not: at Bubble Tea's default 60 an idle screen cost ~0.8% of a core.
	// A frame every 33 ms is still quicker than a key is seen to echo.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler(), tea.WithFPS(frameRate)}
	if m.sh.st.noColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)

	stop := make(chan struct{})
	bridged := make(chan struct{})
	go func() {
		defer close(bridged)
		listen(m.sh.api, p.Send, stop)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs) // a second one ends keep at once
			p.Quit()
		case <-stop:
		}
	}()

	release := holdStderr(m.sh.log)
	_, err := p.Run()
	release()
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

// frameRate is the renderer's frames a second (see Run).
const frameRate = 30

// aliveAfter is how long a subscription made again must stay open before
// the engine counts as back: one to an engine that is not there closes at
// once.
const aliveAfter = 100 * time.Millisecond

// listen bridges the engine's news into the program until stop. The news
// ends when the engine does (a daemon restarting under this screen): it
// listens again once the engine answers, and then has everything read
// afresh, so a card answered meanwhile (keep approve while the daemon was
// down) does not stay on screen as if it still waited.
func listen(a api.API, send func(tea.Msg), stop <-chan struct{}) {
	again := false
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		// as the screen: what is meant for the person (a bell, a toast)
		// comes too; escaped, as everything the TUI shows
		notes, cancel := a.SubscribeScreen()
		start := time.Now()
		stopped, open := false, true
		if again {
			select {
			case n, ok := <-notes:
				open = ok
				if ok {
					send(notifyMsg(n))
				}
			case <-time.After(aliveAfter):
			case <-stop:
				stopped = true
			}
			if open && !stopped {
				send(notifyMsg(api.Notification{Kind: api.NoteChanged, Text: "the engine is back; everything is read again"}))
			}
		}
		if open && !stopped {
			stopped = bridge(notes, send, stop)
		}
		cancel()
		if stopped {
			return
		}
		if time.Since(start) > time.Second {
			delay = 100 * time.Millisecond // it had been up: try again soon
			send(notifyMsg(api.Notification{Kind: api.NoteChanged, Text: "the engine went away; listening again when it is back"}))
		}
		again = true
		select {
		case <-stop:
			return
		case <-time.After(delay):
		}
	}
}

// bridge forwards notifications into the program until notes closes or
// stop does. Send blocks only on the program, never on the engine (the
// engine's sends to notes do not block).
// It says whether stop ended it.
func bridge(notes <-chan api.Notification, send func(tea.Msg), stop <-chan struct{}) (stopped bool) {
	for {
		select {
		case n, ok := <-notes:
			if !ok {
				return false
			}
			send(notifyMsg(n))
		case <-stop:
			return true
		}
	}
}
