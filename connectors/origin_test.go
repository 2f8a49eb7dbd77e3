package connectors_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
)

type keyAccount struct{}

func (keyAccount) Name() string                           { return "api" }
func (keyAccount) Kind() string                           { return "token" }
func (keyAccount) Username() string                       { return "" }
func (keyAccount) Secret(context.Context) (string, error) { return "held-key", nil }
func (keyAccount) Invalidate()                            {}

// TestTransportKeepsTheCredentialAtItsOrigin: a redirect to another port
// or host goes without the credential, the same origin keeps it, and plain
// http to another machine is refused with nothing sent.
func TestTransportKeepsTheCredentialAtItsOrigin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]string{}
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got[name+r.URL.Path] = r.Header.Get("Authorization")
			mu.Unlock()
		}
	}
	other := httptest.NewServer(record("other"))
	t.Cleanup(other.Close)
	var first *httptest.Server
	first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/landed", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/stay", http.StatusFound)
		default:
			record("first")(w, r)
		}
	}))
	t.Cleanup(first.Close)
	tr := connectors.Transport{Client: &http.Client{}, Account: keyAccount{}}
	for _, path := range []string{"/away", "/here"} {
		req, _ := http.NewRequest(http.MethodGet, first.URL+path, nil)
		resp, _, err := tr.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if a, ok := got["other/landed"]; !ok || a != "" {
		t.Errorf("the other port got Authorization %q (reached: %v)", a, ok)
	}
	if got["first/stay"] != "Bearer held-key" {
		t.Errorf("a redirect on the same origin lost the credential: %q", got["first/stay"])
	}

	req, _ := http.NewRequest(http.MethodGet, "http://api.example.com/x", nil)
	_, sent, err := tr.Do(req)
	var ce *connectors.Error
	if !errors.As(err, &ce) || ce.Class != connectors.Permission || sent || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("plain http to another machine: sent=%v err=%v", sent, err)
	}
	if _, err := connectors.NewSigned(http.DefaultTransport, keyAccount{}, "http://api.example.com/mcp"); err == nil {
		t.Error("NewSigned accepted plain http to another machine")
	}
	if _, err := connectors.NewSigned(http.DefaultTransport, keyAccount{}, "http://[::1]:8080/mcp"); err != nil {
		t.Errorf("NewSigned refused loopback: %v", err)
	}
}
