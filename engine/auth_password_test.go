package engine

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"keep/connectors/accounts"
	"keep/engine/api"
	"keep/engine/config"
)

type quietIMAP struct{}

func (quietIMAP) Printf(string, ...any) {}
func (quietIMAP) Println(...any)        {}

// imapServer is a real IMAP server (go-imap's in-memory backend) on
// loopback with one user.
func imapServer(t *testing.T, user, password string) string {
	t.Helper()
	u := imapmemserver.NewUser(user, password)
	if err := u.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem := imapmemserver.New()
	mem.AddUser(u)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps: imap.CapSet{imap.CapIMAP4rev1: {}}, InsecureAuth: true, Logger: quietIMAP{},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// inboxWorkflow searches the mailbox every five minutes.
func inboxWorkflow(name string) string {
	return `export default Keep.workflow({ name: "` + name + `", topics: { m: {} },
  producers: { look: { publishes: ["m"], schedule: { interval: "5m" }, handler: async (ctx) => { await ctx.mail.search({}); } } },
  consumers: {} });`
}

// TestRefusedPasswordWaitsForSignIn: a password the IMAP server refuses
// blocks every workflow reading that mailbox as auth, with one attention
// item each naming keep auth login box; signing in with the right password
// resumes them all, and they read the mailbox again.
func TestRefusedPasswordWaitsForSignIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := imapServer(t, "me@example.com", "right-password")
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(creds, []byte(`{"accounts":{"box":{"secret":"wrong-password"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b := setup(t, func(c *config.Config) {
		c.Path = filepath.Join(dir, "config.toml")
		c.Accounts = map[string]config.Account{"box": {Kind: "password", Username: "me@example.com"}}
		c.Connectors.Mail = config.Mail{Account: "box", IMAP: addr, SMTP: addr, TLS: "none"}
	})
	store, err := OpenAccounts(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.e.accounts = store
	b.deploy("inbox-a", inboxWorkflow("inbox-a"))
	b.deploy("inbox-b", inboxWorkflow("inbox-b"))
	b.drain()

	att, err := b.e.Attention(ctx)
	if err != nil || len(att) != 2 {
		t.Fatalf("attention = %+v, %v; want an auth item per workflow", att, err)
	}
	for _, it := range att {
		if it.Kind != api.AttentionAuth || it.Command != "keep auth login box" || strings.Contains(it.Reason, "wrong-password") {
			t.Fatalf("attention item %+v, want auth naming keep auth login box", it)
		}
	}
	if accts, _ := b.e.Accounts(ctx); len(accts) != 1 || accts[0].State != accounts.StateNeedsSignIn {
		t.Fatalf("accounts = %+v, want box needing a sign-in", accts)
	}

	err = store.Login(ctx, "box", accounts.LoginOpts{ReadSecret: func(string) (string, error) { return "right-password", nil }})
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := b.e.SignedIn(ctx, "box")
	if err != nil || strings.Join(resumed, ",") != "inbox-a,inbox-b" {
		t.Fatalf("SignedIn = %v, %v; want both workflows resumed", resumed, err)
	}
	b.drain()
	for _, name := range []string{"inbox-a", "inbox-b"} {
		if w := b.workflow(name); w.Block != nil || w.LastRun == nil || w.LastRun.Status != "committed" {
			t.Fatalf("%s after signing in: block %+v, last run %+v", name, w.Block, w.LastRun)
		}
	}
	if again, _ := b.e.SignedIn(ctx, "box"); len(again) != 0 {
		t.Fatalf("a second sign-in resumed %v, want nothing", again)
	}
}
