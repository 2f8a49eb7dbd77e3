// Package oauthtest is a local OAuth 2.0 provider for tests: authorization
// code with PKCE (S256 checked at the token endpoint), refresh with
// rotation, the device flow, revocation and token introspection (RFC 7662),
// on the real wire format golang.org/x/oauth2 speaks. A mail or API test
// server checks the bearer tokens it is shown against Active or the
// introspection endpoint.
package oauthtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running provider.
type Server struct {
	*httptest.Server
	ClientID     string
	ClientSecret string
	// Username is the subject of every token (introspection's username,
	// and the email of the id_token a sign-in asking for the openid scope
	// gets): who signs in at the browser. SignInAs changes it once the
	// server runs.
	Username string
	// TTL is the lifetime of an access token. Default: one hour.
	TTL time.Duration
	// Rotate makes every refresh issue a new refresh token.
	Rotate bool
	// NoRefresh issues access tokens only, as providers do that give no
	// refresh token: a refused token can only be replaced by a new sign-in.
	NoRefresh bool
	// ReuseRevokes, with Rotate, is reuse detection (RFC 9700 §4.14.2): a
	// refresh token presented again after it was rotated out ends its
	// whole grant, the newest refresh token too.
	ReuseRevokes bool
	// DeviceTTL is how long a device code may be entered. Default: ten
	// minutes.
	DeviceTTL time.Duration
	// RefreshDelay holds the answer to every refresh this long, as a
	// slow provider does: the refresh is made at once (a rotated refresh
	// token is spent), and a client that gives up never hears of it.
	RefreshDelay time.Duration

	mu      sync.Mutex
	codes   map[string]grant // authorization code → what it was issued for
	devices map[string]*device
	access  map[string]token
	refresh map[string]string // refresh token → scope; absent when revoked
	// family is the grant (the sign-in) a refresh token belongs to, kept
	// after it is rotated out, for ReuseRevokes
	family    map[string]string
	started   int // refreshes received, before any delay
	refreshes int
	requests  int // to the token endpoint
	failNext  int // answer the next refreshes with 503
	// registered are the public clients registered at /register (RFC
	// 7591); resources the resource parameters (RFC 8707) of the
	// authorization and token requests, in order (mcp.go).
	registered map[string]bool
	resources  []string
}

type grant struct {
	clientID, redirect, challenge, scope string
}

type device struct {
	userCode, scope string
	approved        bool
}

type token struct {
	scope   string
	expires time.Time
}

// New starts a provider; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{ClientID: "keep-test-client", ClientSecret: "keep-test-client-secret", Username: "me@example.com", TTL: time.Hour,
		codes: map[string]grant{}, devices: map[string]*device{}, access: map[string]token{}, refresh: map[string]string{},
		family: map[string]string{}, registered: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /device", s.deviceAuth)
	mux.HandleFunc("GET /device/verify", s.verify)
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.HandleFunc("POST /introspect", s.introspect)
	s.mcpRoutes(mux)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Endpoints.
func (s *Server) AuthURL() string       { return s.URL + "/authorize" }
func (s *Server) TokenURL() string      { return s.URL + "/token" }
func (s *Server) DeviceURL() string     { return s.URL + "/device" }
func (s *Server) RevokeURL() string     { return s.URL + "/revoke" }
func (s *Server) IntrospectURL() string { return s.URL + "/introspect" }

