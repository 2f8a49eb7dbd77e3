package engine

import (
	"sync"
	"time"

	"keep/engine/api"
)

// Subscribers fans notifications out to front ends. Sends never block: the
// engine must not wait on a slow TUI. The engine makes its own; a host
// makes one first (Opts.Subscribers) when parts built before the engine,
// the notify connector and the bus's notify_user, must reach the screens.
type Subscribers struct {
	mu   sync.Mutex
	next int
	chs  map[int]subscriber
}

type subscriber struct {
	ch chan api.Notification
	// screen: a person watches it (the TUI), so what is meant for the
	// person goes to it, and counts as delivered once it took it.
	screen bool
}

// NewSubscribers returns a fan-out with no subscribers yet.
func NewSubscribers() *Subscribers { return &Subscribers{} }

// subscribe adds a front end; cancel removes it and closes its channel.
func (s *Subscribers) subscribe(screen bool) (<-chan api.Notification, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chs == nil {
		s.chs = map[int]subscriber{}
	}
	id := s.next
	s.next++
	ch := make(chan api.Notification, 64)
	s.chs[id] = subscriber{ch: ch, screen: screen}
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c, ok := s.chs[id]; ok {
			delete(s.chs, id)
			close(c.ch)
		}
	}
}

// send hands n to every front end that has room for it.
func (s *Subscribers) send(n api.Notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.chs {
		select {
		case c.ch <- n:
		default:
		}
	}
}

// tell hands n, meant for the person, to every screen that has room for
// it, and says whether one took it: a notification no screen took was
// shown to nobody, and must not be called delivered.
func (s *Subscribers) tell(n api.Notification) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	took := false
	for _, c := range s.chs {
		if !c.screen {
			continue
		}
		select {
		case c.ch <- n:
			took = true
		default:
		}
	}
	return took
}

// NotifySend is notify.send's way to the screens (ConnectorOpts.Notify):
// the TUI rings the terminal bell and shows a toast. It says whether a
// screen took it.
func (s *Subscribers) NotifySend(title, body string) bool {
	return s.tell(api.Notification{Kind: api.NoteNotifySend, Title: title, Text: body, At: time.Now().UTC()})
}

// NotifyUser is the bus's notify_user on the screens: a toast in the TUI.
// It says whether a screen took it.
func (s *Subscribers) NotifyUser(title, text string) bool {
	return s.tell(api.Notification{Kind: api.NoteNotifyUser, Title: title, Text: text, At: time.Now().UTC()})
}
