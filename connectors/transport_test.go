package connectors_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
)

// account is an Account whose secrets are handed out in turn: Invalidate
// moves to the next one, as a refreshed oauth2 token would.
type account struct {
	kind    string
	mu      sync.Mutex
	secrets []string
	invalid int
	refused []string
}

func (a *account) Name() string     { return "acct" }
func (a *account) Kind() string     { return a.kind }
func (a *account) Username() string { return "me" }
func (a *account) Secret(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.secrets[min(a.invalid, len(a.secrets)-1)], nil
}
func (a *account) Invalidate() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.invalid++
}

// refusing is an account that records refusals, as the store's do.
type refusing struct{ *account }

func (a refusing) Refuse(secret, why string) *connectors.Error {
	a.refused = append(a.refused, secret)
	return &connectors.Error{Class: connectors.Auth, Err: errors.New("recorded: " + why)}
}

// server answers 401 unless the request carries one of accept, and records
// the Authorization and body of every request.
type server struct {
	mu     sync.Mutex
	auths  []string
	bodies []string
}

func (s *server) start(t *testing.T, accept ...string) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		for _, a := range accept {
			if r.Header.Get("Authorization") == a {
				w.Write([]byte("ok"))
				return
			}
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestTransportUnauthorized(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		acct      connectors.Account
		accept    []string
		wantAuths []string
		wantClass connectors.Class // "" : a 200 came back
		refused   []string
	}{
		{name: "an oauth2 token refused once is refreshed and the request replayed once",
			acct: &account{kind: "oauth2", secrets: []string{"old", "fresh"}}, accept: []string{"Bearer fresh"},
			wantAuths: []string{"Bearer old", "Bearer fresh"}},
		{name: "an oauth2 token refused twice is an auth failure after one replay",
			acct:      &account{kind: "oauth2", secrets: []string{"old", "fresh", "fresher"}},
			wantAuths: []string{"Bearer old", "Bearer fresh"}, wantClass: connectors.Auth},
		{name: "a password changed since it was read is sent again once",
			acct: &account{kind: "basic", secrets: []string{"old", "pw"}}, accept: []string{"Basic bWU6cHc="},
			wantAuths: []string{"Basic bWU6b2xk", "Basic bWU6cHc="}},
		{name: "a secret that stays the same is not sent again",
			acct:      &account{kind: "token", secrets: []string{"tok", "tok"}},
			wantAuths: []string{"Bearer tok"}, wantClass: connectors.Auth},
		{name: "a refusal is recorded by an account that records it",
			acct:      refusing{&account{kind: "oauth2", secrets: []string{"old", "fresh"}}},
			wantAuths: []string{"Bearer old", "Bearer fresh"}, wantClass: connectors.Auth, refused: []string{"fresh"}},
		{name: "without an account a 401 is the caller's to classify",
			wantAuths: []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var s server
			ts := s.start(t, tc.accept...)
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader("payload"))
			tr := &connectors.Transport{Client: ts.Client(), Account: tc.acct}
			resp, sent, err := tr.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := connectors.ClassOf(err); got != tc.wantClass {
				t.Fatalf("class %q (%v), want %q", got, err, tc.wantClass)
			}
			if err == nil && tc.acct != nil && resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			if !sent {
				t.Error("sent = false for a request the server answered")
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if strings.Join(s.auths, "|") != strings.Join(tc.wantAuths, "|") {
				t.Errorf("authorizations %q, want %q", s.auths, tc.wantAuths)
			}
			for i, b := range s.bodies {
				if b != "payload" {
					t.Errorf("request %d carried body %q, want the payload", i, b)
				}
			}
			if r, ok := tc.acct.(refusing); ok && strings.Join(r.refused, "|") != strings.Join(tc.refused, "|") {
				t.Errorf("refused %q, want %q", r.refused, tc.refused)
			}
		})
	}
}

