package accounts

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"keep/connectors/accounts/oauthtest"
	"keep/engine/enginetest/kit"
)

type bundle struct {
	srv   *oauthtest.Server
	store *Store
	path  string
	clock *kit.Clock
}

func oauthDef(srv *oauthtest.Server) Def {
	return Def{Name: "acme", Kind: OAuth2, ClientID: srv.ClientID, AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL(),
		DeviceURL: srv.DeviceURL(), Scopes: []string{"https://mail.example.com/"}}
}

func setup(t *testing.T, more ...Def) *bundle {
	t.Helper()
	srv := oauthtest.New(t)
	b := &bundle{srv: srv, path: filepath.Join(t.TempDir(), "credentials.json"), clock: kit.NewClock(time.Now())}
	b.store = b.open(t, append([]Def{oauthDef(srv)}, more...)...)
	return b
}

// open returns another store on the same file, as another process has.
func (b *bundle) open(t *testing.T, defs ...Def) *Store {
	t.Helper()
	if len(defs) == 0 {
		defs = []Def{oauthDef(b.srv)}
	}
	s, err := Open(defs, Opts{Path: b.path, Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func secretReader(secret string) func(string) (string, error) {
	return func(string) (string, error) { return secret, nil }
}

// loginLoopback signs in to acme, the provider's Browser playing the user.
func (b *bundle) loginLoopback(t *testing.T, s *Store) {
	t.Helper()
	browser := b.srv.Browser()
	done := make(chan error, 1)
	go func() {
		done <- s.Login(context.Background(), "acme", LoginOpts{Out: browser, ReadSecret: secretReader(b.srv.ClientSecret)})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("login: %v\n%s", err, browser.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("login did not end:\n%s", browser.String())
	}
	if status := kit.Wait(t, browser.Visited, kit.Timeout); status != http.StatusOK {
		t.Fatalf("the browser landed on %d", status)
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
