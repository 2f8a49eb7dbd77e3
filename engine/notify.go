package engine

import (
	"sync"
	"time"
)

// subscribers fans notifications out to front ends. Sends never block: the
// engine must not wait on a slow TUI.
type subscribers struct {
	mu   sync.Mutex
	next int
	chs  map[int]chan Notification
}

// Subscribe implements API.
func (e *Engine) Subscribe() (<-chan Notification, func()) {
	s := &e.subs
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

func (e *Engine) notify(kind, workflow, text string) {
	if e.events != nil {
		e.events.Wake() // a journaled event may have been committed with this change
	}
	n := Notification{Kind: kind, Workflow: workflow, Text: text, At: time.Now().UTC()}
	s := &e.subs
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.chs {
		select {
		case ch <- n:
		default:
		}
	}
}
