package engine

import (
	"sync"

	"keep/engine/api"
)

// subscribers fans notifications out to front ends. Sends never block: the
// engine must not wait on a slow TUI.
type subscribers struct {
	mu   sync.Mutex
	next int
	chs  map[int]chan api.Notification
}

// subscribe adds a front end; cancel removes it and closes its channel.
func (s *subscribers) subscribe() (<-chan api.Notification, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chs == nil {
		s.chs = map[int]chan api.Notification{}
	}
	id := s.next
	s.next++
	ch := make(chan api.Notification, 64)
	s.chs[id] = ch
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c, ok := s.chs[id]; ok {
			delete(s.chs, id)
			close(c)
		}
	}
}

// send hands n to every front end that has room for it.
func (s *subscribers) send(n api.Notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.chs {
		select {
		case ch <- n:
		default:
		}
	}
}
