package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// LoginOpts is how a sign-in talks to the user.
type LoginOpts struct {
	// Out receives instructions: the URL to open, the code to enter.
	Out io.Writer
	// ReadSecret asks for one secret (a password, a token, an OAuth client
	// secret) without echoing it.
	ReadSecret func(prompt string) (string, error)
	// Device uses the device flow (a code entered on another device)
	// instead of a browser on this machine.
	Device bool
	// Force stores a sign-in as another identity than the one signed in
	// before (an account whose config names no username).
	Force bool
}

// Login signs in to an account and stores what it got. An oauth2 account
// runs the authorization code flow with PKCE and a loopback redirect, or
// the device flow; the others ask for their secret.
func (s *Store) Login(ctx context.Context, name string, o LoginOpts) error {
	d, ok := s.defs[name]
	if !ok {
		_, err := s.Account(name)
		return err
	}
	if d.configured() {
		_, from := d.configSecret()
		return fmt.Errorf("%s takes its secret from %s: set it there, there is nothing to sign in to", name, from)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if d.Kind != OAuth2 {
		what := map[string]string{Password: "password", Basic: "password", Token: "token"}[d.Kind]
		prompt := fmt.Sprintf("%s of %s", what, name)
		if d.Username != "" {
			prompt += " (" + d.Username + ")"
		}
		secret, err := o.ReadSecret(prompt + ": ")
		if err != nil {
			return fmt.Errorf("reading the %s: %w", what, err)
		}
		if secret = strings.TrimRight(secret, "\r\n"); secret == "" {
			return fmt.Errorf("no %s given; nothing stored", what)
		}
		return s.store(name, &entry{Secret: secret})
	}
	if d.mcpDiscovered() {
		return s.mcpLogin(ctx, d, o)
	}
	s.mu.Lock()
	f, err := s.current()
	var clientSecret string
	if err == nil {
		if e := f.Accounts[name]; e != nil && (e.ClientID == "" || e.ClientID == d.ClientID) {
			clientSecret = e.ClientSecret
		}
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	stored := clientSecret != ""
	if !stored {
		clientSecret, err = o.ReadSecret(fmt.Sprintf("client secret of the OAuth client %s (Enter if it has none): ", d.ClientID))
		if err != nil {
			return fmt.Errorf("reading the client secret: %w", err)
		}
		clientSecret = strings.TrimSpace(clientSecret)
	}
	var tok *oauth2.Token
	if o.Device {
		tok, err = s.deviceFlow(ctx, d, clientSecret, o.Out)
	} else {
		tok, err = s.loopbackFlow(ctx, d, clientSecret, o.Out)
	}
	if err != nil {
		var xe *exchangeError
		if stored && errors.As(err, &xe) && (xe.code == "invalid_client" || xe.code == "unauthorized_client") {
			// the client's secret changed at the provider: asking for it
			// is the only way on, so the next sign-in must
			s.forgetClientSecret(name, clientSecret)
			return fmt.Errorf("signing in to %s: %w; the stored client secret was refused and is forgotten: run %s again and enter the client's current secret",
				name, err, LoginCommand(name))
		}
		return fmt.Errorf("signing in to %s: %w", name, err)
	}
	e := &entry{ClientSecret: clientSecret, ClientID: d.ClientID, AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		TokenType: tok.TokenType, Expiry: s.expiry(tok), Obtained: s.now().UTC()}
	if err := s.storeAs(ctx, d, e, identityOf(tok, d.ClientID), o.Force); err != nil {
		return err
	}
	if tok.RefreshToken == "" {
		fmt.Fprintf(o.Out, "note: %s gave no refresh token; you will have to sign in again when this one expires (%s)\n", name, tok.Expiry.Local().Format(time.RFC3339))
	}
	return nil
}

// storeAs stores the sign-in e of d, made as id, unless id is not who d
// is for (identity.go); then the grant it got is revoked, where the
// provider can, as nothing will use it.
func (s *Store) storeAs(ctx context.Context, d Def, e *entry, id identity, force bool) error {
	e.Identity = id.who()
	err := s.store(d.Name, e, func(was *entry) error { return checkIdentity(d, id, was, force) })
	var wu *wrongUserError
	if errors.As(err, &wu) && e.RefreshToken != "" && d.revokeURL() != "" {
		_ = s.revoke(ctx, d, e)
	}
	return err
}

// forgetClientSecret removes a client secret the provider refused from
// name's entry, when it is still the one stored.
func (s *Store) forgetClientSecret(name, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.update(func(f *file) error {
		if e := f.Accounts[name]; e != nil && e.ClientSecret == secret {
			e.ClientSecret = ""
		}
		return nil
	})
}

// store makes e the sign-in of name. check, when given, is asked first
// with the entry e replaces (nil if none), under the locks, so what it
// judges is what is replaced; its error stores nothing.
func (s *Store) store(name string, e *entry, check ...func(was *entry) error) error {
	// after a refresh on its way, not before it: its answer must not
	// write the grant this sign-in replaces over it
	unlock, err := lockFile(context.Background(), s.refreshLock(name))
	if err != nil {
		return fmt.Errorf("credentials file lock: %w", err)
	}
	defer unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	e.SignedInAt = s.now().UTC()
	err = s.update(func(f *file) error {
		for _, c := range check {
			if err := c(f.Accounts[name]); err != nil {
				return err
			}
		}
		if was := f.Accounts[name]; was != nil {
			c := *was
			s.replaced[name] = &c
		} else {
			delete(s.replaced, name)
		}
		f.Accounts[name] = e
		return nil
	})
	if err == nil {
		delete(s.invalid, name)
	}
	return err
}

// loopbackFlow: the browser signs in at the provider, which redirects to a
// listener on 127.0.0.1 with a code; the code and the PKCE verifier buy
// the token.
func (s *Store) loopbackFlow(ctx context.Context, d Def, clientSecret string, out io.Writer) (*oauth2.Token, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + "/"
	conf := d.oauthConfig(clientSecret, redirect)
	state, verifier := randomString(), oauth2.GenerateVerifier()
	type answer struct {
		code string
		err  error
	}
	got := make(chan answer, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var a answer
		switch {
		case q.Get("state") != state:
			http.Error(w, "this sign-in link is not the one keep is waiting for", http.StatusBadRequest)
			return
		case q.Get("error") != "":
			a.err = fmt.Errorf("the provider said %s %s", q.Get("error"), q.Get("error_description"))
		case q.Get("code") == "":
			a.err = errors.New("the provider redirected without a code")
		default:
			a.code = q.Get("code")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if a.err != nil {
			fmt.Fprintf(w, "<p>Sign-in to %s failed: %s</p>", html.EscapeString(d.Name), html.EscapeString(a.err.Error()))
		} else {
			fmt.Fprintf(w, "<p>Signed in to %s. You may close this window.</p>", html.EscapeString(d.Name))
		}
		select {
		case got <- a:
		default:
		}
	})}
	go srv.Serve(ln)
	defer func() {
		// the page the browser is shown is written by the handler that
		// handed the code over, maybe still under way: Close would cut it
		// (the person sees a connection reset after signing in); Shutdown
		// lets it end, and closes the rest
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	opts := append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}, d.resourceParam()...)
	for k, v := range presets[d.Provider].authParams {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	fmt.Fprintf(out, "Open this address in a browser on this machine to sign in to %s:\n\n  %s\n\nWaiting for the browser (Ctrl-C to give up; --device signs in from another device)...\n",
		d.Name, conf.AuthCodeURL(state, opts...))
	var a answer
	select {
	case a = <-got:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if a.err != nil {
		return nil, a.err
	}
	tok, err := conf.Exchange(s.clientCtx(ctx), a.code, append([]oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}, d.resourceParam()...)...)
	if err != nil {
		return nil, newExchangeError(err, clientSecret, a.code, verifier)
	}
	return tok, nil
}

// deviceFlow: the user enters a code at the provider's address on any
// device while keep polls for the token.
func (s *Store) deviceFlow(ctx context.Context, d Def, clientSecret string, out io.Writer) (*oauth2.Token, error) {
	conf := d.oauthConfig(clientSecret, "")
	if conf.Endpoint.DeviceAuthURL == "" {
		return nil, fmt.Errorf("account %s has no device_url, so --device cannot be used", d.Name)
	}
	cctx := s.clientCtx(ctx)
	da, err := conf.DeviceAuth(cctx)
	if err != nil {
		return nil, tokenError(err, clientSecret)
	}
	where := da.VerificationURI
	if da.VerificationURIComplete != "" {
		where = da.VerificationURIComplete
	}
	fmt.Fprintf(out, "On any device, open\n\n  %s\n\nand enter the code %s to sign in to %s. Waiting...\n", where, da.UserCode, d.Name)
	tok, err := conf.DeviceAccessToken(cctx, da)
	var re *oauth2.RetrieveError
	expired := errors.As(err, &re) && re.ErrorCode == "expired_token" ||
		// golang.org/x/oauth2 stops polling at the code's expiry
		errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && !da.Expiry.IsZero() && !time.Now().Before(da.Expiry)
	if expired {
		return nil, fmt.Errorf("the code %s expired before it was entered: run %s --device again for a new one", da.UserCode, LoginCommand(d.Name))
	}
	if err != nil {
		return nil, newExchangeError(err, clientSecret, da.DeviceCode)
	}
	return tok, nil
}

// tokenError says what the token endpoint refused, without its body and
// without what keep sent it (sent: the client secret, the code, the
// verifier), which a provider's answer may echo.
func tokenError(err error, sent ...string) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := "the token endpoint refused: " + statusOf(re.Response)
		if code := errorCode(re, sent...); code != "" {
			msg += " " + code
		}
		if desc := redact(re.ErrorDescription, sent...); desc != "" {
			if len(desc) > 300 {
				desc = desc[:300] + "..."
			}
			msg += " (" + desc + ")"
		}
		return errors.New(msg)
	}
	return errors.New(redact(scrub(err), sent...))
}

