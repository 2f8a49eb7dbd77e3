package engine

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	b.deploy("leak", `export default Keep.workflow({ name: "leak", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    console.log(JSON.stringify(Object.keys(ctx)), JSON.stringify(ctx.slack), String(ctx.gmail.search));
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "1", title: "Tick" });
    await ctx.publish("t", { messageId: "1", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.slack.post({ channel: "C1", text: "hi" }); },
    async next() {} }) } });`)
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
