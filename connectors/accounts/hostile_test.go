package accounts

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/enginetest/kit"
)

// A daemon and keep auth test (two processes, two stores on one file)
// both find the token expired at once. With a provider that rotates
// refresh tokens and treats a rotated-out one presented again as theft
// (it ends the grant), two refreshes with the same refresh token cost
// the account its sign-in. One refresh is made; everyone gets its token.
func TestConcurrentRefreshIsOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Rotate, b.srv.ReuseRevokes = true, true
	b.loginLoopback(t, b.store)
	b.srv.RefreshDelay = 300 * time.Millisecond // both ask before either is answered
	stores := []*Store{b.store, b.store, b.open(t), b.open(t)}
	b.clock.Advance(time.Hour - time.Minute) // inside the refresh window

	var wg sync.WaitGroup
	toks := make([]string, len(stores))
	errs := make([]error, len(stores))
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, _ := s.Account("acme")
			toks[i], errs[i] = a.Secret(context.Background())
		}()
	}
	kit.WaitGroup(t, &wg, 20*time.Second)
	for i := range stores {
		if errs[i] != nil || !b.srv.Active(toks[i]) {
			t.Errorf("caller %d: %q, %v", i, toks[i], errs[i])
		}
	}
	if n := b.srv.RefreshesStarted(); n != 1 {
		t.Errorf("%d refreshes asked for, want 1", n)
	}
	if rt := readCreds(t, b.path).Accounts["acme"].RefreshToken; !b.srv.RefreshValid(rt) {
		t.Error("the refresh token on disk is no longer honoured: the grant was lost")
	}
}

// A token endpoint that never answers holds up the refresh of its own
// account, not the host: the secrets of other accounts, the list of held
// secrets every log line is redacted with, and keep auth list go on.
func TestHungProviderHoldsUpOnlyItsAccount(t *testing.T) {
	t.Parallel()
	b := setup(t, Def{Name: "api", Kind: Token})
	b.loginLoopback(t, b.store)
	if err := b.store.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("api-token")}); err != nil {
		t.Fatal(err)
	}
	b.srv.RefreshDelay = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acme, _ := b.store.Account("acme")
	acme.Invalidate()
	go acme.Secret(ctx)
	kit.Until(t, kit.Timeout, "the refresh reaches the provider", func() bool { return b.srv.RefreshesStarted() == 1 })

	done := make(chan string, 1)
	go func() {
		api, _ := b.store.Account("api")
		tok, err := api.Secret(context.Background())
		held := len(b.store.Held())
		_, serr := b.store.Statuses()
		done <- fmt.Sprintf("%s %v %d %v", tok, err, held, serr)
	}()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "api-token <nil>") {
			t.Errorf("api: %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a hung token endpoint of one account holds up every other account, Held and Statuses")
	}
}

// recorder is a server that notes every form posted to it.
func recorder(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(body)+" "+r.URL.RawQuery)
		mu.Unlock()
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// A token (or revocation) endpoint that answers 307 to another origin
// would have net/http post the same form there: the client secret and
// the refresh token. keep does not follow it.
func TestTokenEndpointRedirectElsewhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	other, posted := recorder(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	e := readCreds(t, b.path).Accounts["acme"]

	d := oauthDef(b.srv)
	d.TokenURL, d.RevokeURL = front.URL+"/token", front.URL+"/revoke"
	s := b.open(t, d)
	a, _ := s.Account("acme")
	a.Invalidate()
	_, err := a.Secret(context.Background())
	if err == nil {
		t.Error("a refresh redirected elsewhere succeeded")
	}
	if w, err := s.Logout(context.Background(), "acme"); err != nil || w == "" {
		t.Errorf("logout = %q, %v; want a warning that revoking failed", w, err)
	}
	for _, p := range posted() {
		if strings.Contains(p, e.RefreshToken) || strings.Contains(p, b.srv.ClientSecret) {
			t.Errorf("another host was sent the secrets: %s", p)
		}
	}
}

