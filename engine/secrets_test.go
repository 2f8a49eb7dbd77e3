package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/config"
)

// TestSecretsStayOut: a token and a password configured for real
// connectors, and an account's token held for an HTTP host, never reach a
// script, a trace, a ledger row, a repair request or the log, even when
// the calls fail, a run is repaired and their errors are recorded.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	const token, password, accountToken = "xoxb-very-secret-token", "hunter2-very-secret", "tok-account-very-secret"
	slackAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// a hostile service echoing the credential back in its error
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":false,"error":"invalid_auth","echo":"` + r.Header.Get("Authorization") + `"}`))
	}))
	defer slackAPI.Close()
	// an API behind an account: reads answer, changes are refused (401)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+accountToken {
			t.Errorf("the API got Authorization %q", r.Header.Get("Authorization"))
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"id":"x1"}`))
	}))
	defer api.Close()
	confDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(confDir, "credentials.json"),
		[]byte(`{"accounts":{"api":{"secret":"`+accountToken+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b := setup(t, allowMutations, func(c *config.Config) {
		c.Path = filepath.Join(confDir, "config.toml")
		c.Accounts = map[string]config.Account{"api": {Kind: "token"}}
		c.Connectors.HTTP.Hosts = map[string]config.HTTPHost{strings.TrimPrefix(api.URL, "http://"): {Account: "api"}}
		c.Connectors.Slack.APIBase = slackAPI.URL
		c.Connectors.Slack.Token = token
		c.Connectors.Mail.IMAP = "127.0.0.1:1" // nothing listens: the read fails
		c.Connectors.Mail.SMTP = "127.0.0.1:2"
		c.Connectors.Mail.Password = password
		c.Connectors.Mail.Username = "me@example.com"
		c.Connectors.Mail.TLS = "none"
	})
	var logs bytes.Buffer
	b.e.log = slog.New(slog.NewTextHandler(&logs, nil))
	// ctx itself cannot be looked into (Object.keys(ctx), ctx.slack whole):
	// what keep cannot name is refused at deploy; its methods can be
	inspect := `console.log(JSON.stringify(Object.keys(ctx)), JSON.stringify(ctx.slack), String(ctx.gmail.search));`
	leak := `export default Keep.workflow({ name: "leak", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    INSPECT
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "1", title: "Tick" });
    await ctx.publish("t", { messageId: "1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.slack.post({ channel: "C1", text: "hi" }); },
    async next() {} }) } });`
	if _, err := b.e.Deploy(context.Background(), "leak.js", []byte(strings.Replace(leak, "INSPECT", inspect, 1)), ""); err == nil ||
		!strings.Contains(err.Error(), "leak.js:3:44: ctx (ctx) is used in a way keep cannot follow") {
		t.Fatalf("deploy of a script that looks into ctx: err = %v", err)
	}
	b.deploy("leak", strings.Replace(leak, "INSPECT", `console.log(String(ctx.slack.post), String(ctx.gmail.search));`, 1))
	b.drain()
	if ms := b.mutations("leak"); len(ms) != 1 || ms[0].Status != "failed" {
		t.Fatalf("mutations = %+v, want the refused post recorded", ms)
	}
	// a second workflow whose read of the mailbox fails
	b.deploy("mail", `export default Keep.workflow({ name: "mail", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => { await ctx.gmail.search({}); } } },
  consumers: {} });`)
	b.drain()
	// a third whose consumer is repaired, then refused by the API
	fixed := `export default Keep.workflow({ name: "acct", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.http.get({ url: API });
    const id = ctx.registerInput({ source: "http", type: "resource", id: r.json.id, title: "Item" });
    await ctx.publish("t", { messageId: r.json.id, inputId: id, payload: r.json });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POST", url: API, json: {} }); },
    async next() {} }) } });`
	fixed = strings.ReplaceAll(fixed, "API", `"`+api.URL+`"`)
	r, seen := commandRepairer(t, fixed)
	b.e.repair = r
	b.deploy("acct", strings.Replace(fixed, "async prepare(ctx) {", "async prepare(ctx) { throw new Error(\"bug\");", 1))
	b.drain()
	b.accept("acct") // a repair is only a proposal (proposal.go)
	if w := b.workflow("acct"); w.Version != 2 || w.Block == nil || w.Block.Kind != "auth" || !strings.Contains(w.Block.Reason, "keep auth login api") {
		t.Fatalf("acct = version %d, block %+v; want repaired, then blocked on signing in to api", w.Version, w.Block)
	}
	repairReq, err := os.ReadFile(seen)
	if err != nil || bytes.Contains(repairReq, []byte(accountToken)) {
		t.Errorf("the repair request (%v) holds the account's token", err)
	}
	stored, views := assertNoSecrets(t, b, logs.String(), []string{token, password, accountToken})
	if !strings.Contains(views, "Authorization: [held by host]") {
		t.Error("the ledger does not show the held credential as held")
	}
	if !bytes.Contains(stored, []byte("invalid_auth")) {
		t.Error("the refusal itself was not recorded: the check above proves nothing")
	}
}

