package accounts

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"keep/connectors"
	"keep/engine/enginetest/kit"
)

func TestLoopbackLogin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	if m := mode(t, b.path); m != 0o600 {
		t.Errorf("credentials.json has mode %04o, want 0600", m)
	}
	e := readCreds(t, b.path).Accounts["acme"]
	if e == nil || e.RefreshToken == "" || e.ClientSecret != b.srv.ClientSecret {
		t.Fatalf("stored entry = %+v, want the tokens and the client secret", e)
	}
	a, _ := b.store.Account("acme")
	tok, err := a.Secret(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !b.srv.Active(tok) || b.srv.Scope(tok) != "https://mail.example.com/" {
		t.Errorf("Secret = a token the provider does not know for the scope (scope %q)", b.srv.Scope(tok))
	}
}

// The fake provider checks PKCE the way a real one does, so the loopback
// test above proves keep sends the right verifier: here the same exchange
// with a wrong one fails.
func TestTokenEndpointChecksPKCE(t *testing.T) {
	t.Parallel()
	b := setup(t)
	conf := oauthDef(b.srv).oauthConfig(b.srv.ClientSecret, "http://127.0.0.1:9/")
	verifier := oauth2.GenerateVerifier()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	code := loc.Query().Get("code")
	if code == "" {
		t.Fatalf("no code in the redirect %q", resp.Header.Get("Location"))
	}
	_, err = conf.Exchange(context.Background(), code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("exchange with a wrong verifier = %v, want invalid_grant", err)
	}
}

func TestDeviceLogin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	browser := b.srv.Browser() // the user, on their phone, at the address with the code
	done := make(chan error, 1)
	go func() {
		done <- b.store.Login(context.Background(), "acme", LoginOpts{Out: browser, Device: true, ReadSecret: secretReader(b.srv.ClientSecret)})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, browser.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the device flow did not end:\n%s", browser.String())
	}
	if !strings.Contains(browser.String(), "enter the code") {
		t.Errorf("no code shown:\n%s", browser.String())
	}
	a, _ := b.store.Account("acme")
	tok, err := a.Secret(context.Background())
	if err != nil || !b.srv.Active(tok) {
		t.Fatalf("Secret after device sign-in = %q, %v", tok, err)
	}
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	t.Run("a token about to expire is refreshed and the new one persisted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.srv.Rotate = true
		b.loginLoopback(t, b.store)
		a, _ := b.store.Account("acme")
		first, _ := a.Secret(context.Background())
		before := readCreds(t, b.path).Accounts["acme"]
		b.clock.Advance(time.Hour - time.Minute) // inside the refresh window
		second, err := a.Secret(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if second == first || !b.srv.Active(second) || b.srv.Refreshes() != 1 {
			t.Fatalf("no refresh: %q then %q, %d refreshes", first, second, b.srv.Refreshes())
		}
		after := readCreds(t, b.path).Accounts["acme"]
		if after.AccessToken != second || after.RefreshToken == before.RefreshToken || after.RefreshToken == "" {
			t.Errorf("the rotated tokens were not persisted: %+v", after)
		}
		// another process reading the file gets the new token, no refresh
		other, _ := b.open(t).Account("acme")
		if got, _ := other.Secret(context.Background()); got != second || b.srv.Refreshes() != 1 {
			t.Errorf("another store got %q (%d refreshes), want the persisted %q", got, b.srv.Refreshes(), second)
		}
	})
	t.Run("a refused token is refreshed once after Invalidate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.loginLoopback(t, b.store)
		a, _ := b.store.Account("acme")
		first, _ := a.Secret(context.Background())
		b.srv.ExpireAccess()
		a.Invalidate()
		second, err := a.Secret(context.Background())
		if err != nil || second == first || !b.srv.Active(second) {
			t.Fatalf("after Invalidate: %q, %v", second, err)
		}
		if third, _ := a.Secret(context.Background()); third != second || b.srv.Refreshes() != 1 {
			t.Errorf("refreshed again without cause: %d refreshes", b.srv.Refreshes())
		}
	})
	t.Run("a provider that is down is transient", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.loginLoopback(t, b.store)
		a, _ := b.store.Account("acme")
		b.srv.FailRefreshes(1)
		a.Invalidate()
		_, err := a.Secret(context.Background())
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("err = %v, want transient", err)
		}
		if _, err := a.Secret(context.Background()); err != nil {
			t.Fatalf("the next try: %v", err)
		}
	})
}

func TestRevokedRefreshNeedsSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	a, _ := b.store.Account("acme")
	b.srv.RevokeAll()
	a.Invalidate()
	_, err := a.Secret(context.Background())
	if connectors.ClassOf(err) != connectors.Auth || AccountOf(err) != "acme" {
		t.Fatalf("err = %v, want an auth failure of acme", err)
	}
	if !strings.Contains(err.Error(), "keep auth login acme") || NamedIn(err.Error()) != "acme" {
		t.Errorf("the error %q does not say how to fix it", err)
	}
	st, _ := b.store.Statuses()
	if st[0].State != StateNeedsSignIn {
		t.Errorf("status = %+v, want needs sign-in", st[0])
	}
	// nothing asks the provider again until the user signs in
	refreshes := b.srv.Refreshes()
	if _, err := a.Secret(context.Background()); connectors.ClassOf(err) != connectors.Auth {
		t.Fatalf("second try = %v", err)
	}
	if b.srv.Refreshes() != refreshes {
		t.Error("a refused grant was tried again")
	}
	b.loginLoopback(t, b.store)
	if tok, err := a.Secret(context.Background()); err != nil || !b.srv.Active(tok) {
		t.Fatalf("after signing in again: %q, %v", tok, err)
	}
}

func TestSecretAccounts(t *testing.T) {
	t.Parallel()
	b := setup(t, Def{Name: "mail", Kind: Password, Username: "me@example.com"}, Def{Name: "api", Kind: Token})
	a, err := b.store.Account("mail")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Secret(context.Background()); connectors.ClassOf(err) != connectors.Auth {
		t.Fatalf("before login: %v, want auth", err)
	}
	if err := b.store.Login(context.Background(), "mail", LoginOpts{ReadSecret: secretReader("hunter2\n")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Secret(context.Background()); got != "hunter2" || a.Username() != "me@example.com" || a.Kind() != Password {
		t.Fatalf("Secret = %q", got)
	}
	if err := b.store.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("")}); err == nil {
		t.Error("an empty token was stored")
	}
	if _, err := b.store.Logout(context.Background(), "mail"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Secret(context.Background()); connectors.ClassOf(err) != connectors.Auth {
		t.Fatalf("after logout: %v, want auth", err)
	}
	if _, err := b.store.Account("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown account: %v", err)
	}
}

func TestCredentialsFileMode(t *testing.T) {
	t.Parallel()
	b := setup(t, Def{Name: "api", Kind: Token})
	if err := b.store.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("tok-1")}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(b.path, 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := b.open(t, Def{Name: "api", Kind: Token}).Account("api")
	_, err := a.Secret(context.Background())
	if connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), b.path) || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("err = %v, want a refusal naming the file and its mode", err)
	}
	if strings.Contains(err.Error(), "tok-1") {
		t.Error("the error holds the secret")
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	d := Def{Name: "g", Kind: OAuth2, Provider: "google", ClientID: "x", Scopes: []string{"gmail", "sheets", "calendar"}}
	got, err := d.scopes()
	want := []string{"https://mail.google.com/", "https://www.googleapis.com/auth/spreadsheets", "https://www.googleapis.com/auth/calendar", "openid", "email"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("scopes = %v, %v", got, err)
	}
	d.Scopes = []string{"mail"}
	if _, err := Open([]Def{d}, Opts{Path: "x"}); err == nil || !strings.Contains(err.Error(), `"mail"`) {
		t.Errorf("a bad short name: %v", err)
	}
	ms := Def{Name: "m", Kind: OAuth2, Provider: "microsoft", ClientID: "x", Scopes: []string{"mail"}}
	if got, _ := ms.scopes(); !strings.Contains(strings.Join(got, " "), "offline_access") {
		t.Errorf("microsoft scopes %v lack offline_access", got)
	}
	if _, err := Open([]Def{{Name: "my mail", Kind: Token}}, Opts{Path: "x"}); err == nil || !strings.Contains(err.Error(), "accounts.my mail") {
		t.Errorf("a name with a space: %v", err)
	}
	if _, err := Open([]Def{{Name: "o", Kind: OAuth2, ClientID: "x"}}, Opts{Path: "x"}); err == nil || !strings.Contains(err.Error(), "auth_url") {
		t.Errorf("no endpoints: %v", err)
	}
}

