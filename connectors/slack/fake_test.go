package slack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSlack is a small stand-in for the Slack Web API and one incoming
// webhook: it checks the bearer token as auth.test does, stores posted
// messages with their metadata, and serves them back through
// conversations.history and conversations.replies. Failures are queued per
// method and consumed by the next call.
type fakeSlack struct {
	token    string
	hookPath string
	srv      *httptest.Server

	mu       sync.Mutex
	channels map[string]string         // name → ID
	messages map[string][]*fakeMessage // channel ID → messages, oldest first
	hooked   []map[string]any
	seq      int
	failures map[string][]failure
	queries  map[string][]url.Values // method → query strings or bodies seen
	headers  map[string][]http.Header
}

type fakeMessage struct {
	TS       string         `json:"ts"`
	User     string         `json:"user"`
	Text     string         `json:"text"`
	ThreadTS string         `json:"thread_ts,omitempty"`
	Blocks   []any          `json:"blocks,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// failure is one way for the fake to misbehave.
type failure struct {
	code       string        // answer 200 {"ok": false, "error": code}
	status     int           // answer this HTTP status
	body       string        // with this body
	retryAfter string        // and this Retry-After header
	afterStore bool          // do the work first, then fail: the uncertain cases
	hijack     bool          // close the connection without an answer
	slow       time.Duration // answer this late, or not at all if the client gives up
	echoAuth   bool          // put the Authorization header in the error, as a buggy server might
}

const fakeToken = "xoxb-1234-SECRET-token"

func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{
		token:    fakeToken,
		hookPath: "/services/T0000/B0000/HOOKSECRET",
		channels: map[string]string{"finance": "C0FINANCE1", "general": "C0GENERAL1"},
		messages: map[string][]*fakeMessage{},
		failures: map[string][]failure{},
		queries:  map[string][]url.Values{},
		headers:  map[string][]http.Header{},
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

// fail queues a failure for the next call of method ("webhook" for the hook).
func (f *fakeSlack) fail(method string, fl failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[method] = append(f.failures[method], fl)
}

func (f *fakeSlack) take(method string) (failure, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.failures[method]
	if len(q) == 0 {
		return failure{}, false
	}
	f.failures[method] = q[1:]
	return q[0], true
}

func (f *fakeSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if r.URL.Path == f.hookPath {
		method = "webhook"
	}
	body, _ := io.ReadAll(r.Body)
	f.record(method, r, body)
	fl, failing := f.take(method)
	if failing && !fl.afterStore && f.misbehave(w, r, fl) {
		return
	}
	var answer any
	if method == "webhook" {
		answer = f.webhook(body)
	} else {
		answer = f.api(method, r, body)
	}
	if failing && fl.afterStore && f.misbehave(w, r, fl) {
		return
	}
	if s, ok := answer.(string); ok {
		io.WriteString(w, s)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(answer)
}

func (f *fakeSlack) record(method string, r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	if len(body) > 0 {
		q.Set("_body", string(body))
	}
	f.queries[method] = append(f.queries[method], q)
	f.headers[method] = append(f.headers[method], r.Header.Clone())
}

// misbehave applies fl; it reports whether the answer has been given.
func (f *fakeSlack) misbehave(w http.ResponseWriter, r *http.Request, fl failure) bool {
	if fl.slow > 0 {
		select {
		case <-time.After(fl.slow):
		case <-r.Context().Done():
			return true
		}
	}
	if fl.retryAfter != "" {
		w.Header().Set("Retry-After", fl.retryAfter)
	}
	switch {
	case fl.hijack:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	case fl.status != 0:
		w.WriteHeader(fl.status)
		io.WriteString(w, fl.body)
		return true
	case fl.code != "":
		code := fl.code
		if fl.echoAuth {
			code += " (" + r.Header.Get("Authorization") + ")"
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
		return true
	}
	return false
}

func apiError(code string) map[string]any { return map[string]any{"ok": false, "error": code} }

func (f *fakeSlack) api(method string, r *http.Request, body []byte) any {
	switch auth := r.Header.Get("Authorization"); {
	case auth == "":
		return apiError("not_authed")
	case auth != "Bearer "+f.token:
		return apiError("invalid_auth")
	}
	switch method {
	case "auth.test":
		return map[string]any{"ok": true, "user_id": "UKEEPBOT", "team_id": "T0000"}
	case "chat.postMessage":
		return f.postMessage(r, body)
	case "conversations.history", "conversations.replies":
		return f.read(method, r.URL.Query())
	}
	return apiError("unknown_method")
}

func (f *fakeSlack) postMessage(r *http.Request, body []byte) any {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return apiError("invalid_form_data")
	}
	var in struct {
		Channel  string         `json:"channel"`
		Text     string         `json:"text"`
		ThreadTS string         `json:"thread_ts"`
		Blocks   []any          `json:"blocks"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return apiError("invalid_json")
	}
	if in.Text == "" && len(in.Blocks) == 0 {
		return apiError("no_text")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.resolve(in.Channel)
	if !ok {
		return apiError("channel_not_found")
	}
	f.seq++
	m := &fakeMessage{TS: fmt.Sprintf("1700000000.%06d", f.seq), User: "UKEEPBOT", Text: in.Text, ThreadTS: in.ThreadTS, Blocks: in.Blocks, Metadata: in.Metadata}
	f.messages[id] = append(f.messages[id], m)
	return map[string]any{"ok": true, "channel": id, "ts": m.TS, "message": m}
}

