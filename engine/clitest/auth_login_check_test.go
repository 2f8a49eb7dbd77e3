package clitest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestAuthLoginChecksTheSecret: keep auth login checks what it stored as
// keep auth test does before it says "signed in"; a secret the service
// refuses does not replace one that works unless --force; where nothing
// can check a secret, it says "stored, not checked".
func TestAuthLoginChecksTheSecret(t *testing.T) {
	t.Parallel()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, pw, ok := r.BasicAuth(); !ok || u != "me" || pw != "right-password" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"me":true}`)
	}))
	defer svc.Close()
	e := newEnv(t, "allow")
	cfg, _ := os.ReadFile(e.config)
	e.writeConfig(string(cfg) + fmt.Sprintf(`
[accounts.web]
kind = "basic"
username = "me"

[accounts.spare]
kind = "token"

[connectors.http.hosts.%q]
account = "web"
test_url = %q
`, strings.TrimPrefix(svc.URL, "http://"), svc.URL+"/me"))
	login := func(secret string, args ...string) result {
		t.Helper()
		cmd := e.command(context.Background(), append([]string{"auth", "login"}, args...)...)
		cmd.Stdin = strings.NewReader(secret + "\n")
		return runCmd(t, cmd)
	}

	if r := login("wrong-password", "web"); r.code != 1 || !strings.Contains(r.stderr, "refused") || strings.Contains(r.stdout, "signed in") {
		t.Fatalf("a first, refused secret: %s", r)
	}
	if r := login("right-password", "web"); r.code != 0 || !strings.Contains(r.stdout, "signed in to web (checked") {
		t.Fatalf("a secret the service takes: %s", r)
	}
	r := login("wrong-password", "web")
	if r.code != 1 || !strings.Contains(r.stderr, "refused") || !strings.Contains(r.stderr, "works and is kept") || strings.Contains(r.stdout, "signed in") {
		t.Fatalf("a refused secret over a working one: %s", r)
	}
	e.ok("auth", "test", "web") // the working one is still there
	if r := login("wrong-password", "web", "--force"); r.code != 1 || !strings.Contains(r.stderr, "stored, but refused") {
		t.Fatalf("a refused secret with --force: %s", r)
	}
	e.expect(1, "auth", "test", "web") // the person asked for it

	if r := login("some-token", "spare"); r.code != 0 || !strings.Contains(r.stdout, "stored, not checked") || strings.Contains(r.stdout, "signed in") {
		t.Fatalf("a secret nothing can check: %s", r)
	}
}
