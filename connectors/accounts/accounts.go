// Package accounts holds the accounts connectors sign in with (DESIGN.md
// §14): their definitions come from the config, their secrets from one
// credentials file next to it. The host refreshes OAuth tokens here, so a
// connector only asks an Account for what it must put on the wire.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"keep/connectors"
)

// Account kinds.
const (
	OAuth2   = "oauth2"
	Password = "password"
	Token    = "token" // a bearer token
	Basic    = "basic"
)

// Def is one [accounts.NAME] section of the config. It holds no secret: the
// OAuth client secret, passwords and tokens live in the credentials file,
// but for a connector's own credential key (ConfigSecret).
type Def struct {
	Name     string
	Kind     string
	Username string
	// Provider is a preset ("google", "microsoft") for the OAuth endpoints
	// and short scope names; empty means AuthURL, TokenURL (and DeviceURL
	// for --device) are given.
	Provider  string
	ClientID  string
	Scopes    []string
	AuthURL   string
	TokenURL  string
	DeviceURL string
	// RevokeURL is where keep auth logout revokes the refresh token
	// (RFC 7009); the google preset has one.
	RevokeURL string
	// SecretEnv and ConfigSecret make a configured account: its secret
	// comes from a connector's own key (configured.go), a variable's name
	// or the value itself, never from the credentials file.
	SecretEnv    string
	ConfigSecret string
	// Resource is the URL of the MCP server an oauth2 account signs in to
	// when it names no endpoints: they are discovered (mcpauth.go).
	Resource string
}

// Opts configures a Store. Zero values take the defaults.
type Opts struct {
	// Path of the credentials file (credentials.json next to the config).
	Path string
	// Client talks to token endpoints. Default: one over
	// connectors.NewHTTPTransport (HTTP/1.1 only).
	Client *http.Client
	// Now is the clock token expiry is judged by. Default: time.Now.
	Now func() time.Time
	// RefreshBefore: a token that expires within this is refreshed before
	// it is handed out. Default: 2 minutes.
	RefreshBefore time.Duration
}

// Store is every configured account. It is safe for concurrent use, and
// other processes may change the credentials file under it (keep auth
// login while the daemon runs): it re-reads the file when it changed.
type Store struct {
	path   string
	defs   map[string]Def
	client *http.Client
	// tokenClient is client for the requests that carry an account's
	// secrets to its provider (sameOrigin)
	tokenClient   *http.Client
	now           func() time.Time
	refreshBefore time.Duration

	mu    sync.Mutex
	creds *file
	stamp fileStamp
	// invalid holds, by account, the access token a service refused (a
	// 401): that token is not handed out again, but one a new sign-in
	// stored (in this process or another) is, at once
	invalid map[string]string
	// replaced holds, by account, the entry the last sign-in in this
	// process replaced, as it stood then: a restore (Saved) puts that back,
	// refreshed meanwhile, rather than a copy whose refresh token the
	// provider may have rotated out since
	replaced map[string]*entry
}

// DefError is an account's definition refused by Open: Name says which,
// so the caller can say where in its config that account is set.
type DefError struct {
	Name string
	Err  error
}

func (e *DefError) Error() string { return "accounts." + e.Name + ": " + e.Err.Error() }
func (e *DefError) Unwrap() error { return e.Err }

// defaultClient is the stores' client when they are given none: keep's
// transport, which does not send a request again by itself (HTTP/2's
// does, see connectors.NewHTTPTransport).
var defaultClient = connectors.HTTPClient()