// The file on disk is always the old one or the new one: a write stopped
// where a crash would stop it leaves the old file whole, and a reader
// racing many refreshes never sees a partial file.
func TestAtomicCredentials(t *testing.T) {
	b := setup(t)
	b.srv.Rotate = true
	b.loginLoopback(t, b.store)
	old, _ := os.ReadFile(b.path)
	beforeRename = func() error { return errors.New("crash") }
	a, _ := b.store.Account("acme")
	a.Invalidate()
	_, err := a.Secret(context.Background())
	beforeRename = nil
	if err == nil {
		t.Fatal("the stopped write did not fail the refresh")
	}
	if now, _ := os.ReadFile(b.path); string(now) != string(old) {
		t.Fatal("a write stopped before the rename changed the file")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(b.path), ".credentials-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// the refresh token the stopped write lost is still the old one on
	// disk; the provider rotated it, so sign in again for the race below
	b.loginLoopback(t, b.store)
	issued := sync.Map{}
	issued.Store(readCreds(t, b.path).Accounts["acme"].RefreshToken, true)
	stop := make(chan struct{})
	bad := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f, _, err := readFile(b.path)
			if err != nil {
				select {
				case bad <- err.Error():
				default:
				}
				return
			}
			if e := f.Accounts["acme"]; e == nil || e.RefreshToken == "" {
				select {
				case bad <- "an entry without its refresh token":
				default:
				}
				return
			}
		}
	}()
	for range 30 {
		a.Invalidate()
		if _, err := a.Secret(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	kit.WaitGroup(t, &wg, kit.Timeout)
	select {
	case why := <-bad:
		t.Fatalf("a reader saw a torn file: %s", why)
	default:
	}
}

func TestWatchSeesAnotherProcessSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, Def{Name: "api", Kind: Token})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 4)
	if err := b.store.Watch(ctx, func(names []string) { got <- names }); err != nil {
		t.Fatal(err)
	}
	other := b.open(t, oauthDef(b.srv), Def{Name: "api", Kind: Token})
	if err := other.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("tok")}); err != nil {
		t.Fatal(err)
	}
	select {
	case names := <-got:
		if len(names) != 1 || names[0] != "api" {
			t.Fatalf("signed in = %v, want [api]", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not see the sign-in")
	}
	a, _ := b.store.Account("api")
	if s, err := a.Secret(context.Background()); s != "tok" {
		t.Errorf("the watching store does not see the new secret: %q %v", s, err)
	}
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t, Def{Name: "api", Kind: Token})
	st, err := b.store.Statuses()
	if err != nil || len(st) != 2 || st[0].State != StateNeedsSignIn || !strings.Contains(st[0].Detail, "keep auth login acme") {
		t.Fatalf("before sign-in: %+v %v", st, err)
	}
	b.loginLoopback(t, b.store)
	st, _ = b.store.Statuses()
	if st[0].State != StateOK {
		t.Errorf("after sign-in: %+v", st[0])
	}
	// a token account is fine; an oauth2 token without a refresh token that
	// ends within a day expires soon
	b.store.mu.Lock()
	err = b.store.update(func(f *file) error {
		e := f.Accounts["acme"]
		e.RefreshToken, e.Expiry = "", b.clock.Now().Add(time.Hour)
		return nil
	})
	b.store.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	st, _ = b.store.Statuses()
	if st[0].State != StateExpiresSoon {
		t.Errorf("without a refresh token: %+v", st[0])
	}
}

func TestLogoutRevokes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := oauthDef(b.srv)
	d.RevokeURL = b.srv.RevokeURL()
	s := b.open(t, d)
	b.loginLoopback(t, s)
	rt := readCreds(t, b.path).Accounts["acme"].RefreshToken
	if !b.srv.RefreshValid(rt) {
		t.Fatal("the fresh refresh token is not valid")
	}
	warning, err := s.Logout(context.Background(), "acme")
	if err != nil || warning != "" {
		t.Fatalf("logout = %q, %v", warning, err)
	}
	if b.srv.RefreshValid(rt) {
		t.Error("the provider still honours the refresh token")
	}
	if readCreds(t, b.path).Accounts["acme"] != nil {
		t.Error("the secrets are still stored")
	}
	// without a revocation endpoint, the user is told to revoke by hand
	b.loginLoopback(t, b.store)
	if warning, err := b.store.Logout(context.Background(), "acme"); err != nil || !strings.Contains(warning, "revoke_url") {
		t.Errorf("logout without revoke_url = %q, %v", warning, err)
	}
}
