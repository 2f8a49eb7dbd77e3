package clitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors/accounts/oauthtest"
	"keep/engine/api"
)

// TestDaemonUsesANewSignInAtOnce: with a provider that gives no refresh
// token, a token the API refuses blocks a daemon's workflow as auth;
// keep auth login from the command line then resumes it, and the daemon
// calls the API with the new token at once, without a restart (it used to
// hold the account as refused and block again).
func TestDaemonUsesANewSignInAtOnce(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	srv.NoRefresh = true
	var posts atomic.Int32
	apiHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !srv.Active(oauthtest.Bearer(r)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		fmt.Fprintf(w, `{"id":"i%d"}`, time.Now().UnixNano())
	}))
	defer apiHost.Close()
	e := newEnv(t, "allow")
	cfg, _ := os.ReadFile(e.config)
	e.writeConfig(string(cfg) + fmt.Sprintf(`
[accounts.api]
kind = "oauth2"
client_id = %q
auth_url = %q
token_url = %q
scopes = ["read"]

[connectors.http.hosts.%q]
account = "api"
`, srv.ClientID, srv.AuthURL(), srv.TokenURL(), strings.TrimPrefix(apiHost.URL, "http://")))
	if r := loginThroughBrowser(t, e, srv, srv.ClientSecret+"\n", "api"); !strings.Contains(r.stdout, "no refresh token") {
		t.Fatalf("the sign-in does not say there is no refresh token:\n%s", r)
	}
	src, err := os.ReadFile("../testdata/sync.js")
	if err != nil {
		t.Fatal(err)
	}
	e.ok("deploy", e.file(e.dir, "sync.js", strings.ReplaceAll(string(src), "API", `"`+apiHost.URL+`"`)))
	e.ok("drain", "--timeout", "1m")
	if posts.Load() != 1 {
		t.Fatalf("%d posts after the first drain", posts.Load())
	}

	d := startDaemon(t, e)
	defer d.kill(t)
	awaitSocket(t, e, d, 30*time.Second)
	srv.ExpireAccess() // the API stops taking the token; nothing can refresh it
	e.ok("run-now", "sync")
	await := func(what string, done func(wfs []api.WorkflowView) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			wfs := jsonOf[[]api.WorkflowView](e, "workflows")
			if done(wfs) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: workflows %+v, %d posts", what, wfs, posts.Load())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	await("the daemon did not block sync as auth", func(wfs []api.WorkflowView) bool {
		return len(wfs) == 1 && wfs[0].Block != nil && wfs[0].Block.Kind == "auth" && strings.Contains(wfs[0].Block.Reason, "keep auth login api")
	})

	r := loginThroughBrowser(t, e, srv, "", "api")
	if !strings.Contains(r.stdout, "resumed sync") {
		t.Errorf("keep auth login says:\n%s", r)
	}
	await("the daemon did not go on with the new token", func(wfs []api.WorkflowView) bool {
		return len(wfs) == 1 && wfs[0].Block == nil && posts.Load() >= 2
	})
}
