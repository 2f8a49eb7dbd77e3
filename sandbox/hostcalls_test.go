package sandbox

import (
	"context"
	"sync"
	"testing"
)

// whereHost records the goroutine each host call is served on.
type whereHost struct {
	recordingHost
	mu    sync.Mutex
	where map[string][]int
}

func (h *whereHost) note(call string) {
	id := goroutineID()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.where[call] = append(h.where[call], id)
}

func (h *whereHost) Read(ctx context.Context, connector, method string, params map[string]any) (any, error) {
	h.note("read")
	return h.recordingHost.Read(ctx, connector, method, params)
}

func (h *whereHost) RegisterInput(ctx context.Context, in InputRequest) error {
	h.note("registerInput")
	return h.recordingHost.RegisterInput(ctx, in)
}

func (h *whereHost) Publish(ctx context.Context, topics []string, ev PublishRequest) error {
	h.note("publish")
	return h.recordingHost.Publish(ctx, topics, ev)
}

// TestOwnStateCallsAreServedWhereRead: a host call that reads or notes
// keep's own state (registerInput, and the publishes it carries) is served
// on the goroutine that reads the worker's frames — the caller's, in Run —
// not handed to another, which woke a second thread for every file a
// producer registers. A connector's read still runs on a goroutine of its
// own, so one that never returns cannot hold the run past its bound
// (TestCancellation).
func TestOwnStateCallsAreServedWhereRead(t *testing.T) {
	t.Parallel()
	s := load(t, handlers{producer: `
        await ctx.files.list({});
        for (let i = 0; i < 3; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "f" + i, title: "F" + i });
          await ctx.publish("a", { messageId: "m" + i, inputId, payload: {} });
        }
        return {};`})
	h := &whereHost{where: map[string][]int{}}
	caller := goroutineID()
	heavy.RLock()
	_, err := s.Run(context.Background(), Invocation{Handler: "p", Phase: PhaseProducer, Host: h, Limits: testLimits()})
	heavy.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := h.where["registerInput"]; len(got) != 3 {
		t.Fatalf("registerInput served %d times, want 3", len(got))
	}
	for call, ids := range h.where {
		for _, id := range ids {
			switch own := call != "read"; {
			case own && id != caller:
				t.Errorf("%s was served on goroutine %d, not on the one that reads the frames (%d)", call, id, caller)
			case !own && id == caller:
				t.Errorf("read was served on the goroutine that reads the frames (%d): a read that never returns would hold the run", id)
			}
		}
	}
	if len(h.where["publish"]) != 3 {
		t.Errorf("publish served %d times, want 3", len(h.where["publish"]))
	}
}

// ctxHost keeps the context each publish is served with.
type ctxHost struct {
	recordingHost
	mu   sync.Mutex
	ctxs []context.Context
}

func (h *ctxHost) Publish(ctx context.Context, topics []string, ev PublishRequest) error {
	h.mu.Lock()
	h.ctxs = append(h.ctxs, ctx)
	h.mu.Unlock()
	return h.recordingHost.Publish(ctx, topics, ev)
}

// TestCallsOfAPhaseShareItsDeadline: the calls of one phase run in one
// context with the worker's deadline for the phase, made once: a context
// with a deadline made for each call added a timer each time, and adding a
// timer wakes the runtime's poller and a thread to look at it. The context
// ends with the run.
func TestCallsOfAPhaseShareItsDeadline(t *testing.T) {
	t.Parallel()
	s := load(t, handlers{producer: `
        for (let i = 0; i < 3; i++) {
          await ctx.publish("a", { messageId: "m" + i, inputId: "7" + i }); // not this run's: a call
        }
        return {};`})
	h := &ctxHost{}
	heavy.RLock()
	_, err := s.Run(context.Background(), Invocation{Handler: "p", Phase: PhaseProducer, Host: h, Limits: testLimits()})
	heavy.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.ctxs) != 3 {
		t.Fatalf("publish served %d times, want 3", len(h.ctxs))
	}
	for i, ctx := range h.ctxs {
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("call %d has no deadline: the worker's for the phase is lost", i)
		}
		if ctx != h.ctxs[0] {
			t.Errorf("call %d ran in a context of its own, not the phase's", i)
		}
		if ctx.Err() == nil {
			t.Errorf("call %d's context outlived the run", i)
		}
	}
}
