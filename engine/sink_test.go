package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is a real HTTP service a workflow posts items to. It applies each
// item once per idempotency key, can fail on purpose, and answers the
// reconcile URL /items/{id} with 200 (applied) or 404.
type sink struct {
	srv *httptest.Server
	mu  sync.Mutex
	// mode for the next POSTs: ok, 500-after-apply, abort-after-apply, 500, 400, 429, hang
	mode     string
	failures int // how many POSTs fail before mode reverts to ok; 0 = all
	keys     map[string]int
	applied  map[string]bool
	posts    int
	// onPost runs inside the handler before anything is decided
	onPost func(r *http.Request)
	// reconcileStatus, if set, is what the reconcile URL answers
	reconcileStatus int
}

func newSink(t *testing.T) *sink {
	s := &sink{mode: "ok", keys: map[string]int{}, applied: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) set(mode string, failures int) {
	s.mu.Lock()
	s.mode, s.failures = mode, failures
	s.mu.Unlock()
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/items/") {
		s.mu.Lock()
		if s.reconcileStatus != 0 {
			code := s.reconcileStatus
			s.mu.Unlock()
			w.WriteHeader(code)
			return
		}
		ok := s.applied[strings.TrimPrefix(r.URL.Path, "/items/")]
		s.mu.Unlock()
		if ok {
			w.Write([]byte(`{"ok":true}`))
			return
		}
		http.NotFound(w, r)
		return
	}
	if s.onPost != nil {
		s.onPost(r)
	}
	var body struct{ ID string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	s.posts++
	mode := s.mode
	if s.failures > 0 {
		s.failures--
		if s.failures == 0 {
			s.mode = "ok"
		}
	}
	apply := func() {
		key := r.Header.Get("Idempotency-Key")
		s.keys[key]++
		if s.keys[key] == 1 {
			s.applied[body.ID] = true
		}
	}
	switch mode {
	case "ok":
		apply()
		s.mu.Unlock()
		w.Write([]byte(`{"stored":"` + body.ID + `"}`))
	case "500-after-apply":
		apply()
		s.mu.Unlock()
		w.WriteHeader(500)
	case "abort-after-apply":
		apply()
		s.mu.Unlock()
		panic(http.ErrAbortHandler)
	case "hang":
		s.mu.Unlock()
		time.Sleep(2 * time.Second)
	default:
		s.mu.Unlock()
		code := map[string]int{"500": 500, "502": 502, "504": 504, "400": 400, "429": 429}[mode]
		if code == 429 {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(code)
	}
}

func (s *sink) maxPerKey() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := 0
	for _, c := range s.keys {
		m = max(m, c)
	}
	return m
}

// pushWorkflow posts one item per event to the sink, with a reconcile URL.
func pushWorkflow(url string, items ...string) string {
	list, _ := json.Marshal(items)
	return strings.NewReplacer("SINK", `"`+url+`"`, "ITEMS", string(list)).Replace(`
export default Keep.workflow({
  name: "push",
  topics: { item: {} },
  producers: { feed: { publishes: ["item"], schedule: { interval: "5m" }, handler: async (ctx) => {
    for (const id of ITEMS) {
      const inputId = ctx.registerInput({ source: "http", type: "resource", id, title: "Item " + id });
      await ctx.publish("item", { messageId: id, inputId, payload: { id } });
    }
  } } },
  consumers: { push: Keep.consumer({
    subscribe: ["item"],
    async prepare(ctx) {
      const [e] = await ctx.peek("item", { limit: 1 });
      if (!e) return { reservations: [], data: {} };
      return { reservations: [{ topic: "item", ids: [e.messageId] }], data: { id: e.payload.id }, ui: { title: "Push " + e.payload.id } };
    },
    async mutate(ctx, p) {
      await ctx.http.request({ method: "POST", url: SINK + "/items", json: { id: p.data.id }, reconcile: { url: SINK + "/items/" + p.data.id } });
      console.log("after the mutation call");
    },
    async next(ctx, p, r) { if (r.status !== "none") return { last: r.status }; },
  }) },
});`)
}

func (b *bundle) mutationsBy(status string) []MutationView {
	b.t.Helper()
	ms, err := b.e.Mutations(context.Background(), "push", status)
	if err != nil {
		b.t.Fatal(err)
	}
	return ms
}

// drainUntilQuiet advances the clock to each next due time and drains,
// until nothing is scheduled within the horizon.
func (b *bundle) drainUntilQuiet(horizon time.Duration) {
	b.t.Helper()
	end := b.clock.Now().Add(horizon)
	for i := 0; i < 200; i++ {
		b.drain()
		next, err := b.e.NextDue(context.Background())
		if err != nil {
			b.t.Fatal(err)
		}
		if next == nil || next.After(end) {
			return
		}
		if d := next.Sub(b.clock.Now()); d > 0 {
			b.clock.Advance(d)
		}
	}
	b.t.Fatal("never quiet")
}
