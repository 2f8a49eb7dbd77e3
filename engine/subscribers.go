package engine

import "sync"

// subscribers fans notifications out to front ends. Sends never block: the
// engine must not wait on a slow TUI.
type subscribers struct {
	mu   sync.Mutex
	next int
	chs  map[int]chan Notification
}

// subscribe adds a front end; cancel removes it and closes its channel.
func (s *subscribers) subscribe() (<-chan Notification, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chs == nil {
		s.chs = map[int]chan Notification{}
	}
	id := s.next
	s.next++
	ch := make(chan Notification, 64)
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
func (s *subscribers) send(n Notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.chs {
		select {
		case ch <- n:
		default:
		}
	}
}
