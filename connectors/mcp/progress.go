package mcp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A tool call asks for progress (a progressToken in _meta). Each progress
// notification moves the call's deadline to Timeout from then, never past
// MaxTimeout from its start: a tool that says it is working is not cut at
// Timeout and turned into an uncertain call, and one that never ends still
// ends.

// deadline cancels a call's context when it passes.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	step   time.Duration
	last   time.Time // the latest the deadline may be
	passed bool
}

func newDeadline(step, max time.Duration, cancel context.CancelFunc) *deadline {
	d := &deadline{step: step, last: time.Now().Add(max)}
	d.timer = time.AfterFunc(step, func() {
		d.mu.Lock()
		d.passed = true
		d.mu.Unlock()
		cancel()
	})
	return d
}

// extend moves the deadline to step from now, capped at last.
func (d *deadline) extend() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.passed {
		return
	}
	next := min(d.step, time.Until(d.last))
	if next <= 0 {
		return
	}
	d.timer.Reset(next)
}

func (d *deadline) stop() { d.timer.Stop() }

func (d *deadline) hasPassed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passed
}

var progressSeq atomic.Int64

// watchProgress gives a call its progress token and deadline; done
// forgets both. The call's context ends with the connector's life too:
// the SDK's Close waits for every call in flight, so a call to a server
// that never answers held Close (an engine stop, a redeploy, keep
// quitting) for up to the call's whole timeout.
func (c *Connector) watchProgress(ctx context.Context) (cctx context.Context, token string, d *deadline, done func()) {
	cctx, cancel := context.WithCancel(ctx)
	unlife := context.AfterFunc(c.life, cancel)
	d = newDeadline(c.cfg.Timeout, c.cfg.MaxTimeout, cancel)
	token = fmt.Sprintf("keep-%d", progressSeq.Add(1))
	c.calls.Store(token, d)
	return cctx, token, d, func() {
		c.calls.Delete(token)
		d.stop()
		unlife()
		cancel()
	}
}

// onProgress extends the deadline of the call the notification is for.
func (c *Connector) onProgress(token any) {
	if d, ok := c.calls.Load(fmt.Sprint(token)); ok {
		d.(*deadline).extend()
	}
	if c.progress != nil {
		c.progress()
	}
}