// A provider's answer may echo what it was sent, in the status line, the
// error code or its description: an error keep returns (which becomes a
// block reason, a ledger row, an attention item) holds none of it.
func TestProviderEchoesSecretsInErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	e := readCreds(t, b.path).Accounts["acme"]
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := r.PostForm
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		body := fmt.Sprintf(`{"error":"bad %s","error_description":"%s %s %s"}`, f.Get("client_secret"), f.Get("refresh_token"), f.Get("code"), f.Get("code_verifier"))
		fmt.Fprintf(buf, "HTTP/1.1 400 %s %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			f.Get("refresh_token"), f.Get("client_secret"), len(body), body)
		buf.Flush()
	}))
	t.Cleanup(echo.Close)
	d := oauthDef(b.srv)
	d.TokenURL = echo.URL + "/token"
	s := b.open(t, d)
	a, _ := s.Account("acme")
	a.Invalidate()
	_, err := a.Secret(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	for _, secret := range []string{e.RefreshToken, e.ClientSecret} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the refresh error holds a secret: %v", err)
		}
	}

	// the sign-in's exchange: the code, the verifier and the client secret
	browser := b.srv.Browser()
	err = s.Login(context.Background(), "acme", LoginOpts{Out: browser, ReadSecret: secretReader(b.srv.ClientSecret)})
	if err == nil {
		t.Fatal("the sign-in succeeded")
	}
	if strings.Contains(err.Error(), b.srv.ClientSecret) || strings.Contains(err.Error(), e.RefreshToken) {
		t.Errorf("the sign-in error holds a secret: %v", err)
	}
	// the code and the verifier are random hex of 32 or more characters
	for _, w := range strings.Fields(err.Error()) {
		if len(w) >= 32 && strings.Trim(w, "0123456789abcdefABCDEF-_") == "" {
			t.Errorf("the sign-in error holds what looks like the code or verifier %q: %v", w, err)
		}
	}
}

// A year on, the person rotates the OAuth client's secret (or moves to
// a new client) at the provider: refreshing is refused, keep says to
// run keep auth login, and that sign-in must ask for the new secret
// rather than try the stored one again and fail for ever.
func TestClientSecretChangedAtTheProvider(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	b.srv.ClientSecret = "rotated-client-secret"
	a, _ := b.store.Account("acme")
	a.Invalidate()
	if _, err := a.Secret(context.Background()); AccountOf(err) != "acme" {
		t.Fatalf("refresh with the old client secret = %v, want a sign-in failure", err)
	}
	asked := false
	browser := b.srv.Browser()
	err := b.store.Login(context.Background(), "acme", LoginOpts{Out: browser, ReadSecret: func(string) (string, error) {
		asked = true
		return "rotated-client-secret", nil
	}})
	if err != nil || !asked {
		t.Fatalf("sign-in after the client secret changed: %v (asked for it: %v)", err, asked)
	}
	if tok, err := a.Secret(context.Background()); err != nil || !b.srv.Active(tok) {
		t.Fatalf("after signing in: %q, %v", tok, err)
	}

	// a new client in the config: the old client's secret is not its
	b.srv.ClientID, b.srv.ClientSecret = "keep-test-client-2", "second-client-secret"
	d := oauthDef(b.srv)
	s := b.open(t, d)
	asked = false
	browser = b.srv.Browser()
	err = s.Login(context.Background(), "acme", LoginOpts{Out: browser, ReadSecret: func(string) (string, error) {
		asked = true
		return "second-client-secret", nil
	}})
	if err != nil || !asked {
		t.Fatalf("sign-in with a new client_id: %v (asked for its secret: %v)", err, asked)
	}
}

