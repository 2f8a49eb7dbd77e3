package workflows

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"keep/connectors"
	"keep/connectors/mail"
	"keep/connectors/slack"
	"keep/connectors/system"
	"keep/engine/api"
	"keep/engine/config"
)

const (
	mailUser     = "me@example.com"
	mailPassword = "correct-horse-battery"
)

// mailbox is a real IMAP server (go-imap's in-memory backend) on loopback.
type mailbox struct {
	addr string
	user *imapmemserver.User
	n    int
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
func (quiet) Println(...any)        {}

func newMailbox(t *testing.T) *mailbox {
	t.Helper()
	user := imapmemserver.NewUser(mailUser, mailPassword)
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem := imapmemserver.New()
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		InsecureAuth: true,
		Logger:       quiet{},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &mailbox{addr: ln.Addr().String(), user: user}
}

// deliver files a message in INBOX.
func (m *mailbox) deliver(t *testing.T, from, subject string) {
	t.Helper()
	m.n++
	raw := "From: " + from + "\r\n" +
		"To: " + mailUser + "\r\n" +
		"Subject: " + subject + "\r\n" +
		fmt.Sprintf("Date: Mon, 02 Nov 2026 07:%02d:00 +0000\r\n", m.n) +
		fmt.Sprintf("Message-ID: <msg-%d@example.org>\r\n", m.n) +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"\r\n" + "Hello.\r\n"
	if _, err := m.user.Append("INBOX", strings.NewReader(raw), &imap.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (m *mailbox) config(c *config.Config) {
	c.Connectors.Mail = config.Mail{IMAP: m.addr, SMTP: "127.0.0.1:1", Username: mailUser, Password: mailPassword,
		SentFolder: "Sent", TLS: "none"}
}

// sheetRows reads a CSV sheet under the root, without its header.
func sheetRows(t *testing.T, h *host, rel string) (header []string, rows [][]string) {
	t.Helper()
	text := h.Read(rel)
	if text == "" {
		return nil, nil
	}
	all, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("%s is not CSV: %v\n%s", rel, err, text)
	}
	return all[0], all[1:]
}

func TestEmailToSheet(t *testing.T) {
	t.Parallel()

	t.Run("each invoice email becomes one row, other mail none", func(t *testing.T) {
		t.Parallel()
		mb := newMailbox(t)
		mb.deliver(t, "alice@example.com", "Invoice December")
		mb.deliver(t, "bob@example.com", "Lunch on Friday?")
		mb.deliver(t, "Carol <carol@example.com>", "Your invoice #42 is overdue")

		h := newHost(t, hostOpt{edit: func(c *config.Config) { allowAll(c); mb.config(c) }})
		h.Deploy("email-to-sheet.js", source(t, "email-to-sheet.js"))
		h.Drain()
		h.Healthy("email-to-sheet")

		header, rows := sheetRows(t, h, "invoices.csv")
		if len(header) < 3 || !slices.Equal(header[:3], []string{"date", "from", "subject"}) {
			t.Fatalf("header = %q", header)
		}
		if len(rows) != 2 || rows[0][1] != "alice@example.com" || rows[0][2] != "Invoice December" ||
			rows[1][1] != "Carol <carol@example.com>" || rows[1][2] != "Your invoice #42 is overdue" {
			t.Fatalf("rows = %q", rows)
		}
		if _, err := time.Parse(time.RFC3339, rows[0][0]); err != nil {
			t.Errorf("date %q: %v", rows[0][0], err)
		}
		ins := h.Inputs("email-to-sheet")
		want := []string{`Email from Carol <carol@example.com>: "Your invoice #42 is overdue"`, `Email from alice@example.com: "Invoice December"`} // sorted
		if got := titles(ins); !slices.Equal(got, want) {
			t.Errorf("input titles = %q, want %q", got, want)
		}
		for _, in := range ins {
			if in.Source != "gmail" || in.Type != "email" || !strings.HasPrefix(in.ExternalID, "<msg-") {
				t.Errorf("input %s: %s/%s %s", in.Title, in.Source, in.Type, in.ExternalID)
			}
			if in.Status != api.InputDone || len(in.Outputs) != 1 || in.Outputs[0].Title != "Add row for "+from(in.Title)+" to invoices.csv" {
				t.Errorf("input %s: %s, outputs %+v", in.Title, in.Status, in.Outputs)
			}
		}

		// later mail: only what is new is read and filed
		mb.deliver(t, "dave@example.com", "Invoice January")
		h.Clock.Advance(5 * time.Minute)
		h.Drain()
		h.Clock.Advance(5 * time.Minute)
		h.Drain()
		h.Healthy("email-to-sheet")
		if _, rows = sheetRows(t, h, "invoices.csv"); len(rows) != 3 || rows[2][1] != "dave@example.com" {
			t.Fatalf("rows = %q", rows)
		}
		if n := len(h.Mutations("email-to-sheet")); n != 3 {
			t.Errorf("%d mutations, want 3", n)
		}
	})
}

// slackAPI is a local fake of the Slack Web API's chat.postMessage.
type slackAPI struct {
	mu    sync.Mutex
	posts []map[string]any
}

func (s *slackAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer xoxb-test" {
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
		return
	}
	if r.URL.Path != "/api/chat.postMessage" {
		_, _ = w.Write([]byte(`{"ok":false,"error":"unknown_method"}`))
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_json"}`))
		return
	}
	s.posts = append(s.posts, body)
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": "C0DIGEST01",
		"ts": fmt.Sprintf("1790000000.%06d", len(s.posts))})
}

