package http_test

import (
	"context"
	"crypto/tls"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// sightings records the Authorization each listener saw, by listener.
type sightings struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (s *sightings) handler(name string) nethttp.HandlerFunc {
	return func(w nethttp.ResponseWriter, r *nethttp.Request) {
		s.mu.Lock()
		s.seen[name] = append(s.seen[name], r.Header.Get("Authorization"))
		s.mu.Unlock()
		if to := r.URL.Query().Get("to"); to != "" {
			nethttp.Redirect(w, r, to, nethttp.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}
}

func (s *sightings) last(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.seen[name]
	if len(l) == 0 {
		return "", false
	}
	return l[len(l)-1], true
}

// TestCredentialBinding: an entry's credential goes only to its scheme and
// port. example.com resolves, for this test's client, to local listeners:
// TLS on 443 and 8443, plain http on 80 and 8080.
func TestCredentialBinding(t *testing.T) {
	t.Parallel()
	s := &sightings{seen: map[string][]string{}}
	tls443 := httptest.NewTLSServer(s.handler("https:443"))
	defer tls443.Close()
	tls8443 := httptest.NewTLSServer(s.handler("https:8443"))
	defer tls8443.Close()
	plain80 := httptest.NewServer(s.handler("http:80"))
	defer plain80.Close()
	plain8080 := httptest.NewServer(s.handler("http:8080"))
	defer plain8080.Close()
	addr := map[string]string{
		"example.com:443": tls443.Listener.Addr().String(), "example.com:8443": tls8443.Listener.Addr().String(),
		"example.com:80": plain80.Listener.Addr().String(), "example.com:8080": plain8080.Listener.Addr().String(),
	}
	tr := tls443.Client().Transport.(*nethttp.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: tr.TLSClientConfig.RootCAs} // the test certificate names example.com
	tr.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if to, ok := addr[a]; ok {
			a = to
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
	acct := fixedAccount{name: "api", secret: "bound-token"}
	connector := func(t *testing.T, key string) *keephttp.Connector {
		t.Helper()
		c, err := keephttp.New(keephttp.Config{Client: &nethttp.Client{Transport: tr},
			Hosts: map[string]connectors.Account{key: acct}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	get := func(t *testing.T, c *keephttp.Connector, url, listener string) string {
		t.Helper()
		if _, err := c.Do(context.Background(), connectors.Call{Method: "get", Params: map[string]any{"url": url}}); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		got, ok := s.last(listener)
		if !ok {
			t.Fatalf("GET %s never reached %s", url, listener)
		}
		return got
	}
	const bearer = "Bearer bound-token"
	for _, tc := range []struct {
		name, key, url, listener string
		sent                     bool
	}{
		{"a name-only entry sends it over https on the default port", "example.com", "https://example.com/a", "https:443", true},
		{"a name-only entry does not send it over plain http", "example.com", "http://example.com/a", "http:80", false},
		{"a name-only entry does not send it to another port", "example.com", "https://example.com:8443/a", "https:8443", false},
		{"an entry with a port sends it there over https", "example.com:8443", "https://example.com:8443/a", "https:8443", true},
		{"an entry with a port does not send it over plain http on that port", "example.com:8080", "http://example.com:8080/a", "http:8080", false},
		{"an entry with a port does not send it to the default port", "example.com:8443", "https://example.com/a", "https:443", false},
		{"an entry with scheme http sends it over http", "http://example.com:8080", "http://example.com:8080/a", "http:8080", true},
		{"an entry with scheme http does not send it over https", "http://example.com:8080", "https://example.com:8443/a", "https:8443", false},
		{"an entry with scheme https and no port means 443", "https://example.com", "https://example.com:8443/a", "https:8443", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := get(t, connector(t, tc.key), tc.url, tc.listener)
			if tc.sent && got != bearer {
				t.Errorf("%s got Authorization %q, want the account's", tc.listener, got)
			}
			if !tc.sent && got != "" {
				t.Errorf("%s got Authorization %q, want none", tc.listener, got)
			}
		})
	}

	t.Run("a loopback name-only entry sends it over plain http on port 80 only", func(t *testing.T) {
		lp := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { w.Write([]byte("ok")) })
		c := connector(t, "127.0.0.1")
		if _, err := c.Do(context.Background(), connectors.Call{Method: "get", Params: map[string]any{"url": lp.URL}}); err != nil {
			t.Fatal(err)
		}
		if r, _ := lp.lastRequest(); r.Header.Get("Authorization") != "" {
			t.Errorf("a listener on another port got %q", r.Header.Get("Authorization"))
		}
		c = connector(t, strings.TrimPrefix(lp.URL, "http://"))
		if _, err := c.Do(context.Background(), connectors.Call{Method: "get", Params: map[string]any{"url": lp.URL}}); err != nil {
			t.Fatal(err)
		}
		if r, _ := lp.lastRequest(); r.Header.Get("Authorization") != bearer {
			t.Errorf("loopback host:port over http got %q, want the account's", r.Header.Get("Authorization"))
		}
	})

	t.Run("a redirect to plain http on the same host drops it", func(t *testing.T) {
		got := get(t, connector(t, "example.com"), "https://example.com/r?to=http://example.com/plain", "http:80")
		if got != "" {
			t.Errorf("the redirect target over http got %q", got)
		}
		if first, _ := s.last("https:443"); first != bearer {
			t.Errorf("the bound https host got %q", first)
		}
	})

	t.Run("a malformed entry is refused, named", func(t *testing.T) {
		for _, key := range []string{"ftp://example.com", "https://example.com/path", "https://user@example.com", ""} {
			_, err := keephttp.New(keephttp.Config{Hosts: map[string]connectors.Account{key: acct}})
			if err == nil || !strings.Contains(err.Error(), "host \""+key+"\"") {
				t.Errorf("New with host %q: err = %v, want it named", key, err)
			}
		}
	})
}

// fixedAccount is a token account holding one secret.
type fixedAccount struct{ name, secret string }

func (a fixedAccount) Name() string                           { return a.name }
func (a fixedAccount) Kind() string                           { return "token" }
func (a fixedAccount) Username() string                       { return "" }
func (a fixedAccount) Secret(context.Context) (string, error) { return a.secret, nil }
func (a fixedAccount) Invalidate()                            {}