// TestHeldSecretsRedacted: a service behind a basic account echoes what it
// was sent (the Authorization header, and the password itself) in its
// body, its headers and its error text; a Slack token from the
// environment is echoed the same way. The host redacts every held value
// from what a connector answers, so none of it reaches a script's
// console, a trace, the ledger, the `--json` views, keep.log or a backup.
func TestHeldSecretsRedacted(t *testing.T) {
	const password, envToken = "pa55word-held-by-keep", "xoxb-env-token-held-by-keep"
	echo := func(w http.ResponseWriter, r *http.Request) (string, string) {
		auth := r.Header.Get("Authorization")
		_, pw, _ := r.BasicAuth()
		w.Header().Set("X-Echo-Auth", auth)
		w.Header().Set("X-Echo-"+pw, pw) // even in a header's name
		w.Header().Set("Content-Type", "application/json")
		return auth, pw
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, pw := echo(w, r)
		if pw != password {
			t.Errorf("the API got Authorization %q", auth)
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusBadRequest) // the error text quotes it
		}
		fmt.Fprintf(w, `{"id":"x1","auth":%q,"password":%q,"raw":"%s"}`, auth, pw, pw)
	}))
	defer api.Close()
	slackAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo(w, r)
		fmt.Fprintf(w, `{"ok":true,"messages":[{"ts":"1.0","text":%q}]}`, r.Header.Get("Authorization"))
	}))
	defer slackAPI.Close()
	t.Setenv("KEEP_TEST_SLACK_TOKEN", envToken)
	confDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(confDir, "credentials.json"),
		[]byte(`{"accounts":{"api":{"secret":"`+password+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b := setup(t, allowMutations, func(c *config.Config) {
		c.Path = filepath.Join(confDir, "config.toml")
		c.Accounts = map[string]config.Account{"api": {Kind: "basic", Username: "me"}}
		c.Connectors.HTTP.Hosts = map[string]config.HTTPHost{strings.TrimPrefix(api.URL, "http://"): {Account: "api"}}
		c.Connectors.Slack.APIBase = slackAPI.URL
		c.Connectors.Slack.TokenEnv = "KEEP_TEST_SLACK_TOKEN"
	})
	// the engine logs to a real keep.log, as main wires it
	logPath := filepath.Join(filepath.Dir(b.dbPath), "keep.log")
	logger, closer, err := OpenLog(logPath, 1, slog.LevelDebug)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	b.e.log = RedactLogs(logger, b.e.reg.Held())
	src := `export default Keep.workflow({ name: "echo", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const r = await ctx.http.get({ url: API });
    const h = await ctx.slack.history({ channel: "C1" });
    console.log(JSON.stringify(r), JSON.stringify(h));
    const id = ctx.registerInput({ source: "http", type: "resource", id: r.json.password, title: r.headers["x-echo-auth"] });
    await ctx.publish("t", { messageId: r.json.id, inputId: id, payload: { r, h } });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: e.payload } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POST", url: API, json: {} }); },
    async next() {} }) } });`
	b.deploy("echo", strings.ReplaceAll(src, "API", `"`+api.URL+`"`))
	b.drain()
	ms := b.mutations("echo")
	if len(ms) != 1 || ms[0].Status != "failed" {
		t.Fatalf("mutations = %+v, want the refused POST recorded", ms)
	}
	b.e.log.Warn("a line naming "+password, "err", fmt.Errorf("echoed %s", envToken))
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := b.e.Backup(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	closer.Close()
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("me:" + password))
	secrets := []string{password, envToken, basic}
	stored, views := assertNoSecrets(t, b, string(logs), secrets)
	for _, s := range secrets {
		if bytes.Contains(saved, []byte(s)) {
			t.Errorf("the backup holds %q", s)
		}
	}
	// the checks above prove something only if the echoes were kept
	for what, text := range map[string]string{"views": views, "database": string(stored), "log": string(logs)} {
		if !strings.Contains(text, connectors.Redacted) {
			t.Errorf("the %s show no redacted echo: the check proves nothing", what)
		}
	}
	if !strings.Contains(views, "400 Bad Request") {
		t.Error("the refusal's error text was not recorded")
	}
}