// credentials.json may be a symlink (to an encrypted volume, a dotfiles
// folder): a write goes to the file it names and leaves the link, so the
// next reader does not find the old tokens the provider rotated away.
func TestCredentialsSymlink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Rotate = true
	realDir := t.TempDir()
	target := filepath.Join(realDir, "creds.json")
	if err := os.Symlink(target, b.path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 4)
	if err := b.store.Watch(ctx, func(names []string) { got <- names }); err != nil {
		t.Fatal(err)
	}
	b.loginLoopback(t, b.open(t)) // keep auth login, in its own process
	if names, ok := kit.WaitRecv(t, got, 10*time.Second); !ok || len(names) != 1 || names[0] != "acme" {
		t.Fatalf("the watcher saw %v (%v), want the sign-in to acme", names, ok)
	}
	a, _ := b.store.Account("acme")
	a.Invalidate()
	tok, err := a.Secret(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(b.path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink at %s was replaced (%v)", b.path, err)
	}
	if e := readCreds(t, target).Accounts["acme"]; e == nil || e.AccessToken != tok || !b.srv.RefreshValid(e.RefreshToken) {
		t.Fatalf("the file the link names holds %+v, want the refreshed tokens", e)
	}
	if m := mode(t, target); m != 0o600 {
		t.Errorf("mode %04o", m)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(b.path), ".credentials-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A sign-in (keep auth login, perhaps to put right a sign-in to the wrong
// user) or a sign-out made while the daemon's refresh is on its way is
// not undone when the refresh's answer comes back: the old grant's
// tokens are not written over the new sign-in, nor back after keep auth
// logout, whose revocation must reach the refresh token keep last held.
func TestSignInAndOutDuringARefresh(t *testing.T) {
	t.Parallel()
	for _, logout := range []bool{false, true} {
		t.Run(fmt.Sprintf("logout=%v", logout), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.srv.Rotate = true
			d := oauthDef(b.srv)
			d.RevokeURL = b.srv.RevokeURL()
			daemon, cli := b.open(t, d), b.open(t, d)
			b.loginLoopback(t, cli)
			b.srv.RefreshDelay = 500 * time.Millisecond
			a, _ := daemon.Account("acme")
			a.Invalidate()
			refreshed := make(chan error, 1)
			go func() {
				_, err := a.Secret(context.Background())
				refreshed <- err
			}()
			kit.Until(t, kit.Timeout, "the refresh reaches the provider", func() bool { return b.srv.RefreshesStarted() == 1 })
			b.srv.RefreshDelay = 0
			var signedIn *entry
			if logout {
				if w, err := cli.Logout(context.Background(), "acme"); err != nil || w != "" {
					t.Fatalf("logout = %q, %v", w, err)
				}
			} else {
				b.loginLoopback(t, cli)
				signedIn = readCreds(t, b.path).Accounts["acme"]
			}
			kit.Wait(t, refreshed, kit.Timeout)
			now := readCreds(t, b.path).Accounts["acme"]
			if logout {
				if now != nil {
					t.Fatalf("after keep auth logout the file holds %+v", now)
				}
				if b.srv.Grants() != 0 {
					t.Fatalf("after keep auth logout the provider still honours %d refresh tokens", b.srv.Grants())
				}
				return
			}
			if now == nil || now.AccessToken != signedIn.AccessToken || now.RefreshToken != signedIn.RefreshToken {
				t.Fatalf("the refresh wrote over the new sign-in: %+v, signed in %+v", now, signedIn)
			}
		})
	}
}

// An oauth2 account whose token endpoint is plain http on another
// machine would send the client secret, the code and the refresh token
// across the network in clear, as no connector sends a credential. The
// config is refused before anything is sent.
func TestPlainHTTPEndpointsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	rec, posted := recorder(t)
	// every address dials rec: "auth.example.test" stands for a machine
	// across the network
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, rec.Listener.Addr().String())
	}}}
	for _, field := range []string{"token_url", "auth_url", "device_url", "revoke_url"} {
		d := oauthDef(b.srv)
		switch field {
		case "token_url":
			d.TokenURL = "http://auth.example.test/token"
		case "auth_url":
			d.AuthURL = "http://auth.example.test/authorize"
		case "device_url":
			d.DeviceURL = "http://auth.example.test/device"
		case "revoke_url":
			d.RevokeURL = "http://auth.example.test/revoke"
		}
		s, err := Open([]Def{d}, Opts{Path: b.path, Client: client})
		if err != nil {
			if !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "https") {
				t.Errorf("%s: %v, want the field named and https asked for", field, err)
			}
			continue
		}
		t.Errorf("%s over plain http to another machine was accepted", field)
		a, _ := s.Account("acme")
		a.Invalidate()
		a.Secret(context.Background())
		s.Logout(context.Background(), "acme")
	}
	for _, p := range posted() {
		t.Errorf("sent in clear: %s", p)
	}
	// this machine is fine: nothing crosses a network
	d := oauthDef(b.srv)
	d.TokenURL = "http://localhost:1/token"
	if _, err := Open([]Def{d}, Opts{Path: b.path}); err != nil {
		t.Errorf("a loopback token_url: %v", err)
	}
}

// urlWriter hands on the first sign-in address written to it.
type urlWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	sent bool
	got  chan string
}

