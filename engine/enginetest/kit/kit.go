// Package kit holds the test pieces that do not need the engine: the fake
// clock and bounded waits. It imports nothing of keep, so package engine's
// own (internal) tests can use it; package enginetest, which imports the
// engine, builds on it for every other package's tests.
package kit

import (
	"sync"
	"testing"
	"time"
)

// Start is where every test clock starts unless told otherwise.
var Start = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// Clock is the one fake at the machine's edge: the engine's injected clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock at start (Start when start is zero).
func NewClock(start time.Time) *Clock {
	if start.IsZero() {
		start = Start
	}
	return &Clock{t: start}
}

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Timeout is how long a test waits on something that should already be
// under way: long enough for a loaded 2-core machine, short enough that a
// regression fails instead of hanging until go test's own deadline.
const Timeout = 10 * time.Second

// Wait receives from ch, failing the test if nothing arrives within d.
func Wait[T any](tb testing.TB, ch <-chan T, d time.Duration) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		tb.Fatalf("nothing received within %s", d)
		var zero T
		return zero
	}
}

// WaitRecv is Wait that also reports whether ch was open (v, ok := <-ch).
func WaitRecv[T any](tb testing.TB, ch <-chan T, d time.Duration) (T, bool) {
	tb.Helper()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-time.After(d):
		tb.Fatalf("nothing received within %s", d)
		var zero T
		return zero, false
	}
}

// WaitGroup waits for wg, failing the test if it is not done within d.
func WaitGroup(tb testing.TB, wg *sync.WaitGroup, d time.Duration) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	Wait(tb, done, d)
}

// Until checks cond every few milliseconds, failing the test with what if
// it does not hold within d: for state another goroutine or process moves
// with no channel to wait on.
func Until(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %s: %s", d, what)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// DrainUntilQuiet advances clock to each next due time and drains, until
// nothing is due within horizon. drain and nextDue are the engine's (kit
// cannot name it: package engine's own tests use this too).
func DrainUntilQuiet(tb testing.TB, clock *Clock, horizon time.Duration, drain func(), nextDue func() (*time.Time, error)) {
	tb.Helper()
	end := clock.Now().Add(horizon)
	for range 200 {
		drain()
		next, err := nextDue()
		if err != nil {
			tb.Fatal(err)
		}
		if next == nil || next.After(end) {
			return
		}
		if d := next.Sub(clock.Now()); d > 0 {
			clock.Advance(d)
		}
	}
	tb.Fatal("never quiet")
}
