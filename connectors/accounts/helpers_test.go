package accounts

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"keep/connectors/accounts/oauthtest"
)

// clock is a settable now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type bundle struct {
	srv   *oauthtest.Server
	store *Store
	path  string
	clock *clock
}

func oauthDef(srv *oauthtest.Server) Def {
	return Def{Name: "acme", Kind: OAuth2, ClientID: srv.ClientID, AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL(),
		DeviceURL: srv.DeviceURL(), Scopes: []string{"https://mail.example.com/"}}
}

func setup(t *testing.T, more ...Def) *bundle {
	t.Helper()
	srv := oauthtest.New(t)
	b := &bundle{srv: srv, path: filepath.Join(t.TempDir(), "credentials.json"), clock: &clock{t: time.Now()}}
	b.store = b.open(t, append([]Def{oauthDef(srv)}, more...)...)
	return b
}

// open returns another store on the same file, as another process has.
func (b *bundle) open(t *testing.T, defs ...Def) *Store {
	t.Helper()
	if len(defs) == 0 {
		defs = []Def{oauthDef(b.srv)}
	}
	s, err := Open(defs, Opts{Path: b.path, Now: b.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// urlWriter records what a sign-in prints and hands over the first
// address it shows.
type urlWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	urls chan string
	re   *regexp.Regexp
}

func newURLWriter(pattern string) *urlWriter {
	return &urlWriter{urls: make(chan string, 1), re: regexp.MustCompile(pattern)}
}

func (w *urlWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindStringSubmatch(w.buf.String()); m != nil {
		select {
		case w.urls <- m[len(m)-1]:
		default:
		}
	}
	return len(p), nil
}

func (w *urlWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

func secretReader(secret string) func(string) (string, error) {
	return func(string) (string, error) { return secret, nil }
}

// loginLoopback signs in to acme, playing the browser.
func (b *bundle) loginLoopback(t *testing.T, s *Store) {
	t.Helper()
	out := newURLWriter(`(?m)^  (http://\S+/authorize\S+)$`)
	done := make(chan error, 1)
	go func() {
		done <- s.Login(context.Background(), "acme", LoginOpts{Out: out, ReadSecret: secretReader(b.srv.ClientSecret)})
	}()
	select {
	case u := <-out.urls:
		resp, err := http.Get(u) // the provider redirects to keep's loopback listener
		if err != nil {
			t.Fatalf("the browser's visit failed: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the browser landed on %s", resp.Status)
		}
	case err := <-done:
		t.Fatalf("login ended before printing an address: %v\n%s", err, out.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("no address printed:\n%s", out.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("login: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("login did not end after the redirect")
	}
}

func readCreds(t *testing.T, path string) *file {
	t.Helper()
	f, _, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