// resolve accepts a channel ID, or a name with or without "#", as
// chat.postMessage does.
func (f *fakeSlack) resolve(ch string) (string, bool) {
	if id, ok := f.channels[strings.TrimPrefix(ch, "#")]; ok {
		return id, true
	}
	for _, id := range f.channels {
		if id == ch {
			return id, true
		}
	}
	return "", false
}

// read serves history (top-level messages, newest first) and replies (the
// thread, oldest first), taking channel IDs only, as Slack does.
func (f *fakeSlack) read(method string, q url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := q.Get("channel")
	if _, known := f.messages[id]; !known && !f.isID(id) {
		return apiError("channel_not_found")
	}
	var list []*fakeMessage
	for _, m := range f.messages[id] {
		switch {
		case method == "conversations.history" && (m.ThreadTS == "" || m.ThreadTS == m.TS):
			list = append(list, m)
		case method == "conversations.replies" && (m.TS == q.Get("ts") || m.ThreadTS == q.Get("ts")):
			list = append(list, m)
		}
	}
	if method == "conversations.history" {
		sort.Slice(list, func(i, j int) bool { return list[i].TS > list[j].TS })
		if oldest := q.Get("oldest"); oldest != "" {
			kept := list[:0:0]
			for _, m := range list {
				if m.TS > oldest {
					kept = append(kept, m)
				}
			}
			list = kept
		}
	}
	offset, _ := strconv.Atoi(strings.TrimPrefix(q.Get("cursor"), "off:"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	end := min(offset+limit, len(list))
	page := list[min(offset, len(list)):end]
	out := make([]map[string]any, len(page))
	for i, m := range page {
		out[i] = map[string]any{"type": "message", "ts": m.TS, "user": m.User, "text": m.Text}
		if m.ThreadTS != "" {
			out[i]["thread_ts"] = m.ThreadTS
		}
		if m.Metadata != nil && q.Get("include_all_metadata") == "true" {
			out[i]["metadata"] = m.Metadata
		}
	}
	answer := map[string]any{"ok": true, "messages": out, "has_more": end < len(list)}
	if end < len(list) {
		answer["response_metadata"] = map[string]any{"next_cursor": fmt.Sprintf("off:%d", end)}
	}
	return answer
}

func (f *fakeSlack) isID(ch string) bool {
	for _, id := range f.channels {
		if id == ch {
			return true
		}
	}
	return false
}

// webhook answers as incoming webhooks do: "ok", or a code with a status.
func (f *fakeSlack) webhook(body []byte) any {
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		return "invalid_payload"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooked = append(f.hooked, in)
	return "ok"
}

// stored returns the messages of a channel, by ID.
func (f *fakeSlack) stored(id string) []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeMessage
	for _, m := range f.messages[id] {
		out = append(out, *m)
	}
	return out
}

func (f *fakeSlack) lastQuery(method string) url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queries[method]
	if len(q) == 0 {
		return nil
	}
	return q[len(q)-1]
}

func (f *fakeSlack) lastHeader(method string) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.headers[method]
	if len(h) == 0 {
		return nil
	}
	return h[len(h)-1]
}
