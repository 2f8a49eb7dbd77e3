package kit

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sink is a real HTTP service a workflow posts items to, idempotent the way
// a careful API is: a POST of {id} under an Idempotency-Key is applied once
// per key, whatever else arrives. It can fail on purpose (Set), and answers
// a reconcile GET with 200 (arrived) or 404: GET /items/{id} by item, any
// other GET by the request's Idempotency-Key.
type Sink struct {
	URL string

	mu sync.Mutex
	// mode for the next POSTs: ok, 500-after-apply, abort-after-apply
	// (the connection dropped after the item arrived), 500, 502, 504, 400,
	// 429, hang
	mode      string
	failures  int            // POSTs that fail before mode reverts to ok; 0 = all
	keys      map[string]int // POSTs that arrived, per Idempotency-Key
	items     map[string]int // POSTs that arrived, per item id
	applied   map[string]bool
	posts     int // every POST, failed or not
	gets      int
	onPost    func(r *http.Request)
	reconcile int // if set, what every reconcile GET answers
}

// NewSink starts a sink on 127.0.0.1, closed when the test ends.
func NewSink(tb testing.TB) *Sink {
	s := &Sink{mode: "ok", keys: map[string]int{}, items: map[string]int{}, applied: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Set makes the next failures POSTs (all when 0) answer as mode.
func (s *Sink) Set(mode string, failures int) {
	s.mu.Lock()
	s.mode, s.failures = mode, failures
	s.mu.Unlock()
}

// OnPost runs f inside the handler before anything is decided.
func (s *Sink) OnPost(f func(r *http.Request)) {
	s.mu.Lock()
	s.onPost = f
	s.mu.Unlock()
}

// ReconcileStatus makes every reconcile GET answer code (0: the truth).
func (s *Sink) ReconcileStatus(code int) {
	s.mu.Lock()
	s.reconcile = code
	s.mu.Unlock()
}

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.answerReconcile(w, r)
		return
	}
	s.mu.Lock()
	onPost := s.onPost
	s.mu.Unlock()
	if onPost != nil {
		onPost(r)
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
		s.items[body.ID]++
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

func (s *Sink) answerReconcile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.gets++
	code := s.reconcile
	var arrived bool
	if id, ok := strings.CutPrefix(r.URL.Path, "/items/"); ok {
		arrived = s.applied[id]
	} else if key := r.Header.Get("Idempotency-Key"); key != "" {
		arrived = s.keys[key] > 0
	}
	s.mu.Unlock()
	switch {
	case code != 0:
		w.WriteHeader(code)
	case arrived:
		w.Write([]byte(`{"ok":true}`))
	default:
		http.NotFound(w, r)
	}
}

// Posts is how many POSTs arrived, failed or not.
func (s *Sink) Posts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts
}

// Gets is how many reconcile GETs arrived.
func (s *Sink) Gets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}

// Keys is the POSTs that arrived per Idempotency-Key.
func (s *Sink) Keys() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.keys)
}

// MaxPerKey is the most POSTs that arrived under one key.
func (s *Sink) MaxPerKey() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := 0
	for _, c := range s.keys {
		m = max(m, c)
	}
	return m
}

// Posted fails the test unless exactly ids arrived, each once and under its
// own Idempotency-Key.
func (s *Sink) Posted(tb testing.TB, ids ...string) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if s.items[id] != 1 {
			tb.Errorf("item %s was posted %d times, want once", id, s.items[id])
		}
	}
	if len(s.items) != len(ids) {
		tb.Errorf("items posted: %v, want %v", s.items, ids)
	}
	if n := s.keys[""]; n > 0 {
		tb.Errorf("%d POSTs came without an Idempotency-Key", n)
	}
	if len(s.keys) != len(ids) {
		tb.Errorf("%d idempotency keys for %d items", len(s.keys), len(ids))
	}
}
