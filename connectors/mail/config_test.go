package mail

import (
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

func TestConfig(t *testing.T) {
	t.Parallel()

	t.Run("Zero fields take the documented defaults", func(t *testing.T) {
		t.Parallel()
		c, err := New(Config{Username: "me@gmail.com"})
		if err != nil {
			t.Fatal(err)
		}
		want := Config{
			Preset: PresetGmail, IMAP: "imap.gmail.com:993", SMTP: "smtp.gmail.com:587", Username: "me@gmail.com", From: "me@gmail.com",
			Inbox: "INBOX", ServerFilesSent: true, NoSelfCopy: true,
			DialTimeout: 15 * time.Second, CommandTimeout: time.Minute, Timeout: 2 * time.Minute,
		}
		if c.cfg != want {
			t.Fatalf("got %+v", c.cfg)
		}
		if c.cfg.tlsModeFor(c.cfg.IMAP) != TLSImplicit || c.cfg.tlsModeFor(c.cfg.SMTP) != TLSStartTLS {
			t.Fatalf("tls modes %s %s", c.cfg.tlsModeFor(c.cfg.IMAP), c.cfg.tlsModeFor(c.cfg.SMTP))
		}
	})

	t.Run("The gmail preset fills in Gmail and leaves filing Sent to it", func(t *testing.T) {
		t.Parallel()
		c, err := Gmail(Config{Username: "me@gmail.com", IMAP: "127.0.0.1:1993", SMTP: "127.0.0.1:1587"})
		if err != nil {
			t.Fatal(err)
		}
		if !c.cfg.ServerFilesSent || !c.cfg.NoSelfCopy || c.cfg.SentFolder != "" || c.Name() != "mail" {
			t.Fatalf("got %+v", c.cfg)
		}
		// A token goes out as XOAUTH2 even where the server lists none.
		if m, err := c.mechanism(creds{user: "me@gmail.com", bearer: true}, nil); m != AuthXOAuth2 || err != nil {
			t.Fatalf("mechanism %q %v", m, err)
		}
		g, _ := Gmail(Config{})
		if g.cfg.IMAP != "imap.gmail.com:993" || g.cfg.SMTP != "smtp.gmail.com:587" ||
			g.cfg.tlsModeFor(g.cfg.IMAP) != TLSImplicit || g.cfg.tlsModeFor(g.cfg.SMTP) != TLSStartTLS {
			t.Fatalf("hosts %+v", g.cfg)
		}
		// Without the preset, the same host still means Gmail.
		n, _ := New(Config{IMAP: "imap.gmail.com:993"})
		if n.cfg.Preset != PresetGmail || !n.cfg.ServerFilesSent {
			t.Fatalf("imap.gmail.com without preset: %+v", n.cfg)
		}
		o, _ := New(Config{IMAP: "mail.example.org:993", SMTP: "mail.example.org:587"})
		if o.cfg.ServerFilesSent || o.cfg.NoSelfCopy {
			t.Fatalf("another server: %+v", o.cfg)
		}
	})

	t.Run("A login name that is not an address needs from", func(t *testing.T) {
		t.Parallel()
		_, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", Username: "alice"})
		if err == nil || !strings.Contains(err.Error(), "from is required") {
			t.Fatalf("got %v", err)
		}
		if _, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", Username: "alice", From: "alice"}); err == nil || !strings.Contains(err.Error(), "from") {
			t.Fatalf("from without a domain: %v", err)
		}
		c, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", Username: "alice", From: "alice@example.org"})
		if err != nil || c.cfg.From != "alice@example.org" || c.selfAddress() != "alice@example.org" {
			t.Fatalf("%v %+v", err, c)
		}
		a, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", Account: &fakeAccount{user: "bob@example.org"}})
		if err != nil || a.cfg.From != "bob@example.org" {
			t.Fatalf("from the account: %v %+v", err, a)
		}
	})

	t.Run("Bad settings are refused with their name", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			cfg  Config
			want string
		}{
			{Config{TLS: "sometimes"}, "tls"},
			{Config{Auth: "cram-md5"}, "auth"},
			{Config{Preset: "yahoo"}, "preset"},
			{Config{CAFile: "/nonexistent/ca.pem"}, "ca_file"},
			{Config{IMAP: "no-port"}, "imap"},
			{Config{SMTP: "mail.example.com:587", TLS: TLSNone, IMAP: "127.0.0.1:143"}, "loopback smtp"},
		} {
			if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v", tc.cfg, err)
			}
		}
	})

	t.Run("It registers under mail and gmail with both input sources", func(t *testing.T) {
		t.Parallel()
		c, _ := Gmail(Config{})
		r := connectors.NewRegistry()
		r.Register(c, "gmail")
		for _, src := range []string{"mail", "gmail"} {
			for _, typ := range []string{"email", "thread"} {
				if err := r.CheckInput(src, typ); err != nil {
					t.Error(err)
				}
			}
		}
		_, m, err := r.Lookup("gmail", "send")
		if err != nil || m.Kind != connectors.Mutate || m.Scope == nil || m.Preview == nil || m.Check == nil {
			t.Fatalf("send: %+v %v", m, err)
		}
		for name, kind := range map[string]connectors.Kind{"search": connectors.Read, "get": connectors.ReadByID} {
			if _, m, err := r.Lookup("mail", name); err != nil || m.Kind != kind {
				t.Errorf("%s: %+v %v", name, m, err)
			}
		}
	})
}

