package mail

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

// within runs call and fails the test if it has not returned after limit:
// a timeout that is not enforced shows up as a hang, not a slow pass.
func within(t *testing.T, limit time.Duration, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still waiting after %v", limit)
		return nil
	}
}

// greetThenSilent greets like an IMAP server and then never answers.
func greetThenSilent(t *testing.T) string {
	t.Helper()
	return serveEach(t, func(c net.Conn) {
		defer c.Close()
		fmt.Fprintf(c, "* OK [CAPABILITY IMAP4rev1] ready\r\n")
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
	})
}

func TestTimeouts(t *testing.T) {
	t.Parallel()

	t.Run("A TLS handshake that never completes ends at the dial timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, func(cfg *Config) {
			cfg.TLS, cfg.IMAP, cfg.SMTP = TLSImplicit, silentAddr(t), silentAddr(t)
			cfg.DialTimeout, cfg.Timeout = 200*time.Millisecond, 10*time.Minute
		})
		err := within(t, 20*time.Second, func() error {
			_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
			return err
		})
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("imap: %v", err)
		}
		err = within(t, 20*time.Second, func() error {
			_, err := c.Do(context.Background(), sendCall("dial", map[string]any{"to": "a@example.org"}))
			return err
		})
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("smtp: %v", err)
		}
	})

	t.Run("An IMAP server that stops answering ends at the command timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, func(cfg *Config) {
			cfg.IMAP = greetThenSilent(t)
			cfg.CommandTimeout, cfg.Timeout = 300*time.Millisecond, 10*time.Minute
		})
		err := within(t, 20*time.Second, func() error {
			_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
			return err
		})
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("No reply to the final dot within the command timeout is uncertain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.smtp.setMode(failHangAfterData)
		c := b.connector(t, func(cfg *Config) { cfg.CommandTimeout, cfg.Timeout = 300*time.Millisecond, 10*time.Minute })
		err := within(t, 20*time.Second, func() error {
			_, err := c.Do(context.Background(), sendCall("hang", map[string]any{"to": "a@example.org"}))
			return err
		})
		if connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("got %v", err)
		}
	})
}

func TestAccounts(t *testing.T) {
	t.Parallel()

	t.Run("A token never shows in an error, even when the server echoes it", func(t *testing.T) {
		t.Parallel()
		acct := &fakeAccount{user: "me@example.org", tokens: []string{"ya29.secret-token"}}
		c, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", Account: acct})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.credentials(context.Background()); err != nil {
			t.Fatal(err)
		}
		ir := base64.StdEncoding.EncodeToString([]byte("user=me@example.org\x01auth=Bearer ya29.secret-token\x01\x01"))
		e := c.fail(context.Background(), connectors.Auth, "login", fmt.Errorf("bad: ya29.secret-token %s", ir))
		if strings.Contains(e.Error(), "secret-token") || strings.Contains(e.Error(), ir) {
			t.Fatalf("not redacted: %v", e)
		}
	})

	t.Run("An account that must sign in again is an auth failure naming it", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		acct := &fakeAccount{name: "google", user: testUser, err: connectors.Errorf(connectors.Auth, "refresh refused")}
		c := b.connector(t, func(cfg *Config) { cfg.Account = acct })
		_, err := c.Do(context.Background(), connectors.Call{Method: "search"})
		if connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), "google") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A password account logs in with PLAIN or LOGIN", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		acct := &fakeAccount{kind: "password", user: testUser, tokens: []string{testPassword}}
		c := b.connector(t, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Account = "", "", acct })
		do(t, c, "search", nil)
		if _, err := c.Do(context.Background(), sendCall("acct-pw", map[string]any{"to": "a@example.org"})); err != nil {
			t.Fatal(err)
		}
		if m, _ := c.mechanism(creds{user: testUser}, []string{"LOGIN"}); m != AuthLogin {
			t.Fatalf("LOGIN only: %s", m)
		}
		if m, _ := c.mechanism(creds{user: testUser}, []string{"PLAIN", "LOGIN"}); m != AuthPlain {
			t.Fatalf("PLAIN and LOGIN: %s", m)
		}
	})

	t.Run("A token is refused where the server offers no OAuth mechanism", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		acct := &fakeAccount{user: testUser, tokens: []string{"tok"}}
		c := b.connector(t, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Account = "", "", acct })
		_, err := c.Do(context.Background(), sendCall("acct-tok", map[string]any{"to": "a@example.org"}))
		if connectors.ClassOf(err) != connectors.Auth || !strings.Contains(err.Error(), "XOAUTH2") {
			t.Fatalf("got %v", err)
		}
		if n := len(b.smtp.accepted()); n != 0 {
			t.Fatalf("%d sent", n)
		}
	})
}