func random() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// authorize plays the provider's consent screen: the user always agrees,
// and the browser is sent to the redirect URI with a code.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.noteResource(q.Get("resource"))
	if q.Get("client_id") != s.ClientID && !s.isRegistered(q.Get("client_id")) {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" {
		http.Error(w, "redirect_uri must be a loopback address", http.StatusBadRequest)
		return
	}
	code := random()
	s.mu.Lock()
	s.codes[code] = grant{clientID: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), scope: q.Get("scope")}
	s.mu.Unlock()
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// client checks the client's credentials, in the form or in Basic auth.
func (s *Server) client(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if r.PostForm.Get("resource") != "" {
		s.noteResource(r.PostForm.Get("resource"))
	}
	return id == s.ClientID && secret == s.ClientSecret || secret == "" && s.isRegistered(id)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if !s.client(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "wrong client id or secret")
		return
	}
	if r.PostForm.Get("grant_type") != "refresh_token" {
		s.grant(w, r)
		return
	}
	// a refresh is made at once and its answer held: a client that gives
	// up meanwhile has lost the answer, and the provider has rotated the
	// refresh token all the same
	rec := httptest.NewRecorder()
	s.mu.Lock()
	s.started++
	delay := s.RefreshDelay
	s.mu.Unlock()
	s.grant(rec, r)
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// grant answers a token request whose client is known.
func (s *Server) grant(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // a code is good once
		if !ok || g.redirect != f.Get("redirect_uri") {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown code or redirect_uri")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match code_challenge")
			return
		}
		if rt := s.issue(w, g.scope, ""); rt != "" {
			s.family[rt] = rt
		}
	case "refresh_token":
		scope, ok := s.refresh[f.Get("refresh_token")]
		if fam := s.family[f.Get("refresh_token")]; !ok && s.ReuseRevokes && fam != "" {
			for rt, rf := range s.family {
				if rf == fam {
					delete(s.refresh, rt)
				}
			}
		}
		if !ok {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "token has been expired or revoked")
			return
		}
		if s.failNext > 0 {
			s.failNext--
			oauthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "try later")
			return
		}
		s.refreshes++
		old := f.Get("refresh_token")
		fam := s.family[old]
		if s.Rotate {
			delete(s.refresh, old)
			old = ""
		}
		if rt := s.issue(w, scope, old); rt != "" {
			s.family[rt] = fam
		}
	case "urn:ietf:params:oauth:grant-type:device_code":
		d, ok := s.devices[f.Get("device_code")]
		switch {
		case !ok:
			oauthError(w, http.StatusBadRequest, "expired_token", "unknown device code")
		case !d.approved:
			oauthError(w, http.StatusBadRequest, "authorization_pending", "")
		default:
			delete(s.devices, f.Get("device_code"))
			if rt := s.issue(w, d.scope, ""); rt != "" {
				s.family[rt] = rt
			}
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
	}
}

// issue answers with a new access token, and a refresh token: keep (the
// one presented, when not rotating) or a new one, which it returns. The
// caller holds s.mu.
func (s *Server) issue(w http.ResponseWriter, scope, keep string) (newRefresh string) {
	at := "at-" + random()
	s.access[at] = token{scope: scope, expires: time.Now().Add(s.TTL)}
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.TTL.Seconds()), "scope": scope}
	if slices.Contains(strings.Fields(scope), "openid") {
		resp["id_token"] = s.idToken()
	}
	if keep == "" && !s.NoRefresh {
		rt := "rt-" + random()
		s.refresh[rt] = scope
		resp["refresh_token"] = rt
		newRefresh = rt
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
	return newRefresh
}

// idToken is an OpenID Connect id_token (a JWT signed HS256 with the
// client secret, as OIDC Core §10.1 allows) saying Username signed in.
// The caller holds s.mu.
func (s *Server) idToken() string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now()
	sub := sha256.Sum256([]byte(s.Username))
	head := enc(map[string]string{"alg": "HS256", "typ": "JWT"})
	body := enc(map[string]any{"iss": s.URL, "aud": s.ClientID, "sub": hex.EncodeToString(sub[:8]), "email": s.Username,
		"email_verified": true, "iat": now.Unix(), "exp": now.Add(s.TTL).Unix()})
	mac := hmac.New(sha256.New, []byte(s.ClientSecret))
	mac.Write([]byte(head + "." + body))
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Server) deviceTTL() time.Duration {
	if s.DeviceTTL > 0 {
		return s.DeviceTTL
	}
	return 10 * time.Minute
}