func TestSendDescriptions(t *testing.T) {
	t.Parallel()

	params := map[string]any{
		"to":      []any{"Ann <a@x.com>", "b@Y.org"},
		"subject": "Subject",
		"body":    strings.Repeat("é", 123),
	}

	t.Run("Scope is the recipient domains sorted and unique", func(t *testing.T) {
		t.Parallel()
		if got := sendScope(params); got != "x.com,y.org" {
			t.Errorf("got %q", got)
		}
		if got := sendScope(map[string]any{"to": "a@x.com, c@x.com", "bcc": "z@z.net"}); got != "x.com,z.net" {
			t.Errorf("with bcc: %q", got)
		}
		if got := sendScope(map[string]any{"to": 5}); got != "" {
			t.Errorf("bad params: %q", got)
		}
	})

	t.Run("Preview shows recipients, subject and length", func(t *testing.T) {
		t.Parallel()
		if got := sendPreview(params); got != `send to a@x.com, b@Y.org: "Subject" (123 chars)` {
			t.Errorf("got %s", got)
		}
		p := map[string]any{"to": "a@x.com", "cc": "c@x.com", "bcc": "d@z.net", "subject": "Hi", "body": "yo"}
		if got := sendPreview(p); got != `send to a@x.com (cc c@x.com; bcc d@z.net): "Hi" (2 chars)` {
			t.Errorf("got %s", got)
		}
	})

	t.Run("Check says where to look: never a Sent folder keep did not fill", func(t *testing.T) {
		t.Parallel()
		base := Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", TLS: TLSNone, Username: "me@example.com"}
		for _, tc := range []struct {
			edit func(*Config)
			want string
		}{
			{func(c *Config) { c.ServerFilesSent = true }, `look in your Sent folder for "Subject" to a@x.com, b@Y.org`},
			{func(c *Config) {}, `look in the inbox of me@example.com for the copy of "Subject"`},
			{func(c *Config) { c.NoSelfCopy = true }, `ask a@x.com, b@Y.org whether "Subject" arrived`},
		} {
			got := newConnector(t, base, tc.edit).sendCheck(params)
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %s, want %s…", got, tc.want)
			}
		}
	})
}

func TestMessageID(t *testing.T) {
	t.Parallel()
	withSecret := func(secret string) *Connector {
		c, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", TLS: TLSNone, Username: "me@example.com", MessageIDSecret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("An id is 128 bits and more of base64url, the same for one key and secret", func(t *testing.T) {
		t.Parallel()
		c := withSecret("s1")
		id := c.messageIDFor("keep-abc-42")
		body, ok := strings.CutPrefix(id, "<keep-")
		body, ok2 := strings.CutSuffix(body, "@keep.invalid>")
		if !ok || !ok2 || len(body)*6 < 128 || strings.Trim(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			t.Fatalf("id %s", id)
		}
		if strings.Contains(id, "abc-42") {
			t.Errorf("id %s shows its key", id)
		}
		if withSecret("s1").messageIDFor("keep-abc-42") != id {
			t.Errorf("another connector under the same secret gave another id")
		}
		if c.messageIDFor("keep-abc-43") == id || c.messageIDFor("run/1") == c.messageIDFor("run:1") {
			t.Errorf("two keys gave one id")
		}
	})

	t.Run("The host's secret replaces the connector's own", func(t *testing.T) {
		t.Parallel()
		c := withSecret("")
		c.UseSecret([]byte("s1"))
		if c.messageIDFor("keep-abc-42") != withSecret("s1").messageIDFor("keep-abc-42") {
			t.Fatalf("a connector handed the host's secret makes another id than one configured with it")
		}
	})

	t.Run("Without the secret the id cannot be made, nor passed off", func(t *testing.T) {
		t.Parallel()
		a, b := withSecret("s1"), withSecret("s2")
		id := a.messageIDFor("keep-abc-42")
		if b.messageIDFor("keep-abc-42") == id {
			t.Fatalf("two secrets gave one id")
		}
		if !a.isOwnMessageID(id) || b.isOwnMessageID(id) {
			t.Errorf("own %t under its secret, %t under another", a.isOwnMessageID(id), b.isOwnMessageID(id))
		}
		// one bit of the tag changed: the check no longer holds
		forged := []byte(id)
		if forged[6] == 'A' {
			forged[6] = 'B'
		} else {
			forged[6] = 'A'
		}
		for _, s := range []string{string(forged), "<keep-abc-42@keep.invalid>", "<keep-keep-abc-42@keep.invalid>", "<keep-@keep.invalid>"} {
			if a.isOwnMessageID(s) {
				t.Errorf("%s taken for keep's", s)
			}
		}
		if withSecret("").messageIDFor("k") == withSecret("").messageIDFor("k") {
			t.Errorf("two connectors without a secret share one")
		}
	})
}

func TestHTMLToText(t *testing.T) {
	t.Parallel()

	t.Run("Tags, scripts and entities become plain text", func(t *testing.T) {
		t.Parallel()
		in := `<div>Hi&nbsp;<b>there</b><script>alert(1)</script><!-- x --></div><br><p>a &lt; b</p>`
		if got := htmlToText(in); got != "Hi there\n\na < b" {
			t.Errorf("got %q", got)
		}
	})
}
