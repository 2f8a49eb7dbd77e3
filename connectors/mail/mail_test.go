package mail

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/mail"
	"strings"
	"testing"

	"keep/connectors"
)

func do(t *testing.T, c *Connector, method string, params map[string]any) map[string]any {
	t.Helper()
	res, err := c.Do(context.Background(), connectors.Call{Method: method, Params: params})
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res.(map[string]any)
}

func sendCall(key string, params map[string]any) connectors.Call {
	return connectors.Call{Method: "send", Params: params, IdempotencyKey: key}
}

func TestSearch(t *testing.T) {
	t.Parallel()

	t.Run("A cursor returns only newer messages and advances", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "Ann <ann@example.org>", "First", "one")
		b.seed(t, "INBOX", "Bob <bob@example.net>", "Second", "two")
		c := b.connector(t, nil)

		res := do(t, c, "search", nil)
		msgs := res["messages"].([]any)
		if len(msgs) != 2 || res["cursor"] != int64(2) {
			t.Fatalf("first page: %d messages, cursor %v", len(msgs), res["cursor"])
		}
		first := msgs[0].(map[string]any)
		if first["subject"] != "First" || first["uid"] != int64(1) || first["from"] != "Ann <ann@example.org>" {
			t.Fatalf("first message: %v", first)
		}
		if first["snippet"] != "one" || first["messageId"] != "<first@example.org>" || first["date"] != "2006-01-02T15:04:05Z" {
			t.Fatalf("first message: %v", first)
		}
		if to := first["to"].([]any); len(to) != 1 || to[0] != testUser {
			t.Fatalf("to: %v", to)
		}
		if !strings.HasPrefix(first["id"].(string), "INBOX:") || !strings.HasSuffix(first["id"].(string), ":1") {
			t.Fatalf("id: %v", first["id"])
		}

		b.seed(t, "INBOX", "Cy <cy@example.com>", "Third", "three")
		// The cursor comes back from a script as a number or a string.
		for _, after := range []any{res["cursor"], float64(2), "2"} {
			next := do(t, c, "search", map[string]any{"after": after})
			msgs := next["messages"].([]any)
			if len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "Third" || next["cursor"] != int64(3) {
				t.Fatalf("after %v: %v", after, next)
			}
		}
	})

	t.Run("Nothing new returns the given cursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "ann@example.org", "Only", "x")
		res := do(t, b.connector(t, nil), "search", map[string]any{"after": 1})
		// "2:*" matches the last message on a real server: it must be
		// filtered out, not returned again.
		if msgs := res["messages"].([]any); len(msgs) != 0 || res["cursor"] != int64(1) {
			t.Fatalf("got %v", res)
		}
	})

	t.Run("From and subject filter on the server", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "Ann <ann@example.org>", "Invoice March", "pay")
		b.seed(t, "INBOX", "Bob <bob@example.net>", "Invoice April", "pay")
		b.seed(t, "INBOX", "Ann <ann@example.org>", "Lunch", "eat")
		c := b.connector(t, nil)
		res := do(t, c, "search", map[string]any{"from": "ann@", "subject": "invoice"})
		msgs := res["messages"].([]any)
		if len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "Invoice March" {
			t.Fatalf("got %v", msgs)
		}
	})

	t.Run("A limit pages oldest first without skipping", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, s := range []string{"A", "B", "C"} {
			b.seed(t, "INBOX", "ann@example.org", s, s)
		}
		c := b.connector(t, nil)
		res := do(t, c, "search", map[string]any{"limit": 2})
		if msgs := res["messages"].([]any); len(msgs) != 2 || res["cursor"] != int64(2) {
			t.Fatalf("page 1: %v", res)
		}
		res = do(t, c, "search", map[string]any{"limit": 2, "after": res["cursor"]})
		if msgs := res["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "C" {
			t.Fatalf("page 2: %v", res)
		}
	})

	t.Run("Another mailbox can be searched", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, testSent, "me@example.com", "Sent one", "x")
		res := do(t, b.connector(t, nil), "search", map[string]any{"mailbox": testSent})
		msgs := res["messages"].([]any)
		if len(msgs) != 1 || !strings.HasPrefix(msgs[0].(map[string]any)["id"].(string), testSent+":") {
			t.Fatalf("got %v", msgs)
		}
	})

	t.Run("Bad parameters are logic errors", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		for _, p := range []map[string]any{
			{"after": -1}, {"after": "abc"}, {"after": 1.5}, {"limit": 0}, {"limit": 501}, {"from": 3}, {"mailbox": true},
		} {
			_, err := c.Do(context.Background(), connectors.Call{Method: "search", Params: p})
			if connectors.ClassOf(err) != connectors.Logic {
				t.Errorf("%v: got %v", p, err)
			}
		}
	})
}

