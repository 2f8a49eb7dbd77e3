package sandbox

import (
	"testing"
	"time"
)

// TestIdleWorkersRetire: a worker left unused in the pool for its idle
// time is let go and exits; one given back later stays until its own time
// is up; nothing stays armed once the pool is empty.
func TestIdleWorkersRetire(t *testing.T) {
	t.Parallel()
	p := &procPool{idle: map[uint64][]*worker{}, idleFor: time.Second}
	limit := DefaultLimits().MaxMemory
	first, err := startWorker(limit)
	if err != nil {
		t.Fatal(err)
	}
	second, err := startWorker(limit)
	if err != nil {
		t.Fatal(err)
	}
	p.put(first)
	time.Sleep(500 * time.Millisecond)
	p.put(second)
	exits := func(w *worker, name string, within time.Duration) {
		t.Helper()
		select {
		case <-w.exited:
		case <-time.After(within):
			t.Fatalf("the %s worker still runs %s after it was due to be let go", name, within)
		}
	}
	exits(first, "first", 3*time.Second)
	p.mu.Lock()
	if list := p.idle[limit]; len(list) != 1 || list[0] != second {
		t.Errorf("%d workers idle after the first was let go, want the second alone", len(list))
	}
	p.mu.Unlock()
	exits(second, "second", 3*time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle[limit]); n != 0 || p.retire != nil {
		t.Errorf("after both were let go: %d idle, timer armed %v; want none", n, p.retire != nil)
	}
}
