package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors/accounts"
	"keep/connectors/accounts/oauthtest"
	"keep/engine/api"
	"keep/engine/config"
)

// apiServer is an API that accepts the provider's bearer tokens and
// records every token it was shown.
type apiServer struct {
	*httptest.Server
	hits   atomic.Int32
	posts  atomic.Int32
	mu     sync.Mutex
	tokens []string
}

func newAPI(t *testing.T, srv *oauthtest.Server) *apiServer {
	a := &apiServer{}
	var n atomic.Int32
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.hits.Add(1)
		tok := oauthtest.Bearer(r)
		a.mu.Lock()
		a.tokens = append(a.tokens, tok)
		a.mu.Unlock()
		if !srv.Active(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			a.posts.Add(1)
		}
		fmt.Fprintf(w, `{"id":"item-%d"}`, n.Add(1))
	}))
	t.Cleanup(a.Close)
	return a
}

// syncWorkflow reads an item from API and posts it back (testdata/sync.js).
func syncWorkflow(t *testing.T, api string) string {
	t.Helper()
	src, err := os.ReadFile("testdata/sync.js")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(src), "API", `"`+api+`"`)
}

// withOAuthHost configures account "api" at srv and the API's host to
// use it; the credentials file lives in dir.
func withOAuthHost(dir string, srv *oauthtest.Server, api string) setupOpt {
	return func(c *config.Config) {
		c.Path = filepath.Join(dir, "config.toml")
		c.Accounts = map[string]config.Account{"api": {Kind: "oauth2", ClientID: srv.ClientID, AuthURL: srv.AuthURL(),
			TokenURL: srv.TokenURL(), DeviceURL: srv.DeviceURL(), Scopes: []string{"read"}}}
		c.Connectors.HTTP.Hosts = map[string]config.HTTPHost{strings.TrimPrefix(api, "http://"): {Account: "api"}}
	}
}

func signIn(t *testing.T, store *accounts.Store, srv *oauthtest.Server) {
	t.Helper()
	browser := srv.Browser()
	err := store.Login(context.Background(), "api", accounts.LoginOpts{Out: browser,
		ReadSecret: func(string) (string, error) { return srv.ClientSecret, nil }})
	if err != nil {
		t.Fatalf("sign-in: %v\n%s", err, browser.String())
	}
}

