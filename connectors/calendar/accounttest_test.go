package calendar_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/connectors/calendar"
)

// principal answers the PROPFIND for current-user-principal.
const principal = `<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:">
 <D:response><D:href>/cal/</D:href><D:propstat><D:prop>
  <D:current-user-principal><D:href>/alice/</D:href></D:current-user-principal>
 </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
</D:multistatus>`

// calStore is the host's accounts with one password account, cal, whose
// stored password is pw.
func calStore(t *testing.T, user, pw string) (*accounts.Store, connectors.Account) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(path, []byte(`{"accounts":{"cal":{"secret":"`+pw+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := accounts.Open([]accounts.Def{{Name: "cal", Kind: accounts.Password, Username: user}}, accounts.Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Account("cal")
	if err != nil {
		t.Fatal(err)
	}
	return s, a
}

func calState(t *testing.T, s *accounts.Store) string {
	t.Helper()
	sts, err := s.Statuses()
	if err != nil || len(sts) != 1 {
		t.Fatalf("statuses %v, %v", sts, err)
	}
	return sts[0].State
}

// TestAccountPropfind: TestAccount sends a PROPFIND with the account's
// Basic credentials; a 401 is the account's sign-in failure, naming keep
// auth login cal, and marks the account as needing a sign-in.
func TestAccountPropfind(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "right-pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="cal"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method != "PROPFIND" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusMultiStatus)
		w.Write([]byte(principal))
	}))
	defer ts.Close()
	ctx := context.Background()

	s, a := calStore(t, "alice", "right-pw")
	c, err := calendar.New(calendar.Config{URL: ts.URL + "/cal/", Account: a})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := c.TestAccount(ctx, "cal"); err != nil || len(done) != 1 || !strings.Contains(done[0], "PROPFIND") {
		t.Fatalf("TestAccount with the right password = %q, %v", done, err)
	}
	if done, err := c.TestAccount(ctx, "other"); err != nil || done != nil {
		t.Fatalf("TestAccount(other) = %q, %v", done, err)
	}
	if st := calState(t, s); st != accounts.StateOK {
		t.Fatalf("state %s", st)
	}

	s, a = calStore(t, "alice", "wrong-pw")
	c, err = calendar.New(calendar.Config{URL: ts.URL + "/cal/", Account: a})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.TestAccount(ctx, "cal")
	if connectors.ClassOf(err) != connectors.Auth || accounts.NamedIn(err.Error()) != "cal" || strings.Contains(err.Error(), "wrong-pw") {
		t.Fatalf("TestAccount with a wrong password: %v", err)
	}
	if st := calState(t, s); st != accounts.StateNeedsSignIn {
		t.Fatalf("state after a 401: %s", st)
	}
	// a read, as a workflow makes it, names the account the same way
	_, err = c.Do(ctx, connectors.Call{Method: "events", Params: map[string]any{"from": "2026-11-23", "to": "2026-11-24"}})
	if accounts.NamedIn(err.Error()) != "cal" {
		t.Fatalf("events with a wrong password: %v", err)
	}
}

// TestAccountRadicale: the same against Radicale (skips without it, fails
// under CI=true).
func TestAccountRadicale(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	ctx := context.Background()
	_, a := calStore(t, r.User, r.Password)
	c := r.connector(t, calendar.Config{Account: a})
	if _, err := c.TestAccount(ctx, "cal"); err != nil {
		t.Fatalf("TestAccount against Radicale: %v", err)
	}
	s, a := calStore(t, r.User, "not the password")
	c = r.connector(t, calendar.Config{Account: a})
	if _, err := c.TestAccount(ctx, "cal"); accounts.NamedIn(err.Error()) != "cal" {
		t.Fatalf("a wrong password against Radicale: %v", err)
	}
	if st := calState(t, s); st != accounts.StateNeedsSignIn {
		t.Fatalf("state after Radicale's 401: %s", st)
	}
}

// countingTransport counts the requests of each method that reach the
// server.
type countingTransport struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[r.Method]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// TestDiscoveryOnce: given only the server's root, the connector finds the
// calendar through the principal and its home set once; later calls of
// every kind go straight to the calendar.
func TestDiscoveryOnce(t *testing.T) {
	t.Parallel()
	r := startRadicale(t)
	ct := &countingTransport{n: map[string]int{}}
	c := r.connector(t, calendar.Config{URL: r.Base, Client: &http.Client{Transport: ct}})
	day := map[string]any{"from": "2026-11-23T00:00:00Z", "to": "2026-11-24T00:00:00Z"}
	do(t, c, "events", "", day)
	first := ct.count("PROPFIND")
	if first == 0 {
		t.Fatal("no discovery at all")
	}
	do(t, c, "events", "", day)
	created := do(t, c, "create", "once-1", map[string]any{"summary": "x", "start": "2026-11-23T10:00:00Z"}).(map[string]any)
	do(t, c, "event", "", map[string]any{"uid": created["uid"]})
	reconcile(t, c, "create", "once-1", map[string]any{"summary": "x", "start": "2026-11-23T10:00:00Z"})
	if n := ct.count("PROPFIND"); n != first {
		t.Fatalf("%d PROPFINDs after five calls, want the %d of the first discovery only", n, first)
	}
	// another connector of the same process (a dry run's, keep auth
	// test's) does not discover again
	again := r.connector(t, calendar.Config{URL: r.Base, Client: &http.Client{Transport: ct}})
	do(t, again, "events", "", day)
	if n := ct.count("PROPFIND"); n != first {
		t.Fatalf("%d PROPFINDs after a second connector's call, want %d", n, first)
	}
}

// TestDiscoveryAgainAfterA404: a calendar that answers 404 to a query is
// looked for again on the next call, not queried at its old place forever.
func TestDiscoveryAgainAfterA404(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	propfinds, gone := 0, true
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == "PROPFIND":
			propfinds++
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(propfind))
		case gone:
			gone = false
			w.WriteHeader(http.StatusNotFound)
		default:
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.WriteHeader(http.StatusMultiStatus)
			w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"></D:multistatus>`))
		}
	}))
	defer ts.Close()
	c, err := calendar.New(calendar.Config{URL: ts.URL + "/cal/"})
	if err != nil {
		t.Fatal(err)
	}
	day := map[string]any{"from": "2026-11-23T00:00:00Z", "to": "2026-11-24T00:00:00Z"}
	if _, err := c.Do(context.Background(), connectors.Call{Method: "events", Params: day}); err == nil {
		t.Fatal("a 404 to the query did not fail the call")
	}
	do(t, c, "events", "", day)
	mu.Lock()
	defer mu.Unlock()
	if propfinds != 2 {
		t.Fatalf("%d PROPFINDs, want the calendar found again after the 404", propfinds)
	}
}