func TestGet(t *testing.T) {
	t.Parallel()

	t.Run("Returns the whole message by id", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.appendRaw(t, "INBOX", strings.Join([]string{
			"From: =?utf-8?q?Zo=C3=AB?= <zoe@example.org>",
			"To: me@example.com, \"Doe, Jo\" <jo@example.net>",
			"Cc: cc@example.com",
			"Subject: =?utf-8?q?Caf=C3=A9_plans?=",
			"Date: Tue, 03 Jan 2006 10:00:00 +0100",
			"Message-ID: <reply-1@example.org>",
			"In-Reply-To: <orig@example.com>",
			"References: <root@example.com> <orig@example.com>",
			"MIME-Version: 1.0",
			"Content-Type: multipart/alternative; boundary=XX",
			"",
			"--XX",
			"Content-Type: text/html; charset=utf-8",
			"",
			"<html><head><style>p{}</style></head><body><p>Hello &amp; welcome</p><p>Line two</p></body></html>",
			"--XX--",
			"",
		}, "\r\n"))
		c := b.connector(t, nil)
		id := do(t, c, "search", nil)["messages"].([]any)[0].(map[string]any)["id"].(string)

		got := do(t, c, "get", map[string]any{"id": id})
		want := map[string]any{
			"id":        id,
			"uid":       int64(1),
			"messageId": "<reply-1@example.org>",
			"from":      "Zoë <zoe@example.org>",
			"subject":   "Café plans",
			"date":      "2006-01-03T10:00:00+01:00",
			"text":      "Hello & welcome\n\nLine two",
			"inReplyTo": "<orig@example.com>",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		if to := got["to"].([]any); len(to) != 2 || to[1] != `"Doe, Jo" <jo@example.net>` {
			t.Errorf("to = %v", to)
		}
		if cc := got["cc"].([]any); len(cc) != 1 || cc[0] != "cc@example.com" {
			t.Errorf("cc = %v", cc)
		}
		if refs := got["references"].([]any); len(refs) != 2 || refs[0] != "<root@example.com>" {
			t.Errorf("references = %v", refs)
		}
		// A display address from get is a valid send recipient.
		if _, err := mail.ParseAddressList(got["to"].([]any)[1].(string)); err != nil {
			t.Errorf("to does not parse back: %v", err)
		}
	})

	t.Run("A plain text part is preferred to html", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.appendRaw(t, "INBOX", strings.Join([]string{
			"From: a@example.org", "Subject: both", "Content-Type: multipart/alternative; boundary=B", "",
			"--B", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: quoted-printable", "",
			"plain caf=C3=A9", "--B", "Content-Type: text/html", "", "<p>html</p>", "--B--", "",
		}, "\r\n"))
		c := b.connector(t, nil)
		res := do(t, c, "search", nil)
		m := res["messages"].([]any)[0].(map[string]any)
		if m["snippet"] != "plain café" {
			t.Errorf("snippet = %q", m["snippet"])
		}
		got := do(t, c, "get", map[string]any{"id": m["id"]})
		if got["text"] != "plain café" || got["inReplyTo"] != nil {
			t.Errorf("got %v", got)
		}
	})

	t.Run("An unknown id is a logic error", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "ann@example.org", "One", "x")
		c := b.connector(t, nil)
		id := do(t, c, "search", nil)["messages"].([]any)[0].(map[string]any)["id"].(string)
		mbox, validity, _, err := parseID(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{
			makeID(mbox, validity, 99),   // no such UID
			makeID(mbox, validity+7, 1),  // the mailbox was rebuilt since
			makeID("Nope", validity, 1),  // no such mailbox
			"not-an-id", "INBOX:x:1", "", // malformed
		} {
			_, err := c.Do(context.Background(), connectors.Call{Method: "get", Params: map[string]any{"id": bad}})
			if connectors.ClassOf(err) != connectors.Logic {
				t.Errorf("%q: got %v", bad, err)
			}
		}
	})
}