func (s *slackAPI) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.posts {
		out = append(out, fmt.Sprint(p["channel"])+" "+fmt.Sprint(p["text"]))
	}
	return out
}

func TestDigestToSlack(t *testing.T) {
	t.Parallel()

	t.Run("mail is posted as one digest a day at the digest hour", func(t *testing.T) {
		t.Parallel()
		mb := newMailbox(t)
		mb.deliver(t, "alice@example.com", "Invoice December")
		mb.deliver(t, "bob@example.com", "Lunch on Friday?")
		apiHost := &slackAPI{}
		srv := httptest.NewServer(apiHost)
		t.Cleanup(srv.Close)

		// engine.Connectors gives the system connector the wall clock; the
		// digest reads the hour from ctx.system.now, so this test wires the
		// connectors itself, with the system clock on the engine's clock.
		registry := func(cfg config.Config, c *clock) *connectors.Registry {
			reg := connectors.NewRegistry()
			mc, err := mail.New(mail.Config{IMAP: mb.addr, SMTP: "127.0.0.1:1", Username: mailUser, Password: mailPassword,
				SentFolder: "Sent", TLS: mail.TLSNone})
			if err != nil {
				t.Fatal(err)
			}
			reg.Register(mc, "gmail")
			sc, err := slack.New(slack.Config{APIBase: srv.URL + "/api", Token: "xoxb-test"})
			if err != nil {
				t.Fatal(err)
			}
			reg.Register(sc)
			sys, err := system.New(system.Config{Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			reg.Register(sys)
			return reg
		}
		day1 := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
		h := newHost(t, hostOpt{edit: allowAll, registry: registry, start: day1})
		h.Deploy("digest-to-slack.js", source(t, "digest-to-slack.js"))

		// 08:00: the mail is read, and the digest waits for 09:00
		h.Drain()
		h.Healthy("digest-to-slack")
		if got := apiHost.texts(); len(got) != 0 {
			t.Fatalf("posted before the digest hour: %q", got)
		}
		ins := h.Inputs("digest-to-slack")
		if got := titles(ins); !slices.Equal(got, []string{`Email from alice@example.com: "Invoice December"`, `Email from bob@example.com: "Lunch on Friday?"`}) {
			t.Fatalf("inputs = %q", got)
		}
		if w := wakeOf(t, h, "postDigest"); w == nil || !w.Equal(day1.Add(time.Hour)) {
			t.Errorf("the digest wakes at %v, want %v", w, day1.Add(time.Hour))
		}

		// 09:00: one post with both emails
		h.Clock.Advance(time.Hour)
		h.Drain()
		h.Healthy("digest-to-slack")
		posts := apiHost.texts()
		if len(posts) != 1 || !strings.HasPrefix(posts[0], "#inbox-digest Mail digest for 2026-11-02: 2 new emails\n") ||
			!strings.Contains(posts[0], "• alice@example.com: Invoice December") || !strings.Contains(posts[0], "• bob@example.com: Lunch on Friday?") {
			t.Fatalf("posts = %q", posts)
		}
		for _, in := range h.Inputs("digest-to-slack") {
			if in.Status != api.InputDone || len(in.Outputs) != 1 || in.Outputs[0].Title != "Post the digest of 2 emails to #inbox-digest" {
				t.Errorf("input %s: %s, outputs %+v", in.Title, in.Status, in.Outputs)
			}
		}

		// 10:00: new mail waits for tomorrow's digest
		mb.deliver(t, "carol@example.com", "Quarterly report")
		h.Clock.Advance(time.Hour)
		h.Drain()
		h.Healthy("digest-to-slack")
		if got := apiHost.texts(); len(got) != 1 {
			t.Fatalf("posted a second digest the same day: %q", got)
		}
		if w, want := wakeOf(t, h, "postDigest"), day1.Add(25*time.Hour); w == nil || !w.Equal(want) {
			t.Errorf("the digest wakes at %v, want %v", w, want)
		}

		// next day 09:00: carol's email, alone
		h.Clock.Advance(23 * time.Hour)
		h.Drain()
		h.Healthy("digest-to-slack")
		posts = apiHost.texts()
		if len(posts) != 2 || !strings.HasPrefix(posts[1], "#inbox-digest Mail digest for 2026-11-03: 1 new email\n• carol@example.com: Quarterly report") {
			t.Fatalf("posts = %q", posts)
		}

		// a day without mail posts nothing
		h.Clock.Advance(24 * time.Hour)
		h.Drain()
		h.Healthy("digest-to-slack")
		if got := apiHost.texts(); len(got) != 2 {
			t.Fatalf("posts = %q", got)
		}
		for _, in := range h.Inputs("digest-to-slack") {
			if in.Status != api.InputDone {
				t.Errorf("input %s is %s", in.Title, in.Status)
			}
		}
	})
}

func wakeOf(t *testing.T, h *host, handler string) *time.Time {
	t.Helper()
	d, err := h.E.Workflow(context.Background(), "digest-to-slack")
	if err != nil {
		t.Fatal(err)
	}
	for _, hv := range d.Handlers {
		if hv.Name == handler {
			return hv.WakeAt
		}
	}
	t.Fatalf("no handler %s", handler)
	return nil
}

// from is the sender named in an email input's title.
func from(title string) string {
	s, _, _ := strings.Cut(strings.TrimPrefix(title, "Email from "), ": ")
	return s
}

// mailFiler files unread mail from billing@ in Receipts: the mail
// connector's move through the engine, ledger and all.
const mailFiler = `export default Keep.workflow({
  name: "mail-filer",
  topics: { "bill.found": {} },
  producers: {
    poll: { publishes: ["bill.found"], schedule: { interval: "5m" }, handler: async (ctx, state) => {
      const res = await ctx.mail.search({ after: state?.cursor ?? 0, from: "billing@", unseen: true });
      for (const m of res.messages) {
        const inputId = ctx.registerInput({ source: "mail", type: "email", id: m.messageId, title: "Bill " + m.subject });
        await ctx.publish("bill.found", { messageId: m.messageId, inputId, payload: { id: m.id, subject: m.subject } });
      }
      return { cursor: res.cursor };
    } },
  },
  consumers: {
    file: Keep.consumer({ subscribe: ["bill.found"],
      async prepare(ctx) {
        const [e] = await ctx.peek("bill.found", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "bill.found", ids: [e.messageId] }], data: e.payload, ui: { title: "File " + e.payload.subject } };
      },
      async mutate(ctx, p) { await ctx.mail.move({ id: p.data.id, to: "Receipts" }); },
      async next() {} }),
  },
});`

func TestMailFiler(t *testing.T) {
	t.Parallel()

	t.Run("unread bills are moved to Receipts, each once, through the ledger", func(t *testing.T) {
		t.Parallel()
		mb := newMailbox(t)
		if err := mb.user.Create("Receipts", nil); err != nil {
			t.Fatal(err)
		}
		mb.deliver(t, "billing@power.example", "November bill")
		mb.deliver(t, "friend@example.com", "Dinner?")
		h := newHost(t, hostOpt{edit: func(c *config.Config) { allowAll(c); mb.config(c) }})
		h.Deploy("mail-filer.js", []byte(mailFiler))
		h.Drain()
		h.Healthy("mail-filer")

		muts := h.Mutations("mail-filer")
		if len(muts) != 1 || muts[0].Method != "move" || muts[0].Status != "applied" || !strings.Contains(muts[0].Preview, `to "Receipts"`) {
			t.Fatalf("mutations %+v", muts)
		}
		st, err := mb.user.Status("Receipts", &imap.StatusOptions{NumMessages: true})
		if err != nil || st.NumMessages == nil || *st.NumMessages != 1 {
			t.Fatalf("Receipts: %+v %v", st, err)
		}
		st, err = mb.user.Status("INBOX", &imap.StatusOptions{NumMessages: true})
		if err != nil || st.NumMessages == nil || *st.NumMessages != 1 {
			t.Fatalf("INBOX: %+v %v", st, err)
		}
		h.Clock.Advance(5 * time.Minute)
		h.Drain()
		if n := len(h.Mutations("mail-filer")); n != 1 {
			t.Fatalf("%d mutations after another poll", n)
		}
	})
}
