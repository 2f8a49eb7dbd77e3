package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// refusingPublishes is a host that refuses every publish.
type refusingPublishes struct{ *recordingHost }

var errRefused = errors.New("this host takes no publishes")

func (refusingPublishes) Publish(context.Context, []string, PublishRequest) error { return errRefused }

// publishedIDs are the messageIds a host was given, in order.
func publishedIDs(h *recordingHost) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []string
	for _, p := range h.published {
		ids = append(ids, p.Req.MessageID+"<"+p.Req.InputID)
	}
	return strings.Join(ids, " ")
}

// A publish the host cannot refuse is told, not called: a producer's,
// with an inputId registerInput gave it in the same phase, or next's. It
// reaches the host, in order, with the next call or at the phase's end.
// Not parallel: it counts the host calls of the package.
func TestToldPublishes(t *testing.T) {
	s := load(t, handlers{
		producer: `for (let i = 0; i < 3; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "f" + i, title: "F" + i });
          await ctx.publish("a", { messageId: "m" + i, inputId, payload: { i } });
        }
        await ctx.publish("a", { messageId: "old", inputId: "77", payload: {} });
        await ctx.publish("a", { messageId: "last", inputId: "in-3", payload: {} });
        return {};`,
		next: `await ctx.publish("b", { messageId: "n1", payload: 1 });
        await ctx.publish("b", { messageId: "n2", payload: 2 });`,
	})
	h := &recordingHost{}
	before := calls.Load()
	if _, err := invoke(t, s, PhaseProducer, h, testLimits()); err != nil {
		t.Fatal(err)
	}
	// three registerInput calls, and the publish of an input from
	// elsewhere ("77"), which the host must check
	if n := calls.Load() - before; n != 4 {
		t.Errorf("the producer made %d host calls, want 4", n)
	}
	if got, want := publishedIDs(h), "m0<in-1 m1<in-2 m2<in-3 old<77 last<in-3"; got != want {
		t.Errorf("published %q, want %q", got, want)
	}

	h = &recordingHost{}
	before = calls.Load()
	if _, err := invoke(t, s, PhaseNext, h, testLimits(), json.RawMessage(`{"data":{}}`), json.RawMessage(`{"status":"none"}`)); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load() - before; n != 0 {
		t.Errorf("next made %d host calls, want none", n)
	}
	if got, want := publishedIDs(h), "n1< n2<"; got != want {
		t.Errorf("next published %q, want %q", got, want)
	}
}

// A told publish the host refuses fails the run, as its call would have:
// at the phase's end, or at the call it rode with; the host's error is
// kept.
func TestToldPublishRefused(t *testing.T) {
	t.Parallel()
	s := load(t, handlers{
		producer: `const inputId = ctx.registerInput({ source: "files", type: "file", id: "f", title: "F" });
        await ctx.publish("a", { messageId: "m", inputId, payload: {} });
        if (state && state.more) ctx.registerInput({ source: "files", type: "file", id: "g", title: "G" });
        return {};`,
		next: `await ctx.publish("b", { messageId: "n1", payload: 1 });`,
	})
	for _, c := range []struct {
		name  string
		phase Phase
		args  []json.RawMessage
		want  string
	}{
		{"next, at its end", PhaseNext, []json.RawMessage{json.RawMessage(`{"data":{}}`), json.RawMessage(`{"status":"none"}`)}, `next of consumer "c": ctx.publish: ` + errRefused.Error()},
		{"a producer, at its end", PhaseProducer, nil, `producer "p": ctx.publish: ` + errRefused.Error()},
		{"a producer, at the next call", PhaseProducer, []json.RawMessage{json.RawMessage(`{"more":true}`)}, `ctx.publish: ` + errRefused.Error()},
	} {
		_, err := invoke(t, s, c.phase, refusingPublishes{&recordingHost{}}, testLimits(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, errRefused) {
			t.Errorf("%s: err = %v, want %q wrapping the host's error", c.name, err, c.want)
		}
	}
}
