package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"keep/engine"
	"keep/engine/api"
)

// awayAPI is the real engine reached as the daemon's client reaches it: it
// can go away (its news stream closes, a subscription made meanwhile
// closes at once, and every read fails) and come back.
type awayAPI struct {
	api.API
	mu   sync.Mutex
	away bool
	kill chan struct{}
}

var errAway = errors.New("dial unix keep.db.sock: connect: connection refused")

func (a *awayAPI) gone() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.away
}

// goAway ends the news stream and fails what is asked until back.
func (a *awayAPI) goAway() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.away = true
	if a.kill != nil {
		close(a.kill)
		a.kill = nil
	}
}

func (a *awayAPI) back() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.away = false
}

// SubscribeScreen is how the TUI listens (Run's listen).
func (a *awayAPI) SubscribeScreen() (<-chan api.Notification, func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(chan api.Notification, 64)
	if a.away {
		close(out)
		return out, func() {}
	}
	in, cancel := a.API.SubscribeScreen()
	kill := make(chan struct{})
	a.kill = kill
	go func() {
		defer close(out)
		for {
			select {
			case n, ok := <-in:
				if !ok {
					return
				}
				out <- n
			case <-kill:
				return
			}
		}
	}()
	return out, cancel
}

func (a *awayAPI) Attention(ctx context.Context) ([]api.AttentionItem, error) {
	if a.gone() {
		return nil, errAway
	}
	return a.API.Attention(ctx)
}

func (a *awayAPI) Workflows(ctx context.Context) ([]api.WorkflowView, error) {
	if a.gone() {
		return nil, errAway
	}
	return a.API.Workflows(ctx)
}

func (a *awayAPI) Accounts(ctx context.Context) ([]engine.AccountView, error) {
	if a.gone() {
		return nil, errAway
	}
	return a.API.(engine.AccountLister).Accounts(ctx)
}

// A daemon that goes away and comes back under an open TUI: what was
// answered while it was away (keep approve on the database itself) is
// gone from the screen once it is back, without a key, and the status
// line no longer says it cannot read.
func TestTheScreenIsReadAgainWhenTheEngineIsBack(t *testing.T) {
	t.Parallel()
	r := newRealEngine(t)
	r.Write("inbox/a.txt", "alpha")
	r.Deploy("notes", []byte(copyWorkflow))
	r.Drain()
	away := &awayAPI{API: r.API}
	h := r.harness(away, 120, 40)
	if n := len(h.m.at.all); n != 1 {
		t.Fatalf("%d cards, want the approval", n)
	}

	msgs := make(chan tea.Msg, 64)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { listen(h.m.sh.api, func(m tea.Msg) { msgs <- m }, stop); close(done) }()
	defer func() { close(stop); <-done }()
	// take in what listen sends, as the program would, until cond holds
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for !cond() {
			select {
			case m := <-msgs:
				h.send(m)
			case <-deadline:
				t.Fatalf("%s never came:\n%s", what, h.screen())
			}
		}
	}

	time.Sleep(1100 * time.Millisecond) // up long enough to be missed
	away.goAway()
	until("the engine going away", func() bool { return strings.Contains(h.m.errText, "could not read") })

	it := h.m.at.Selected()
	if err := r.API.Approve(context.Background(), it.ID, false); err != nil {
		t.Fatal(err)
	}
	away.back()
	until("the card answered while the engine was away leaving the screen", func() bool { return len(h.m.at.all) == 0 })
	if s := h.screen(); strings.Contains(s, "could not read") || strings.Contains(s, "APPROVAL") {
		t.Fatalf("once the engine is back the screen still says:\n%s", s)
	}
}