func (s *Server) deviceAuth(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != s.ClientID {
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	dc, uc := random(), strings.ToUpper(random()[:8])
	s.mu.Lock()
	s.devices[dc] = &device{userCode: uc, scope: r.PostForm.Get("scope")}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"device_code": dc, "user_code": uc, "verification_uri": s.URL + "/device/verify",
		"verification_uri_complete": s.URL + "/device/verify?user_code=" + uc,
		"expires_in":                int(s.deviceTTL().Seconds()), "interval": 1})
}

// verify is the page the user opens on another device: entering the code
// approves the sign-in.
func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	uc := r.URL.Query().Get("user_code")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.userCode == uc {
			d.approved = true
			w.Write([]byte("approved"))
			return
		}
	}
	http.Error(w, "unknown code", http.StatusNotFound)
}

// revoke implements RFC 7009: a refresh token and every access token is
// accepted; revoking a refresh token ends the grant.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := r.PostForm.Get("token")
	delete(s.refresh, t)
	delete(s.access, t)
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	tok, ok := s.access[r.PostForm.Get("token")]
	user := s.Username
	s.mu.Unlock()
	if !ok || time.Now().After(tok.expires) {
		json.NewEncoder(w).Encode(map[string]any{"active": false})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"active": true, "scope": tok.scope, "client_id": s.ClientID,
		"username": user, "token_type": "Bearer", "exp": tok.expires.Unix()})
}

// SignInAs makes user the one who signs in at the browser from now on,
// as a person signed in to another account there does.
func (s *Server) SignInAs(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Username = user
}

// Active reports whether an access token is good now (what a resource
// server would ask the introspection endpoint).
func (s *Server) Active(accessToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, ok := s.access[accessToken]
	return ok && time.Now().Before(tok.expires)
}

// Scope returns the scope an active access token was issued for.
func (s *Server) Scope(accessToken string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[accessToken].scope
}

// RefreshValid reports whether a refresh token is still honoured.
func (s *Server) RefreshValid(refreshToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.refresh[refreshToken]
	return ok
}

// Grants counts the refresh tokens honoured now.
func (s *Server) Grants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refresh)
}

// RevokeAll ends every grant, as a user removing the app's access does.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
	clear(s.access)
}

// ExpireAccess makes every access token issued so far inactive (a
// resource server then answers 401) while refresh tokens stay good.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// Refreshes counts successful refreshes.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// RefreshesStarted counts the refresh requests received, answered or not.
func (s *Server) RefreshesStarted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// TokenRequests counts every request to the token endpoint.
func (s *Server) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// FailRefreshes makes the next n refreshes answer 503.
func (s *Server) FailRefreshes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// Issue grants a refresh token for scope as if the user had signed in,
// for tests that start from a signed-in account.
func (s *Server) Issue(scope string) (refreshToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := "rt-" + random()
	s.refresh[rt] = scope
	s.family[rt] = rt
	return rt
}

// Bearer returns the bearer token of a request ("" if none).
func Bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return h[7:]
	}
	return ""
}

// Browser is the user at a browser: an io.Writer for a sign-in's output
// that opens the first address of this provider it shows (the
// authorization URL, or the device page with the code filled in), so the
// provider redirects to the loopback listener or approves the device.
type Browser struct {
	s    *Server
	mu   sync.Mutex
	buf  bytes.Buffer
	done bool
	// Visited receives the status of the visit.
	Visited chan int
}

// Browser returns a new Browser for this provider.
func (s *Server) Browser() *Browser { return &Browser{s: s, Visited: make(chan int, 1)} }

var addressRE = regexp.MustCompile(`https?://[^\s]+`)

func (b *Browser) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.done {
		return len(p), nil
	}
	for _, u := range addressRE.FindAllString(b.buf.String(), -1) {
		if strings.HasPrefix(u, b.s.URL+"/authorize?") || strings.HasPrefix(u, b.s.URL+"/device/verify?") {
			b.done = true
			go func() {
				resp, err := http.Get(u)
				if err != nil {
					b.Visited <- 0
					return
				}
				resp.Body.Close()
				b.Visited <- resp.StatusCode
			}()
			break
		}
	}
	return len(p), nil
}

// String is everything written so far.
func (b *Browser) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