// exchangeError is a failed token request of a sign-in: what is said of
// it (tokenError), and the provider's error code, for Login to act on.
type exchangeError struct {
	shown error
	code  string
}

func (e *exchangeError) Error() string { return e.shown.Error() }

func newExchangeError(err error, sent ...string) *exchangeError {
	xe := &exchangeError{shown: tokenError(err, sent...)}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		xe.code = re.ErrorCode
	}
	return xe
}

func randomString() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Logout forgets an account's secrets. An oauth2 account's refresh token
// is first revoked at the provider when it has a revocation endpoint; a
// revocation that fails is said in the warning, and the secrets are
// forgotten anyway.
func (s *Store) Logout(ctx context.Context, name string) (warning string, err error) {
	d, ok := s.defs[name]
	if !ok {
		_, err := s.Account(name)
		return "", err
	}
	if d.configured() {
		_, from := d.configSecret()
		return "", fmt.Errorf("%s takes its secret from %s: remove it there, keep stores nothing of it", name, from)
	}
	// after a refresh on its way: what it writes is then removed, and the
	// refresh token revoked is the one it got
	unlock, err := lockFile(ctx, s.refreshLock(name))
	if err != nil {
		return "", fmt.Errorf("credentials file lock: %w", err)
	}
	defer unlock()
	s.mu.Lock()
	var gone *entry
	err = s.update(func(f *file) error {
		if gone = f.Accounts[name]; gone == nil {
			return fmt.Errorf("%s is not signed in", name)
		}
		delete(f.Accounts, name)
		return nil
	})
	s.mu.Unlock() // the revocation below waits on the provider: s.mu is every account's
	if err != nil {
		return "", err
	}
	if d.Kind == OAuth2 && gone.RefreshToken != "" {
		if d.revokeURL() == "" {
			return "the provider has no revocation endpoint configured (revoke_url): remove keep's access in your account's settings", nil
		}
		if err := s.revoke(ctx, d, gone); err != nil {
			return "revoking the token failed (" + err.Error() + "): remove keep's access in your account's settings", nil
		}
	}
	return "", nil
}