func (w *urlWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, f := range strings.Fields(w.buf.String()) {
		if strings.Contains(f, "/authorize?") && !w.sent {
			w.sent = true
			w.got <- f
		}
	}
	return len(p), nil
}

// The loopback listener takes one answer, with the state keep sent, on
// 127.0.0.1 only, and is gone once the sign-in ends: another request
// with a wrong or no state is refused and does not end the wait.
func TestLoopbackListener(t *testing.T) {
	t.Parallel()
	b := setup(t)
	out := &urlWriter{got: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- b.store.Login(context.Background(), "acme", LoginOpts{Out: out, ReadSecret: secretReader(b.srv.ClientSecret)})
	}()
	authURL, _ := url.Parse(kit.Wait(t, out.got, kit.Timeout))
	redirect, _ := url.Parse(authURL.Query().Get("redirect_uri"))
	if redirect.Hostname() != "127.0.0.1" {
		t.Fatalf("redirect_uri %s is not on 127.0.0.1", redirect)
	}
	for _, q := range []string{"code=stolen&state=wrong", "code=stolen", "error=access_denied&state=" + authURL.Query().Get("state") + "x"} {
		resp, err := http.Get(redirect.String() + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("?%s answered %d, want 400", q, resp.StatusCode)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("a request with a wrong state ended the sign-in: %v", err)
	default:
	}
	resp, err := http.Get(authURL.String()) // the person, at the provider
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := kit.Wait(t, done, kit.Timeout); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(redirect.String() + "?" + url.Values{"state": {authURL.Query().Get("state")}, "code": {"x"}}.Encode()); err == nil {
		resp.Body.Close()
		t.Errorf("the listener still answers after the sign-in: %d", resp.StatusCode)
	}
}

// A refresh the provider made (spending a rotated refresh token) whose
// answer never reached keep (killed, the connection cut) leaves keep with
// a refresh token the provider no longer honours. Nothing can win it
// back: the next refresh is refused once, and the account asks for a
// sign-in naming the command, rather than failing as transient for ever.
func TestLostRefreshAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Rotate = true
	b.loginLoopback(t, b.store)
	b.srv.RefreshDelay = time.Hour
	a, _ := b.store.Account("acme")
	a.Invalidate()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		kit.Until(t, kit.Timeout, "the refresh reaches the provider", func() bool { return b.srv.RefreshesStarted() == 1 })
		cancel() // the answer is lost
	}()
	if _, err := a.Secret(ctx); connectors.ClassOf(err) != connectors.Transient {
		t.Fatalf("the lost answer: %v, want transient", err)
	}
	b.srv.RefreshDelay = 0
	_, err := a.Secret(context.Background())
	if connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), "keep auth login acme") {
		t.Fatalf("the next refresh: %v, want a sign-in failure naming the command", err)
	}
	if st, _ := b.store.Statuses(); st[0].State != StateNeedsSignIn {
		t.Errorf("keep auth list: %+v", st[0])
	}
}

// A device code nobody enters in time ends the sign-in with words that
// say so and what to run, not "context deadline exceeded".
func TestDeviceCodeExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.DeviceTTL = 2 * time.Second
	err := b.store.Login(context.Background(), "acme", LoginOpts{Out: io.Discard, Device: true, ReadSecret: secretReader(b.srv.ClientSecret)})
	if err == nil || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "keep auth login acme --device") {
		t.Fatalf("err = %v, want the code said expired and the command to run again", err)
	}
}

