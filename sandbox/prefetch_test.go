package sandbox

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// prefetchHost is a recordingHost that prefetches, and counts the peeks
// that reach it.
type prefetchHost struct {
	*recordingHost
	pre        map[string][]Event // nil: Prefetch fails
	prefetches atomic.Int32
	peeks      atomic.Int32
}

func (h *prefetchHost) Prefetch(_ context.Context, depth int) (map[string][]Event, error) {
	h.prefetches.Add(1)
	if depth != PrefetchDepth {
		panic("prefetch depth")
	}
	if h.pre == nil {
		return nil, context.DeadlineExceeded
	}
	return h.pre, nil
}

func (h *prefetchHost) Peek(ctx context.Context, topic string, limit int) ([]Event, error) {
	h.peeks.Add(1)
	return h.recordingHost.Peek(ctx, topic, limit)
}

func TestPrefetchedPeeks(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(id string) Event {
		return Event{MessageID: id, Payload: json.RawMessage(`{"id":"` + id + `"}`), CreatedAt: at}
	}
	s := load(t, handlers{prepare: `
        const one = await ctx.peek("a", { limit: 1 });
        const three = await ctx.peek("a", { limit: 3 });
        return { reservations: [], data: { one: one.map(e => e.messageId + ":" + e.payload.id), three: three.map(e => e.messageId) } };`})
	host := func() *recordingHost {
		return &recordingHost{events: map[string][]Event{"a": {ev("e1"), ev("e2"), ev("e3")}}}
	}
	for _, tc := range []struct {
		name  string
		host  Host
		want  string
		peeks int32 // that reach the host
	}{
		{"the one event prefetched answers a peek of one; three are asked for",
			&prefetchHost{recordingHost: host(), pre: map[string][]Event{"a": {ev("e1")}}},
			`{"one":["e1:e1"],"three":["e1","e2","e3"]}`, 1},
		{"nothing pending prefetched answers every peek",
			&prefetchHost{recordingHost: host(), pre: map[string][]Event{"a": {}}},
			`{"one":[],"three":[]}`, 0},
		{"a topic not prefetched is asked for",
			&prefetchHost{recordingHost: host(), pre: map[string][]Event{}},
			`{"one":["e1:e1"],"three":["e1","e2","e3"]}`, 2},
		{"a failed prefetch leaves the peeks to the host",
			&prefetchHost{recordingHost: host()},
			`{"one":["e1:e1"],"three":["e1","e2","e3"]}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := invoke(t, s, PhasePrepare, tc.host, testLimits())
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Data json.RawMessage }
			if err := json.Unmarshal(out.Prepare.Raw, &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Data) != tc.want {
				t.Errorf("data = %s, want %s", got.Data, tc.want)
			}
			h := tc.host.(*prefetchHost)
			if got := h.peeks.Load(); got != tc.peeks {
				t.Errorf("%d peeks reached the host, want %d", got, tc.peeks)
			}
			if got := h.prefetches.Load(); got != 1 {
				t.Errorf("%d prefetches, want 1", got)
			}
		})
	}

	t.Run("only a prepare phase prefetches", func(t *testing.T) {
		s := load(t, handlers{mutate: `await ctx.files.write({ path: "x", content: "y" });`})
		h := &prefetchHost{recordingHost: host(), pre: map[string][]Event{"a": {ev("e1")}}}
		if _, err := invoke(t, s, PhaseMutate, h, testLimits(), json.RawMessage(`{"reservations":[],"data":{}}`)); err != nil {
			t.Fatal(err)
		}
		if got := h.prefetches.Load(); got != 0 {
			t.Errorf("a mutate phase prefetched %d times", got)
		}
	})
}