func TestSpecialUse(t *testing.T) {
	t.Parallel()

	// The positive case (a "Sent Items" found by its attribute) runs
	// against Dovecot in TestRealServers: go-imap's in-memory server never
	// reports SPECIAL-USE attributes.
	t.Run("No \\Sent mailbox and no sent_folder is reported, not guessed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.SentFolder, cfg.ServerFilesSent = "", false })
		res, err := c.Do(context.Background(), sendCall("su-2", map[string]any{"to": "a@example.org"}))
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := res.(map[string]any)["sentCopyError"].(string); !strings.Contains(e, "sent_folder") {
			t.Fatalf("got %v", res)
		}
	})
}

func TestAttachments(t *testing.T) {
	t.Parallel()

	raw := "From: ann@example.org\r\nTo: " + testUser + "\r\nSubject: Invoice\r\nMessage-ID: <att@example.org>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n" +
		"--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee attached.\r\n" +
		"--XX\r\nContent-Type: application/pdf; name=\"inv.pdf\"\r\nContent-Disposition: attachment; filename=\"inv.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 twelve")) + "\r\n" +
		"--XX\r\nContent-Type: image/png; name=\"logo.png\"\r\nContent-Disposition: inline; filename=\"logo.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString([]byte("PNGDATA")) + "\r\n" +
		"--XX--\r\n"

	t.Run("Get lists attachments and gives their content on request, capped", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.appendRaw(t, "INBOX", raw)
		c := b.connector(t, nil)
		id := firstID(t, c, "INBOX")

		plain := do(t, c, "get", map[string]any{"id": id})
		atts := plain["attachments"].([]any)
		if plain["text"] != "See attached.\r\n" && plain["text"] != "See attached." || len(atts) != 2 {
			t.Fatalf("get: %v", plain)
		}
		pdf := atts[0].(map[string]any)
		if pdf["name"] != "inv.pdf" || pdf["type"] != "application/pdf" || pdf["size"] != int64(15) || pdf["content"] != nil {
			t.Fatalf("pdf: %v", pdf)
		}
		full := do(t, c, "get", map[string]any{"id": id, "attachments": true, "maxBytes": 10})
		atts = full["attachments"].([]any)
		if atts[0].(map[string]any)["content"] != nil || atts[0].(map[string]any)["omitted"] == nil {
			t.Fatalf("over the cap: %v", atts[0])
		}
		if got := atts[1].(map[string]any)["content"]; got != base64.StdEncoding.EncodeToString([]byte("PNGDATA")) {
			t.Fatalf("png content %v", got)
		}
		if _, err := c.Do(context.Background(), connectors.Call{Method: "get", Params: map[string]any{"id": id, "maxBytes": 0}}); connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("maxBytes 0: %v", err)
		}
	})
}

func TestReference(t *testing.T) {
	t.Parallel()

	t.Run("Every method is documented, and every mutation says how it is reconciled", func(t *testing.T) {
		t.Parallel()
		c, _ := Gmail(Config{})
		names := map[string]bool{}
		for _, m := range c.Methods() {
			names[m.Name] = true
			if m.Doc == "" || m.Result == "" || m.Example == "" || len(m.Args) == 0 {
				t.Errorf("%s is missing reference fields: %+v", m.Name, m)
			}
			if !strings.Contains(m.Example, "ctx.") || !strings.Contains(m.Example, m.Name+"(") {
				t.Errorf("%s: example %q does not call it", m.Name, m.Example)
			}
			if m.Kind == connectors.Mutate && (m.Reconcile == "" || m.Preview == nil || m.Check == nil || m.Scope == nil) {
				t.Errorf("mutation %s lacks Reconcile, Preview, Check or Scope", m.Name)
			}
			for _, a := range m.Args {
				if a.Name == "" || a.Type == "" || a.Doc == "" {
					t.Errorf("%s: arg %+v", m.Name, a)
				}
			}
		}
		for _, want := range []string{"search", "get", "send", "markRead", "markUnread", "flag", "unflag", "move", "label"} {
			if !names[want] {
				t.Errorf("no method %s", want)
			}
		}
	})
}
