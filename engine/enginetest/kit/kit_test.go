package kit

import (
	"sync"
	"testing"
	"time"
)

// fakeTB records a Fatalf instead of stopping the goroutine, so the test can
// see that a wait which never ends is reported.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Errorf(string, ...any) { f.failed = true }

func TestWaitFailsInsteadOfHanging(t *testing.T) {
	f := &fakeTB{}
	Wait(f, make(chan int), time.Millisecond)
	if !f.failed {
		t.Fatal("a wait on a channel nobody sends to did not fail")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	f = &fakeTB{}
	WaitGroup(f, &wg, time.Millisecond)
	if !f.failed {
		t.Fatal("a wait on a group never done did not fail")
	}
	wg.Done()
}

func TestWaitReceives(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if v := Wait(t, ch, Timeout); v != 7 {
		t.Fatalf("got %d", v)
	}
	close(ch)
	if _, ok := WaitRecv(t, ch, Timeout); ok {
		t.Fatal("a closed channel read as open")
	}
}

func TestClock(t *testing.T) {
	c := NewClock(time.Time{})
	if !c.Now().Equal(Start) {
		t.Fatalf("zero start = %s, want %s", c.Now(), Start)
	}
	c.Advance(time.Hour)
	if !c.Now().Equal(Start.Add(time.Hour)) {
		t.Fatalf("after an hour: %s", c.Now())
	}
}

func TestUntil(t *testing.T) {
	f := &fakeTB{}
	Until(f, time.Millisecond, "never", func() bool { return false })
	if !f.failed {
		t.Fatal("a condition that never holds did not fail")
	}
	n := 0
	Until(t, Timeout, "the third look", func() bool { n++; return n == 3 })
}