// Test proves an account's secret is at hand: an oauth2 account with a
// refresh token refreshes it (so a revoked grant shows at once); the others
// must have their secret stored. Whether a service takes the secret is for
// the connectors that use the account to find out (engine.TestAccount).
func (s *Store) Test(ctx context.Context, name string) error {
	a, err := s.Account(name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	f, err := s.current()
	refreshable := err == nil && f.Accounts[name] != nil && f.Accounts[name].RefreshToken != "" && f.Accounts[name].Refused == ""
	s.mu.Unlock()
	if refreshable {
		a.Invalidate()
	}
	_, err = a.Secret(ctx)
	return err
}

// Saved returns a function that puts name's stored sign-in back as it is
// now, or removes it when none is stored: a new secret a service refuses
// need not cost the one that worked (keep auth login checks before it
// keeps). had says whether a sign-in was stored.
func (s *Store) Saved(name string) (restore func() error, had bool, err error) {
	s.mu.Lock()
	f, err := s.current()
	var was *entry
	if err == nil && f.Accounts[name] != nil {
		e := *f.Accounts[name]
		was = &e
	}
	s.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	return func() error {
		unlock, err := lockFile(context.Background(), s.refreshLock(name))
		if err != nil {
			return fmt.Errorf("credentials file lock: %w", err)
		}
		defer unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.invalid, name)
		return s.update(func(f *file) error {
			if was == nil {
				delete(f.Accounts, name)
				return nil
			}
			e := *was
			if r := s.replaced[name]; r != nil && r.SignedInAt.Equal(was.SignedInAt) {
				// the same sign-in, as a sign-in since found it: a refresh
				// meanwhile rotated its refresh token, and the one saved
				// is spent
				e = *r
			}
			f.Accounts[name] = &e
			return nil
		})
	}, was != nil, nil
}
