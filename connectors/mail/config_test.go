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
			IMAP: "imap.gmail.com:993", SMTP: "smtp.gmail.com:587", Username: "me@gmail.com", From: "me@gmail.com",
			SentFolder: "[Gmail]/Sent Mail", Inbox: "INBOX", Timeout: 30 * time.Second,
		}
		if c.cfg != want {
			t.Fatalf("got %+v", c.cfg)
		}
		if c.cfg.tlsModeFor(c.cfg.IMAP) != TLSImplicit || c.cfg.tlsModeFor(c.cfg.SMTP) != TLSStartTLS {
			t.Fatalf("tls modes %s %s", c.cfg.tlsModeFor(c.cfg.IMAP), c.cfg.tlsModeFor(c.cfg.SMTP))
		}
	})

	t.Run("The gmail preset never appends to Sent and is still named mail", func(t *testing.T) {
		t.Parallel()
		c, err := Gmail(Config{Username: "me@gmail.com", AppendSent: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.cfg.AppendSent || c.cfg.SentFolder != "[Gmail]/Sent Mail" || c.Name() != "mail" {
			t.Fatalf("got %+v", c.cfg)
		}
	})

	t.Run("Bad settings are refused with their name", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			cfg  Config
			want string
		}{
			{Config{TLS: "sometimes"}, "tls"},
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

	t.Run("Check says where to look", func(t *testing.T) {
		t.Parallel()
		if got := sendCheck(params); got != `look in your Sent folder for "Subject" to a@x.com, b@Y.org` {
			t.Errorf("got %s", got)
		}
	})
}

func TestMessageID(t *testing.T) {
	t.Parallel()

	t.Run("A safe key is kept and any other is hashed", func(t *testing.T) {
		t.Parallel()
		if got := messageIDFor("mut-42"); got != "<keep-mut-42@keep.invalid>" {
			t.Errorf("got %s", got)
		}
		a, b := messageIDFor("run/1"), messageIDFor("run:1")
		if a == b || strings.ContainsAny(a[1:len(a)-1], "/:<> ") {
			t.Errorf("got %s %s", a, b)
		}
		if messageIDFor("run/1") != a {
			t.Errorf("not deterministic")
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