// Open checks the definitions and returns a store. The credentials file is
// read when a secret is first needed, so a config without accounts never
// touches it.
func Open(defs []Def, opts Opts) (*Store, error) {
	if opts.Client == nil {
		opts.Client = defaultClient
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RefreshBefore <= 0 {
		opts.RefreshBefore = 2 * time.Minute
	}
	s := &Store{path: opts.Path, defs: map[string]Def{}, client: opts.Client, tokenClient: sameOrigin(opts.Client), now: opts.Now,
		refreshBefore: opts.RefreshBefore, invalid: map[string]string{}, replaced: map[string]*entry{}}
	for _, d := range defs {
		if err := d.check(); err != nil {
			return nil, &DefError{Name: d.Name, Err: err}
		}
		if _, dup := s.defs[d.Name]; dup {
			return nil, &DefError{Name: d.Name, Err: errors.New("defined twice")}
		}
		s.defs[d.Name] = d
	}
	if s.needsFile() && s.path == "" {
		return nil, fmt.Errorf("accounts: no credentials file path")
	}
	return s, nil
}

// nameRE is what an account may be called: its name is written into the
// failures that name it and read back from them (NamedIn).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.\-]+$`)

func (d Def) check() error {
	if !nameRE.MatchString(d.Name) {
		return fmt.Errorf("an account name may use only letters, digits, '.', '_' and '-'")
	}
	switch d.Kind {
	case Password, Basic:
		if d.Username == "" {
			return fmt.Errorf("kind %q needs a username", d.Kind)
		}
	case Token:
	case OAuth2:
		if d.ClientID == "" && !d.mcpDiscovered() { // an MCP server's registers one (mcpauth.go)
			return fmt.Errorf("kind oauth2 needs a client_id (your own OAuth client; see README, Connect your accounts)")
		}
		if _, err := d.endpoint(); err != nil {
			return err
		}
		for _, u := range [][2]string{{"auth_url", d.AuthURL}, {"token_url", d.TokenURL}, {"device_url", d.DeviceURL}, {"revoke_url", d.RevokeURL}} {
			if err := checkEndpoint(u[0], u[1]); err != nil {
				return err
			}
		}
		if _, err := d.scopes(); err != nil {
			return err
		}
	case "":
		return fmt.Errorf("kind is missing (oauth2, password, token or basic)")
	default:
		return fmt.Errorf("kind must be oauth2, password, token or basic, not %q", d.Kind)
	}
	return nil
}

// checkEndpoint refuses an OAuth endpoint keep would send secrets to (or
// the person their password) across the network in clear: plain http is
// for this machine only, as for every credential (connectors.NewSigned).
func checkEndpoint(field, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not an address", field, raw)
	}
	switch {
	case strings.EqualFold(u.Scheme, "https"):
		return nil
	case strings.EqualFold(u.Scheme, "http") && connectors.Loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%s must use https (plain http is for this machine only): the client secret and tokens would cross the network in clear", field)
}

// Path is the credentials file.
func (s *Store) Path() string { return s.path }

// Names lists the configured accounts, sorted.
func (s *Store) Names() []string {
	out := make([]string, 0, len(s.defs))
	for n := range s.defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Def returns the definition of a configured account.
func (s *Store) Def(name string) (Def, bool) {
	d, ok := s.defs[name]
	return d, ok
}

// Account returns the named account for a connector. An unknown name is an
// error naming it: a connector's config refers to an account that the
// config does not define.
func (s *Store) Account(name string) (connectors.Account, error) {
	d, ok := s.defs[name]
	if !ok {
		if len(s.defs) == 0 {
			return nil, fmt.Errorf("account %q is not defined (add an [accounts.%s] section to the config)", name, name)
		}
		return nil, fmt.Errorf("account %q is not defined (defined: %v)", name, s.Names())
	}
	return &account{s: s, def: d}, nil
}

// account is one account as a connector holds it.
type account struct {
	s   *Store
	def Def
}

var _ connectors.Account = (*account)(nil)

func (a *account) Name() string     { return a.def.Name }
func (a *account) Kind() string     { return a.def.Kind }
func (a *account) Username() string { return a.def.Username }

// Secret is the password or a bearer token valid for at least RefreshBefore.
func (a *account) Secret(ctx context.Context) (string, error) {
	return a.s.secret(ctx, a.def)
}

// Invalidate makes the next Secret of an oauth2 account refresh first.
func (a *account) Invalidate() {
	if a.def.Kind != OAuth2 {
		return
	}
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if f, err := a.s.current(); err == nil && f.Accounts[a.def.Name] != nil {
		a.s.invalid[a.def.Name] = f.Accounts[a.def.Name].AccessToken
	}
}

func (s *Store) secret(ctx context.Context, d Def) (string, error) {
	if d.configured() {
		return d.secretOf()
	}
	tok, refresh, bad, hasBad, err := s.held(d)
	if !refresh {
		return tok, err
	}
	// the refresh asks the provider without s.mu: a slow or hung token
	// endpoint holds up this account only, not the others, Held (every
	// log line) or Statuses
	return s.refresh(ctx, d, bad, hasBad)
}

// held is the secret of d as the credentials file holds it, or that an
// oauth2 account's token must be refreshed first (bad, hasBad: the token
// a service refused, for judge).
func (s *Store) held(d Def) (tok string, refresh bool, bad string, hasBad bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.current()
	if err != nil {
		// the user's to fix (a file others can read, a broken edit), like a
		// refused sign-in; the message says how
		return "", false, "", false, connectors.Errorf(connectors.Auth, "account %s: %w", d.Name, err)
	}
	e := f.Accounts[d.Name]
	if d.Kind != OAuth2 {
		if e == nil || e.Secret == "" {
			return "", false, "", false, NeedsSignIn(d.Name, "not signed in")
		}
		return e.Secret, false, "", false, nil
	}
	bad, hasBad = s.invalid[d.Name]
	tok, refresh, err = s.judge(d.Name, e, bad, hasBad)
	if err != nil && e != nil && e.Refused == "" && e.RefreshToken == "" && hasBad && bad == e.AccessToken {
		// written down, so keep auth list in any process says so
		s.markRefused(d.Name, e.AccessToken, noRefreshWhy)
	}
	return tok, refresh, bad, hasBad, err
}

const noRefreshWhy = "the service refused the access token and there is no refresh token"

// judge says what an oauth2 entry gives now: its access token, or that it
// must be refreshed first, or that the user must sign in. bad is the
// access token a service refused (Invalidate), when hasBad.
func (s *Store) judge(name string, e *entry, bad string, hasBad bool) (token string, refresh bool, err error) {
	if e == nil || (e.RefreshToken == "" && e.AccessToken == "") {
		return "", false, NeedsSignIn(name, "not signed in")
	}
	if e.Refused != "" {
		return "", false, NeedsSignIn(name, e.Refused)
	}
	wasRefused := hasBad && bad == e.AccessToken
	before := s.refreshBefore
	if life := e.Expiry.Sub(e.Obtained); !e.Obtained.IsZero() && life > 0 && life < 2*before {
		before = life / 2
	}
	fresh := e.AccessToken != "" && (e.Expiry.IsZero() || e.Expiry.Sub(s.now()) > before)
	if fresh && !wasRefused {
		return e.AccessToken, false, nil
	}
	if e.RefreshToken == "" {
		if wasRefused {
			return "", false, NeedsSignIn(name, noRefreshWhy)
		}
		return "", false, NeedsSignIn(name, "the access token expired and there is no refresh token")
	}
	return "", true, nil
}