func TestSend(t *testing.T) {
	t.Parallel()

	t.Run("Delivers a message with the host-chosen Message-ID", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		params := map[string]any{
			"to":        []any{"Ann <ann@example.org>", "bob@example.net"},
			"cc":        "cy@example.com",
			"bcc":       "hidden@example.com",
			"subject":   "Café — the plan",
			"body":      "Hello,\nsee you at noon.\n" + strings.Repeat("long line ", 20),
			"inReplyTo": "orig@example.com",
		}
		res, err := c.Do(context.Background(), sendCall("mut-42", params))
		if err != nil {
			t.Fatal(err)
		}
		if res.(map[string]any)["messageId"] != c.messageIDFor("mut-42") {
			t.Fatalf("result %v", res)
		}
		got := b.smtp.accepted()
		if len(got) != 1 {
			t.Fatalf("%d messages accepted", len(got))
		}
		if got[0].from != testUser || strings.Join(got[0].to, ",") != "ann@example.org,bob@example.net,cy@example.com,hidden@example.com" {
			t.Fatalf("envelope from %q to %v", got[0].from, got[0].to)
		}
		msg, err := mail.ReadMessage(strings.NewReader(string(got[0].data)))
		if err != nil {
			t.Fatal(err)
		}
		h := msg.Header
		subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
		checks := map[string]string{
			"Message-Id":   c.messageIDFor("mut-42"),
			"From":         "<" + testUser + ">",
			"In-Reply-To":  "<orig@example.com>",
			"References":   "<orig@example.com>",
			"Mime-Version": "1.0",
			"Bcc":          "",
		}
		for k, v := range checks {
			if h.Get(k) != v {
				t.Errorf("%s: %q, want %q", k, h.Get(k), v)
			}
		}
		if subject != "Café — the plan" {
			t.Errorf("subject %q", subject)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "text/plain") || !strings.Contains(h.Get("Content-Type"), "utf-8") {
			t.Errorf("content type %q", h.Get("Content-Type"))
		}
		if _, err := h.Date(); err != nil {
			t.Errorf("date: %v", err)
		}
		if to, _ := h.AddressList("To"); len(to) != 2 {
			t.Errorf("to header %q", h.Get("To"))
		}
		if strings.Contains(string(got[0].data), "hidden@") {
			t.Errorf("bcc leaked into the message")
		}
		// The body survives quoted-printable and comes back as sent.
		text := parseMessage(got[0].data).text
		if !strings.HasPrefix(text, "Hello,\r\nsee you at noon.\r\nlong line") {
			t.Errorf("body %q", text)
		}
	})

	t.Run("The same call twice has the same Message-ID", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		call := sendCall("run-7/mutation-1", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"})
		r1, err1 := c.Do(context.Background(), call)
		r2, err2 := c.Do(context.Background(), call)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		id := r1.(map[string]any)["messageId"].(string)
		if id != r2.(map[string]any)["messageId"] || !strings.HasPrefix(id, "<keep-") {
			t.Fatalf("%v vs %v", r1, r2)
		}
		got := b.smtp.accepted()
		for _, m := range got {
			msg, _ := mail.ReadMessage(strings.NewReader(string(m.data)))
			if msg.Header.Get("Message-Id") != id {
				t.Errorf("sent Message-ID %q, result %q", msg.Header.Get("Message-Id"), id)
			}
		}
		other, _ := c.Do(context.Background(), sendCall("run-7/mutation-2", call.Params))
		if other.(map[string]any)["messageId"] == id {
			t.Errorf("another key gave the same Message-ID")
		}
	})

	t.Run("Where the provider does not file sent mail, a copy is appended to Sent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// A server that does not file sent mail itself.
		b.cfg.SentFolder = "Sent"
		if err := b.imapUser.Create("Sent", nil); err != nil {
			t.Fatal(err)
		}
		c := b.connector(t, func(cfg *Config) { cfg.ServerFilesSent = false })
		call := sendCall("k1", map[string]any{"to": "ann@example.org", "subject": "copied", "body": "b"})
		if _, err := c.Do(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		res := do(t, c, "search", map[string]any{"mailbox": "Sent"})
		if msgs := res["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["messageId"] != c.messageIDFor("k1") {
			t.Fatalf("Sent holds %v", res)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})

	t.Run("Bad parameters fail before anything is sent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		for _, p := range []map[string]any{
			{"subject": "no recipient", "body": "b"},
			{"to": "not an address", "body": "b"},
			{"to": []any{"a@example.org", 3}},
			{"to": "a@example.org", "subject": "two\r\nlines"},
			{"to": "a@example.org", "body": 42},
			{"to": "a@example.org", "inReplyTo": "has space"},
			{"to": "a@example.org", "inReplyTo": "esc\x1b]0;title\x07@example.org"},
			{"to": "a@example.org", "inReplyTo": "nul\x00@example.org"},
			{"to": "a@example.org", "inReplyTo": "café@example.org"},
		} {
			_, err := c.Do(context.Background(), sendCall("k", p))
			if connectors.ClassOf(err) != connectors.Logic {
				t.Errorf("%v: got %v", p, err)
			}
		}
		if _, err := c.Do(context.Background(), sendCall("", map[string]any{"to": "a@example.org"})); connectors.ClassOf(err) != connectors.Internal {
			t.Errorf("no key: got %v", err)
		}
		if n := len(b.smtp.accepted()); n != 0 {
			t.Errorf("%d messages sent", n)
		}
	})
}

