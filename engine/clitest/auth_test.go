package clitest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors/accounts"
	"keep/connectors/accounts/oauthtest"
	"keep/engine/api"
)

// loginThroughBrowser runs keep auth login NAME with stdin, visiting the
// address it prints as the user's browser would.
func loginThroughBrowser(t *testing.T, e *env, srv *oauthtest.Server, stdin string, name string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.command(ctx, "auth", "login", name)
	cmd.Stdin = strings.NewReader(stdin)
	browser := srv.Browser()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = io2(&out, browser), &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		t.Fatalf("keep auth login %s: %v\n%s", name, err, r)
	}
	return r
}

type multi []interface{ Write([]byte) (int, error) }

func (m multi) Write(p []byte) (int, error) {
	for _, w := range m {
		w.Write(p)
	}
	return len(p), nil
}

func io2(a, b interface{ Write([]byte) (int, error) }) multi { return multi{a, b} }

// TestAuthCommands: keep auth signs in (a password from stdin, OAuth in a
// browser), lists, tests and signs out; a revoked grant pauses a workflow
// with the command that fixes it in keep attention, and signing in again
// resumes it through a running daemon. No secret reaches an output, the
// log or the database.
func TestAuthCommands(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
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

[accounts.mail]
kind = "password"
username = "me@example.com"

[connectors.http.hosts.%q]
account = "api"
test_url = %q
`, srv.ClientID, srv.AuthURL(), srv.TokenURL(), strings.TrimPrefix(apiHost.URL, "http://"), apiHost.URL+"/me"))
	creds := filepath.Join(e.dir, "credentials.json")
	var outputs strings.Builder
	keep := func(code int, args ...string) result {
		r := e.expect(code, args...)
		outputs.WriteString(r.stdout + r.stderr)
		return r
	}

	sts := jsonOf[[]accounts.Status](e, "auth", "list")
	if len(sts) != 2 || sts[0].State != accounts.StateNeedsSignIn || sts[1].State != accounts.StateNeedsSignIn {
		t.Fatalf("before any sign-in: %+v", sts)
	}
	cmd := e.command(context.Background(), "auth", "login", "mail")
	cmd.Stdin = strings.NewReader("pw-very-secret\n")
	// no connector signs in with mail: nothing can check the password
	if r := runCmd(t, cmd); r.code != 0 || !strings.Contains(r.stdout, "stored, not checked") || strings.Contains(r.stdout, "resume") {
		t.Fatalf("login mail, which nothing waited for: %s", r)
	}
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials.json: %v %v, want mode 0600 next to the config", fi, err)
	}
	r := loginThroughBrowser(t, e, srv, srv.ClientSecret+"\n", "api")
	outputs.WriteString(r.stdout + r.stderr)
	keep(0, "auth", "test", "api")
	sts = jsonOf[[]accounts.Status](e, "auth", "list")
	if sts[0].State != accounts.StateOK || sts[1].State != accounts.StateOK {
		t.Fatalf("after signing in: %+v", sts)
	}

	src, err := os.ReadFile("../testdata/sync.js") // the engine's account tests' workflow
	if err != nil {
		t.Fatal(err)
	}
	keep(0, "deploy", e.file(e.dir, "sync.js", strings.ReplaceAll(string(src), "API", `"`+apiHost.URL+`"`)))
	keep(0, "drain", "--timeout", "1m")
	if posts.Load() != 1 {
		t.Fatalf("%d posts after the first drain", posts.Load())
	}

	srv.RevokeAll()
	keep(0, "run-now", "sync")
	keep(0, "drain", "--timeout", "1m")
	att := jsonOf[[]api.AttentionItem](e, "attention")
	if len(att) != 1 || att[0].Kind != "auth" || att[0].Command != "keep auth login api" {
		t.Fatalf("attention = %+v, want the auth item", att)
	}
	if r := keep(0, "attention"); !strings.Contains(r.stdout, "run: keep auth login api") {
		t.Errorf("keep attention does not show the command:\n%s", r.stdout)
	}
	if r := keep(1, "auth", "test", "api"); !strings.Contains(r.stderr, "sign in to api again") {
		t.Errorf("auth test of a revoked grant: %s", r)
	}

	d := startDaemon(t, e)
	killed := false
	defer func() {
		if !killed {
			d.kill(t)
		}
	}()
	awaitSocket(t, e, d, 30*time.Second)
	r = loginThroughBrowser(t, e, srv, "", "api")
	outputs.WriteString(r.stdout + r.stderr)
	if !strings.Contains(r.stdout, "resumed sync") {
		t.Errorf("signing in through a daemon that resumed sync says:\n%s", r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		wfs := jsonOf[[]api.WorkflowView](e, "workflows")
		if len(wfs) == 1 && wfs[0].Block == nil && posts.Load() >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not resume sync after the sign-in: %+v, %d posts", wfs, posts.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	r = loginThroughBrowser(t, e, srv, "", "api")
	if strings.Contains(r.stdout, "resume") {
		t.Errorf("signing in while nothing waited says:\n%s", r)
	}
	d.kill(t)
	killed = true

	keep(0, "auth", "logout", "mail")
	if sts = jsonOf[[]accounts.Status](e, "auth", "list"); sts[1].State != accounts.StateNeedsSignIn {
		t.Errorf("after logout: %+v", sts[1])
	}
	if err := os.Chmod(creds, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := keep(1, "auth", "list"); !strings.Contains(r.stderr, creds) || !strings.Contains(r.stderr, "0644") {
		t.Errorf("a readable credentials file: %s", r)
	}
	os.Chmod(creds, 0o600)

	for _, args := range [][]string{{"auth", "list"}, {"attention"}, {"mutations", "sync"}, {"runs", "sync"}, {"workflows"}} {
		keep(0, append(args, "--json")...)
	}
	keep(0, "logs", "sync")
	data, _ := os.ReadFile(creds)
	secrets := []string{"pw-very-secret", srv.ClientSecret}
	for _, f := range strings.Split(string(data), "\"") {
		if strings.HasPrefix(f, "rt-") || strings.HasPrefix(f, "at-") {
			secrets = append(secrets, f)
		}
	}
	var stored []byte
	for _, p := range []string{e.db, e.db + "-wal", filepath.Join(filepath.Dir(e.db), "keep.log")} {
		b, _ := os.ReadFile(p)
		stored = append(stored, b...)
	}
	for _, s := range secrets {
		if bytes.Contains(stored, []byte(s)) {
			t.Errorf("the database or keep.log holds %q", s)
		}
		if strings.Contains(outputs.String(), s) {
			t.Errorf("an output holds %q", s)
		}
	}
}
