package http_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// TestAllowHostsMatchEverySpellingOfAName: an allow_hosts entry and a
// request's host were compared as written, lower-cased. A trailing dot, a
// name in Unicode against its punycode, or a port the URL leaves to its
// scheme kept out a host the entry names; canonical on both sides, an
// entry matches the hosts a person means, and no spelling of another
// host gets past it.
func TestAllowHostsMatchEverySpellingOfAName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		entry, url string
		ok         bool
	}{
		{"Example.COM", "https://example.com/", true},
		{"example.com.", "https://example.com/", true},
		{"example.com", "https://EXAMPLE.com./x", true},
		{"bücher.example", "https://xn--bcher-kva.example/", true},
		{"xn--bcher-kva.example", "https://BÜCHER.example/", true},
		{"xn--bcher-kva.example", "https://ｂüｃｈｅｒ．example/", true}, // net/http dials the same name
		{"*.Bücher.Example.", "https://api.xn--bcher-kva.example./x", true},
		{"example.com:443", "https://example.com/", true},
		{"example.com:80", "http://Example.com./", true},
		{"[::1]:8080", "http://[::1]:8080/", true},
		{"::1", "http://[0:0::1]/", true},

		{"example.com", "https://EVIL.com./", false},
		{"example.com", "https://example.com.evil.com/", false},
		{"example.com.", "https://example.com.evil.com./", false},
		{"example.com:443", "http://example.com/", false},
		{"example.com:443", "https://example.com:8443/", false},
		{"*.example.com", "https://EXAMPLE.com./", false},
		{"*.example.com", "https://evilexample.com./", false},
		{"bücher.example", "https://bucher.example/", false},
	} {
		t.Run(tc.entry+" "+tc.url, func(t *testing.T) {
			t.Parallel()
			srv, client := everyName(t)
			c := connector(t, keephttp.Config{AllowHosts: []string{tc.entry}, Client: client})
			_, err := get(context.Background(), c, map[string]any{"url": tc.url})
			if tc.ok && (err != nil || srv.last() == "") {
				t.Fatalf("refused (%v), want it allowed and sent", err)
			}
			if !tc.ok && (connectors.ClassOf(err) != connectors.Permission || srv.last() != "") {
				t.Fatalf("allowed (%v), want a permission error with nothing sent", err)
			}
		})
	}
}

// TestMalformedAllowHostsEntriesAreRefused: an entry that names no host
// matched nothing, silently, and a person read their list as holding it.
func TestMalformedAllowHostsEntriesAreRefused(t *testing.T) {
	t.Parallel()
	for _, entry := range []string{
		"https://example.com", "example.com/path", "user@example.com", "example.com:http", "example.com:0",
		"example.com:70000", "example.com:", "exa*mple.com", "*", "*.", ":8080", "ex\u200dample.com", "*.::1", "[::1]:",
	} {
		_, err := keephttp.New(keephttp.Config{AllowHosts: []string{entry}})
		if err == nil || !strings.Contains(err.Error(), "allow_hosts entry "+strconv.Quote(entry)) {
			t.Errorf("New with allow_hosts %q: err = %v, want it refused, named", entry, err)
		}
	}
}

// TestHostsEntriesMatchEverySpellingOfAName: a [connectors.http.hosts]
// entry is compared the same way, so the account's credential goes to the
// host it names however a script spells it, and a script cannot put its
// own Authorization on that host by spelling it another way.
func TestHostsEntriesMatchEverySpellingOfAName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, url string
		held     bool
	}{
		{"Bücher.Example.", "https://xn--bcher-kva.example/x", true},
		{"api.example.com", "https://API.example.com./x", true},
		{"api.example.com:443", "https://api.example.com/x", true},
		{"api.example.com", "https://api.example.com.evil.com/x", false},
	} {
		t.Run(tc.key+" "+tc.url, func(t *testing.T) {
			t.Parallel()
			rec, client := everyName(t)
			c := connector(t, keephttp.Config{Client: client,
				Hosts: map[string]connectors.Account{tc.key: fixedAccount{name: "api", secret: "held-tok"}}})
			if _, err := get(context.Background(), c, map[string]any{"url": tc.url}); err != nil {
				t.Fatal(err)
			}
			if got := rec.lastAuth(); (got == "Bearer held-tok") != tc.held {
				t.Fatalf("the request carried Authorization %q; want the held credential: %v", got, tc.held)
			}
			_, err := get(context.Background(), c, map[string]any{"url": tc.url, "headers": map[string]any{"Authorization": "Bearer mine"}})
			if refused := connectors.ClassOf(err) == connectors.Logic; refused != tc.held {
				t.Fatalf("the script's own Authorization: %v; want it refused: %v", err, tc.held)
			}
		})
	}
}

// seen records what reached a server: the Host and Authorization of the
// last request.
type seen struct {
	mu         sync.Mutex
	host, auth string
}

func (s *seen) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

func (s *seen) lastAuth() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}

// everyName starts an https and a plain http server and returns a client
// that reaches one of them (by the URL's scheme) whatever host and port
// a URL names, so a test can spell names that do not resolve.
func everyName(t *testing.T) (*seen, *nethttp.Client) {
	t.Helper()
	s := &seen{}
	h := nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		s.mu.Lock()
		s.host, s.auth = r.Host, r.Header.Get("Authorization")
		s.mu.Unlock()
		io.WriteString(w, "ok")
	})
	secure, plain := httptest.NewTLSServer(h), httptest.NewServer(h)
	t.Cleanup(secure.Close)
	t.Cleanup(plain.Close)
	var d net.Dialer
	// the names are made up: no certificate can be for them
	tlsConfig := &tls.Config{InsecureSkipVerify: true}
	return s, &nethttp.Client{Transport: &nethttp.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", plain.Listener.Addr().String())
		},
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&tls.Dialer{Config: tlsConfig}).DialContext(ctx, "tcp", secure.Listener.Addr().String())
		},
	}}
}
