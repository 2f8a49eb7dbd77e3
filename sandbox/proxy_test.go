package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// A registerInput is told, not called, and so is a publish the host cannot
// refuse: a producer's, with an inputId registerInput gave it in the same
// phase, or next's. They reach the host, in order, with the next call or at
// the phase's end. Not parallel: it counts the host calls of the package.
func TestToldPublishes(t *testing.T) {
	s := load(t, handlers{
		producer: `for (let i = 0; i < 3; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "f" + i, title: "F" + i });
          await ctx.publish("a", { messageId: "m" + i, inputId, payload: { i } });
        }
        await ctx.publish("a", { messageId: "old", inputId: "77", payload: {} });
        await ctx.publish("a", { messageId: "last", inputId: "files:file:f2", payload: {} });
        return {};`,
		next: `await ctx.publish("b", { messageId: "n1", payload: 1 });
        await ctx.publish("b", { messageId: "n2", payload: 2 });`,
	})
	h := &recordingHost{}
	before := calls.Load()
	if _, err := invoke(t, s, PhaseProducer, h, testLimits()); err != nil {
		t.Fatal(err)
	}
	// the publish of an input from elsewhere ("77"), which the host must
	// check, carrying the three registrations and publishes before it
	if n := calls.Load() - before; n != 1 {
		t.Errorf("the producer made %d host calls, want 1", n)
	}
	if got, want := publishedIDs(h), "m0<files:file:f0 m1<files:file:f1 m2<files:file:f2 old<77 last<files:file:f2"; got != want {
		t.Errorf("published %q, want %q", got, want)
	}
	if len(h.inputs) != 3 || h.inputs[2].ID != "f2" {
		t.Errorf("registered %+v, want f0, f1, f2", h.inputs)
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

// refusingInputs is a host that refuses every registerInput.
type refusingInputs struct{ *recordingHost }

var errNoInputs = errors.New("this host takes no inputs")

func (refusingInputs) RegisterInput(context.Context, InputRequest) error { return errNoInputs }

// A told registerInput the host refuses fails the run, as its call would
// have (a host's error ends a run; the script cannot catch it), and
// nothing told after it reaches the host.
func TestToldRegisterInputRefused(t *testing.T) {
	t.Parallel()
	s := load(t, handlers{producer: `let caught = false;
        try { ctx.registerInput({ source: "files", type: "file", id: "f", title: "F" }); } catch (e) { caught = true; }
        await ctx.publish("a", { messageId: "m", inputId: "files:file:f", payload: {} });
        return { caught };`})
	h := refusingInputs{&recordingHost{}}
	_, err := invoke(t, s, PhaseProducer, h, testLimits())
	if err == nil || !strings.Contains(err.Error(), `producer "p": ctx.registerInput: `+errNoInputs.Error()) || !errors.Is(err, errNoInputs) {
		t.Errorf("err = %v, want the run failed by ctx.registerInput, wrapping the host's error", err)
	}
	if got := publishedIDs(h.recordingHost); got != "" {
		t.Errorf("published %q after the refused registration", got)
	}
}

// A phase that tells a lot sends it in parts: once what a worker holds
// told reaches toldMost, the next registerInput is a call that carries it,
// so no frame nears maxFrame; everything still reaches the host once, in
// order. Not parallel: it counts the host calls of the package.
func TestToldCallsAreSentInParts(t *testing.T) {
	s := load(t, handlers{producer: `const title = "t".repeat(4000);
        for (let i = 0; i < 600; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "f" + i, title });
          await ctx.publish("a", { messageId: "m" + i, inputId, payload: {} });
        }
        return {};`})
	h := &recordingHost{}
	before := calls.Load()
	if _, err := invoke(t, s, PhaseProducer, h, testLimits()); err != nil {
		t.Fatal(err)
	}
	// 600 titles of 4,000 bytes: 2.4 MB, two parts of toldMost sent by a
	// call each, the rest with the phase's end
	if n := calls.Load() - before; n != 2 {
		t.Errorf("the producer made %d host calls, want 2", n)
	}
	if len(h.inputs) != 600 || len(h.published) != 600 {
		t.Fatalf("the host got %d registrations and %d publishes, want 600 each", len(h.inputs), len(h.published))
	}
	for i, in := range h.inputs {
		if want := fmt.Sprintf("f%d", i); in.ID != want || h.published[i].Req.InputID != "files:file:"+want {
			t.Fatalf("registration %d is %s, publish under %s, want %s", i, in.ID, h.published[i].Req.InputID, want)
		}
	}
}