// TestAuthFailurePausesUntilSignIn: a token refused during a run is
// refreshed and the run goes on; a revoked grant pauses the workflow as
// auth with the command that fixes it, nothing retries, and signing in
// again resumes it by itself. No token or secret reaches the database,
// the log or the API's answers.
func TestAuthFailurePausesUntilSignIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := oauthtest.New(t)
	apiHost := newAPI(t, srv)
	dir := t.TempDir()
	b := setup(t, allowMutations, withOAuthHost(dir, srv, apiHost.URL))
	var logs bytes.Buffer
	b.e.log = slog.New(slog.NewTextHandler(&logs, nil))
	store, err := OpenAccounts(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.e.accounts = store
	signIn(t, store, srv)
	b.deploy("sync", syncWorkflow(t, apiHost.URL))
	b.drain()
	if apiHost.posts.Load() != 1 {
		t.Fatalf("%d posts, want 1", apiHost.posts.Load())
	}

	// the service stops taking the token in the middle of the workflow's life
	srv.ExpireAccess()
	refreshes := srv.Refreshes()
	b.clock.Advance(5 * time.Minute)
	b.drain()
	if apiHost.posts.Load() != 2 || srv.Refreshes() != refreshes+1 {
		t.Fatalf("after a refused token: %d posts, %d refreshes; want the run to refresh once and go on", apiHost.posts.Load(), srv.Refreshes()-refreshes)
	}

	// the user revokes keep's access at the provider
	srv.RevokeAll()
	b.clock.Advance(5 * time.Minute)
	b.drain()
	w := b.workflow("sync")
	if w.Block == nil || w.Block.Kind != "auth" || w.State != api.StateNeedsAttention {
		t.Fatalf("workflow = %+v block %+v, want blocked as auth", w.WorkflowView, w.Block)
	}
	if runs := b.runs("sync"); runs[0].Status != "paused:approval" {
		t.Errorf("the failed run is %s, want paused:approval", runs[0].Status)
	}
	att, _ := b.e.Attention(ctx)
	if len(att) != 1 || att[0].Kind != api.AttentionAuth || att[0].Command != "keep auth login api" || att[0].Title != "sign in to api again" {
		t.Fatalf("attention = %+v, want one auth item with the login command", att)
	}
	if accts, _ := b.e.Accounts(ctx); len(accts) != 1 || accts[0].State != accounts.StateNeedsSignIn {
		t.Errorf("accounts = %+v, want api needing a sign-in", accts)
	}
	hits, asked := apiHost.hits.Load(), srv.TokenRequests()
	b.clock.Advance(time.Hour)
	b.drain()
	if apiHost.hits.Load() != hits || srv.TokenRequests() != asked {
		t.Errorf("while the account waited for a sign-in: %d API calls, %d token requests", apiHost.hits.Load()-hits, srv.TokenRequests()-asked)
	}

	signIn(t, store, srv)
	resumed, err := b.e.SignedIn(ctx, "api")
	if err != nil || len(resumed) != 1 || resumed[0] != "sync" {
		t.Fatalf("SignedIn = %v, %v", resumed, err)
	}
	b.drain()
	if w := b.workflow("sync"); w.Block != nil {
		t.Fatalf("still blocked after signing in: %+v", w.Block)
	}
	if att, _ := b.e.Attention(ctx); len(att) != 0 {
		t.Errorf("attention after signing in = %+v", att)
	}
	if apiHost.posts.Load() < 3 {
		t.Errorf("%d posts, want the workflow to have gone on", apiHost.posts.Load())
	}
	for _, r := range b.runs("sync") {
		if r.Status == RunPausedApproval {
			t.Errorf("run %s still says %s after the sign-in lifted its block", r.ID, r.Status)
		}
	}

	held := 0
	for _, r := range b.runs("sync") {
		tr, _ := b.e.Trace(ctx, r.ID)
		for _, l := range tr {
			if l.Kind == "call" && strings.Contains(l.Args, `"Authorization":"[held by host]"`) {
				held++
			}
		}
	}
	if held == 0 {
		t.Error("no trace shows the held credential")
	}
	planted := []string{srv.ClientSecret}
	apiHost.mu.Lock()
	for _, tok := range apiHost.tokens {
		if tok != "" {
			planted = append(planted, tok)
		}
	}
	apiHost.mu.Unlock()
	creds, _ := os.ReadFile(store.Path())
	var f struct {
		Accounts map[string]struct {
			RefreshToken string `json:"refresh_token"`
		} `json:"accounts"`
	}
	json.Unmarshal(creds, &f)
	planted = append(planted, f.Accounts["api"].RefreshToken)
	assertNoSecrets(t, b, logs.String(), planted)
}

// assertNoSecrets greps the database, the log and the JSON of every view
// a front end gets (--json) for each secret, and returns what it read. It
// closes the database.
func assertNoSecrets(t *testing.T, b *bundle, logs string, secrets []string) (stored []byte, views string) {
	t.Helper()
	ctx := context.Background()
	var vb bytes.Buffer
	enc := json.NewEncoder(&vb)
	att, _ := b.e.Attention(ctx)
	wfs, _ := b.e.Workflows(ctx)
	enc.Encode(att)
	enc.Encode(wfs)
	for _, w := range wfs {
		enc.Encode(b.mutations(w.Name))
		runs := b.runs(w.Name)
		enc.Encode(runs)
		for _, r := range runs {
			tr, _ := b.e.Trace(ctx, r.ID)
			enc.Encode(tr)
		}
	}
	if accts, err := b.e.Accounts(ctx); err == nil {
		enc.Encode(accts)
	}
	b.db.Close() // the WAL is folded into the file; read every byte of both anyway
	for _, p := range []string{b.dbPath, b.dbPath + "-wal"} {
		if data, err := os.ReadFile(p); err == nil {
			stored = append(stored, data...)
		}
	}
	views = vb.String()
	if len(stored) == 0 || views == "" {
		t.Fatal("read nothing to grep")
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("an empty secret to look for")
		}
		if bytes.Contains(stored, []byte(s)) {
			t.Errorf("the database holds %q", s)
		}
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %q", s)
		}
		if strings.Contains(views, s) {
			t.Errorf("a view (--json: a trace, run, ledger row, attention item) holds %q", s)
		}
	}
	return stored, views
}