// A hand-edited credentials file whose account is null (the person
// removing it by hand) is an account not signed in, everywhere: not a
// panic in the daemon's watch of the file.
func TestNullEntryInCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t, Def{Name: "api", Kind: Token})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 4)
	if err := os.WriteFile(b.path, []byte(`{"accounts": {"acme": null}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Watch(ctx, func(names []string) { got <- names }); err != nil {
		t.Fatal(err)
	}
	if err := b.open(t, oauthDef(b.srv), Def{Name: "api", Kind: Token}).Login(ctx, "api", LoginOpts{ReadSecret: secretReader("tok")}); err != nil {
		t.Fatal(err)
	}
	if names, _ := kit.WaitRecv(t, got, 10*time.Second); len(names) != 1 || names[0] != "api" {
		t.Fatalf("signed in = %v, want [api]", names)
	}
	a, _ := b.store.Account("acme")
	if _, err := a.Secret(ctx); AccountOf(err) != "acme" {
		t.Errorf("acme: %v, want a sign-in failure", err)
	}
	if st, err := b.store.Statuses(); err != nil || st[0].State != StateNeedsSignIn {
		t.Errorf("statuses: %+v, %v", st, err)
	}
	b.store.Held()
	if _, err := b.store.Logout(ctx, "acme"); err == nil || !strings.Contains(err.Error(), "not signed in") {
		t.Errorf("logout: %v", err)
	}
}

// A provider whose access tokens live a minute (less than the two
// minutes before expiry keep refreshes at) gets one refresh per half
// life, not one per use.
func TestShortLivedTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.TTL = time.Minute
	b.loginLoopback(t, b.store)
	a, _ := b.store.Account("acme")
	first, _ := a.Secret(context.Background())
	for range 5 {
		if tok, err := a.Secret(context.Background()); err != nil || tok != first {
			t.Fatalf("Secret = %q, %v; want the token of the sign-in", tok, err)
		}
	}
	if n := b.srv.Refreshes(); n != 0 {
		t.Fatalf("%d refreshes of a token a second old", n)
	}
	b.clock.Advance(31 * time.Second)
	if tok, err := a.Secret(context.Background()); err != nil || tok == first || b.srv.Refreshes() != 1 {
		t.Fatalf("past half its life: %q, %v, %d refreshes", tok, err, b.srv.Refreshes())
	}
}

// keep auth logout run in the daemon's process (the TUI) waits on the
// provider's revocation endpoint; another account's secret, Held and
// Statuses do not wait with it.
func TestHungRevocationHoldsUpNothingElse(t *testing.T) {
	t.Parallel()
	hung := make(chan struct{})
	revoke := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(revoke.Close)
	t.Cleanup(func() { close(hung) })
	b := setup(t)
	d := oauthDef(b.srv)
	d.RevokeURL = revoke.URL
	s := b.open(t, d, Def{Name: "api", Kind: Token})
	b.loginLoopback(t, s)
	if err := s.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("api-token")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Logout(ctx, "acme")
	kit.Until(t, kit.Timeout, "acme is signed out", func() bool { return readCreds(t, b.path).Accounts["acme"] == nil })
	done := make(chan error, 1)
	go func() {
		api, _ := s.Account("api")
		_, err := api.Secret(context.Background())
		s.Held()
		s.Statuses()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a hung revocation endpoint holds up every account")
	}
}

// keep killed between writing its temporary file and renaming it left
// the secrets in a stray file; the next write clears it.
func TestKilledWriterLeavesNoSecrets(t *testing.T) { // not parallel: beforeRename
	b := setup(t, Def{Name: "api", Kind: Token})
	if err := b.store.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("first")}); err != nil {
		t.Fatal(err)
	}
	// what writeAtomic had written when the kill came
	var stray string
	beforeKill := func() error {
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(b.path), ".credentials-*.tmp"))
		if len(left) != 1 {
			return fmt.Errorf("temporary files %v", left)
		}
		data, _ := os.ReadFile(left[0])
		stray = left[0] + ".kept"
		return os.WriteFile(stray, data, 0o600)
	}
	beforeRename = beforeKill
	b.store.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("second")})
	beforeRename = nil
	if stray == "" {
		t.Fatal("no temporary file was written")
	}
	// the kept copy stands for the file a killed keep leaves: same name
	// pattern, in the same folder
	killed := strings.TrimSuffix(stray, ".kept")
	if err := os.Rename(stray, killed); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Login(context.Background(), "api", LoginOpts{ReadSecret: secretReader("third")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); err == nil {
		t.Errorf("the killed writer's %s, holding a secret, is still there", killed)
	}
}

// A sign-in over a credentials file others may read says so.
func TestLoginOverAnOpenCredentialsFile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.loginLoopback(t, b.store)
	if err := os.Chmod(b.path, 0o644); err != nil {
		t.Fatal(err)
	}
	err := b.open(t).Login(context.Background(), "acme", LoginOpts{Out: io.Discard, ReadSecret: secretReader(b.srv.ClientSecret)})
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("err = %v, want the mode refused", err)
	}
}