func TestReconcile(t *testing.T) {
	t.Parallel()

	t.Run("A sent message is applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		call := sendCall("mut-9", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"})
		if _, err := c.Do(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		v, res, err := c.Reconcile(context.Background(), call)
		if v != connectors.Applied || err != nil || res.(map[string]any)["messageId"] != c.messageIDFor("mut-9") {
			t.Fatalf("got %v %v %v", v, res, err)
		}
	})

	t.Run("A send whose reply was lost is found by the connector of the next start", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.smtp.setMode(failAcceptThenDrop)
		call := sendCall("keep-abc-12", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"})
		if _, err := b.connector(t, nil).Do(context.Background(), call); connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("send: %v", err)
		}
		// the host's secret outlives the process; a connector without
		// it cannot claim the message, and does not
		restarted := b.connector(t, nil)
		v, res, err := restarted.Reconcile(context.Background(), call)
		if v != connectors.Applied || err != nil || res.(map[string]any)["messageId"] != restarted.messageIDFor("keep-abc-12") {
			t.Fatalf("reconcile after a restart: %v %v %v", v, res, err)
		}
		other := b.connector(t, func(cfg *Config) { cfg.MessageIDSecret = "another host" })
		if v, res, err := other.Reconcile(context.Background(), call); v != connectors.Unknown || err != nil {
			t.Fatalf("reconcile under another secret: %v %v %v", v, res, err)
		}
	})

	t.Run("An unsent message is unknown, not failed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		// Another message in Sent must not match.
		if _, err := c.Do(context.Background(), sendCall("mut-1", map[string]any{"to": "a@example.org"})); err != nil {
			t.Fatal(err)
		}
		v, res, err := c.Reconcile(context.Background(), sendCall("mut-10", map[string]any{"to": "a@example.org"}))
		if v != connectors.Unknown || res != nil || err != nil {
			t.Fatalf("got %v %v %v", v, res, err)
		}
	})

	t.Run("A send whose reply was lost reconciles as applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.smtp.setMode(failAcceptThenDrop)
		c := b.connector(t, nil)
		call := sendCall("mut-11", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"})
		_, err := c.Do(context.Background(), call)
		if connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("send: %v", err)
		}
		if v, _, err := c.Reconcile(context.Background(), call); v != connectors.Applied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})

	t.Run("An IMAP failure is unknown with a classified error", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, func(cfg *Config) { cfg.Password = "wrong" })
		v, _, err := c.Reconcile(context.Background(), sendCall("m", nil))
		if v != connectors.Unknown || connectors.ClassOf(err) != connectors.Auth {
			t.Fatalf("got %v %v", v, err)
		}
		c = b.connector(t, func(cfg *Config) { cfg.IMAP = closedAddr(t) })
		v, _, err = c.Reconcile(context.Background(), sendCall("m", nil))
		if v != connectors.Unknown || connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("got %v %v", v, err)
		}
	})

	t.Run("Only send can be checked", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		if _, _, err := c.Reconcile(context.Background(), connectors.Call{Method: "search"}); err != connectors.ErrCannotCheck {
			t.Fatalf("got %v", err)
		}
	})
}

