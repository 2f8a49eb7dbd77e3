package engine

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"keep/engine/config"
)

// TestSecretsStayOut: a token and a password configured for real
// connectors never reach a script, a trace, a ledger row or the log, even
// when the calls fail and their errors are recorded.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	const token, password = "xoxb-very-secret-token", "hunter2-very-secret"
	slackAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// a hostile service echoing the credential back in its error
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":false,"error":"invalid_auth","echo":"` + r.Header.Get("Authorization") + `"}`))
	}))
	defer slackAPI.Close()
	b := setup(t, allowMutations, func(c *config.Config) {
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

	b.db.Close() // the WAL is folded into the file; read every byte of both anyway
	var stored []byte
	for _, p := range []string{b.dbPath, b.dbPath + "-wal"} {
		data, err := os.ReadFile(p)
		if err == nil {
			stored = append(stored, data...)
		}
	}
	if len(stored) == 0 {
		t.Fatal("read nothing of the database")
	}
	for _, secret := range []string{token, password} {
		if bytes.Contains(stored, []byte(secret)) {
			t.Errorf("the database holds %q", secret)
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	if !bytes.Contains(stored, []byte("invalid_auth")) {
		t.Error("the refusal itself was not recorded: the check above proves nothing")
	}
}