func TestTransportSent(t *testing.T) {
	t.Parallel()
	// cut reads the whole request, then drops the connection unanswered.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(cut.Close)
	// refused is an address nothing listens on any more.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()

	cases := []struct {
		name      string
		url       string
		mutation  bool
		wantSent  bool
		wantClass connectors.Class
		notSent   bool
	}{
		{"a connection cut after the request was written: sent, uncertain", cut.URL, true, true, connectors.Uncertain, false},
		{"the same cut on a read is transient", cut.URL, false, true, connectors.Transient, false},
		{"a refused connect: not sent, transient", refused, true, false, connectors.Transient, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader("payload"))
			// a fresh client: net/http does not resend a POST on a new
			// connection, so the cut is seen as it is
			tr := &connectors.Transport{Client: &http.Client{Transport: &http.Transport{}},
				Account: &account{kind: "basic", secrets: []string{"pw"}}}
			resp, sent, err := tr.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("status %d, want no answer", resp.StatusCode)
			}
			if sent != tc.wantSent {
				t.Fatalf("sent = %v, want %v (%v)", sent, tc.wantSent, err)
			}
			x := connectors.Exchange{Err: err, Sent: sent, Mutation: tc.mutation, Credential: true}
			e := connectors.Failure(x, 0, err)
			if e.Class != tc.wantClass || e.NotSent != tc.notSent {
				t.Fatalf("class %q not sent %v, want %q %v", e.Class, e.NotSent, tc.wantClass, tc.notSent)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	refusal := &connectors.Error{Class: connectors.Auth, Err: errors.New("sign in again")}
	cases := []struct {
		name string
		x    connectors.Exchange
		want connectors.Class
	}{
		{"200 is done", connectors.Exchange{Status: 200, Mutation: true}, ""},
		{"204 is done", connectors.Exchange{Status: 204}, ""},
		{"429 is transient", connectors.Exchange{Status: 429, Mutation: true}, connectors.Transient},
		{"503 is transient", connectors.Exchange{Status: 503, Mutation: true}, connectors.Transient},
		{"408 is transient", connectors.Exchange{Status: 408, Mutation: true}, connectors.Transient},
		{"401 to keep's credential is auth", connectors.Exchange{Status: 401, Credential: true}, connectors.Auth},
		{"403 to keep's credential is auth", connectors.Exchange{Status: 403, Mutation: true, Credential: true}, connectors.Auth},
		{"403 to the script's own request is logic", connectors.Exchange{Status: 403, Mutation: true}, connectors.Logic},
		{"404 is logic", connectors.Exchange{Status: 404, Mutation: true, Credential: true}, connectors.Logic},
		{"400 is logic", connectors.Exchange{Status: 400}, connectors.Logic},
		{"500 on a mutation is uncertain", connectors.Exchange{Status: 500, Mutation: true}, connectors.Uncertain},
		{"502 on a read is transient", connectors.Exchange{Status: 502}, connectors.Transient},
		{"a 302 not followed on a mutation is uncertain", connectors.Exchange{Status: 302, Mutation: true}, connectors.Uncertain},
		{"a 302 not followed on a read is logic", connectors.Exchange{Status: 302}, connectors.Logic},
		{"no answer after sending a mutation is uncertain", connectors.Exchange{Err: io.EOF, Sent: true, Mutation: true}, connectors.Uncertain},
		{"no answer before sending is transient", connectors.Exchange{Err: io.EOF, Mutation: true}, connectors.Transient},
		{"a body cut off after a 200 to a mutation is uncertain", connectors.Exchange{Status: 200, Err: io.ErrUnexpectedEOF, Sent: true, Mutation: true}, connectors.Uncertain},
		{"a classified error keeps its class", connectors.Exchange{Err: refusal, Sent: true, Mutation: true}, connectors.Auth},
	}
	for _, tc := range cases {
		if got := connectors.Classify(tc.x); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A 401 from where a redirect led, another origin the credential did not
// go to, is that server's answer to a request without it: not the
// account's refusal. Taken for one, it threw away a good token and marked
// the account as needing a sign-in that would not help.
func TestA401FromAnotherOriginDoesNotRefuseTheAccount(t *testing.T) {
	t.Parallel()
	var elsewhere server
	other := elsewhere.start(t) // answers 401 to everything
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/sign-in", http.StatusFound)
	}))
	t.Cleanup(origin.Close)
	a := refusing{&account{kind: "token", secrets: []string{"tok-1", "tok-2"}}}
	tr := connectors.Transport{Client: &http.Client{Transport: &http.Transport{}}, Account: a}
	req, _ := http.NewRequest(http.MethodGet, origin.URL+"/feed", nil)
	resp, _, err := tr.Do(req)
	if err != nil {
		t.Fatalf("got %v, want the 401 from %s as the answer", err, other.URL)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	if a.invalid != 0 || len(a.refused) != 0 {
		t.Fatalf("the account was invalidated %d times and refused %q for another server's 401", a.invalid, a.refused)
	}
	for _, auth := range elsewhere.auths {
		if auth != "" {
			t.Fatalf("the credential went to the other origin: %q", elsewhere.auths)
		}
	}
}

// A mutation the service answered 401 was not done: when the send with the
// fresh token then fails before it is written, nothing was sent at all,
// and the call is a plain retry. Counted as sent, it was uncertain, put to
// the person or reconciled though the service never acted.
func TestAReplayNotWrittenAfterA401IsNotSent(t *testing.T) {
	t.Parallel()
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		// the fresh token finds nobody listening
		ts.Listener.Close()
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	a := &account{kind: "oauth2", secrets: []string{"old", "fresh"}}
	tr := connectors.Transport{Client: &http.Client{Transport: &http.Transport{}}, Account: a}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/items", strings.NewReader(`{"n":1}`))
	resp, sent, err := tr.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("status %d, want the replay to fail to connect", resp.StatusCode)
	}
	if a.invalid != 1 {
		t.Fatalf("the token was invalidated %d times, want once", a.invalid)
	}
	if sent {
		t.Fatalf("sent = true for a request refused with 401 and then not written (%v)", err)
	}
}