func TestPasswordNeverShown(t *testing.T) {
	t.Parallel()

	t.Run("Refused logins do not show the password", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.smtp.setMode(failAuth)
		c := b.connector(t, nil)
		_, err := c.Do(context.Background(), sendCall("k", map[string]any{"to": "a@example.org"}))
		if connectors.ClassOf(err) != connectors.Auth || strings.Contains(err.Error(), testPassword) {
			t.Fatalf("smtp: %v", err)
		}
		wrong := b.connector(t, func(cfg *Config) { cfg.Password = "wrong-" + testPassword })
		_, err = wrong.Do(context.Background(), connectors.Call{Method: "search"})
		if connectors.ClassOf(err) != connectors.Auth || strings.Contains(err.Error(), testPassword) {
			t.Fatalf("imap: %v", err)
		}
	})

	t.Run("A password echoed by a server is redacted", func(t *testing.T) {
		t.Parallel()
		c, err := New(Config{Username: "u", From: "u@example.org", Password: "pw-123"})
		if err != nil {
			t.Fatal(err)
		}
		e := c.fail(context.Background(), connectors.Auth, "login", errString("bad password pw-123 / AHUAcHctMTIz"))
		if strings.Contains(e.Error(), "pw-123") || strings.Contains(e.Error(), "AHUAcHctMTIz") {
			t.Fatalf("not redacted: %v", e)
		}
	})

	t.Run("Printing the config or the connector hides the password", func(t *testing.T) {
		t.Parallel()
		c, err := New(Config{Username: "u", From: "u@example.org", Password: testPassword})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{fmt.Sprint(c.cfg), fmt.Sprintf("%+v", c.cfg), fmt.Sprintf("%#v", c.cfg), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c)} {
			if strings.Contains(s, testPassword) {
				t.Errorf("password in %s", s)
			}
		}
	})

	t.Run("Results do not hold the password", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "ann@example.org", "Hi", "x")
		c := b.connector(t, nil)
		search := do(t, c, "search", nil)
		id := search["messages"].([]any)[0].(map[string]any)["id"]
		get := do(t, c, "get", map[string]any{"id": id})
		send, _ := c.Do(context.Background(), sendCall("k", map[string]any{"to": "a@example.org"}))
		out, _ := json.Marshal([]any{search, get, send})
		if strings.Contains(string(out), testPassword) {
			t.Fatalf("password in %s", out)
		}
	})
}

type errString string

func (e errString) Error() string { return string(e) }
