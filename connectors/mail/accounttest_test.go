package mail

import (
	"context"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/accounts"
)

// passwordStore is the host's accounts with one password account, box,
// whose stored password is pw.
func passwordStore(t *testing.T, pw string) *accounts.Store {
	t.Helper()
	return passwordStoreFor(t, testUser, pw)
}

func passwordStoreFor(t *testing.T, user, pw string) *accounts.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(path, []byte(`{"accounts":{"box":{"secret":"`+pw+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := accounts.Open([]accounts.Def{{Name: "box", Kind: accounts.Password, Username: user}}, accounts.Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stateOf(t *testing.T, s *accounts.Store) accounts.Status {
	t.Helper()
	sts, err := s.Statuses()
	if err != nil || len(sts) != 1 {
		t.Fatalf("statuses = %v, %v", sts, err)
	}
	return sts[0]
}

// TestAccountLogin: TestAccount really logs in to both servers; a refused
// password, at IMAP or at SMTP, is the account's sign-in failure (naming
// keep auth login box) and shows in the account's state until a login
// gets in; a search refused the same way names the account too.
func TestAccountLogin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	withAccount := func(s *accounts.Store) *Connector {
		a, err := s.Account("box")
		if err != nil {
			t.Fatal(err)
		}
		return b.connector(t, func(c *Config) { c.Account, c.Username, c.Password = a, "", "" })
	}

	t.Run("the right password logs in at IMAP and SMTP", func(t *testing.T) {
		s := passwordStore(t, testPassword)
		done, err := withAccount(s).TestAccount(ctx, "box")
		if err != nil || len(done) != 2 || !strings.Contains(done[0], "IMAP") || !strings.Contains(done[1], "SMTP") {
			t.Fatalf("TestAccount = %q, %v", done, err)
		}
		if st := stateOf(t, s); st.State != accounts.StateOK {
			t.Fatalf("state %+v", st)
		}
	})

	t.Run("another account's name is not this connector's to test", func(t *testing.T) {
		done, err := withAccount(passwordStore(t, testPassword)).TestAccount(ctx, "other")
		if err != nil || done != nil {
			t.Fatalf("TestAccount(other) = %q, %v", done, err)
		}
	})

	t.Run("a wrong password is refused at IMAP, names the account and marks it", func(t *testing.T) {
		s := passwordStore(t, "wrong-password-123")
		_, err := withAccount(s).TestAccount(ctx, "box")
		if connectors.ClassOf(err) != connectors.Auth || accounts.AccountOf(err) != "box" ||
			accounts.NamedIn(err.Error()) != "box" || !strings.Contains(err.Error(), "imap: login as "+testUser) {
			t.Fatalf("TestAccount with a wrong password: %v", err)
		}
		if strings.Contains(err.Error(), "wrong-password-123") {
			t.Fatalf("the error holds the password: %v", err)
		}
		if st := stateOf(t, s); st.State != accounts.StateNeedsSignIn || !strings.Contains(st.Detail, "keep auth login box") {
			t.Fatalf("state after a refusal: %+v", st)
		}
		// a search, as a workflow runs it, fails the same way
		_, err = withAccount(s).Do(ctx, connectors.Call{Method: "search", Params: map[string]any{}})
		if accounts.NamedIn(err.Error()) != "box" {
			t.Fatalf("search with a wrong password: %v", err)
		}
		if err := s.Login(ctx, "box", accounts.LoginOpts{ReadSecret: func(string) (string, error) { return testPassword, nil }}); err != nil {
			t.Fatal(err)
		}
		if st := stateOf(t, s); st.State != accounts.StateOK {
			t.Fatalf("state after signing in again: %+v", st)
		}
	})

	t.Run("a password SMTP refuses names the account", func(t *testing.T) {
		s := passwordStore(t, testPassword)
		b.smtp.setMode(failAuth)
		defer b.smtp.setMode(failNone)
		done, err := withAccount(s).TestAccount(ctx, "box")
		if len(done) != 1 || accounts.AccountOf(err) != "box" || !strings.Contains(err.Error(), "smtp: login as") {
			t.Fatalf("TestAccount = %q, %v", done, err)
		}
		if st := stateOf(t, s); st.State != accounts.StateNeedsSignIn {
			t.Fatalf("state %+v", st)
		}
	})
}

// TestFromWithDisplayName: from may carry a display name; the message
// shows it, the envelope and the self-copy check use the bare address, and
// a from that is no address is refused naming it.
func TestFromWithDisplayName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.connector(t, func(cfg *Config) { cfg.From = "Ann Example <" + testUser + ">" })
	if _, err := c.Do(context.Background(), sendCall("named-1", map[string]any{"to": "bob@example.net", "subject": "Hi", "body": "x"})); err != nil {
		t.Fatal(err)
	}
	got := b.smtp.accepted()
	if len(got) != 1 || got[0].from != testUser {
		t.Fatalf("accepted %+v, want the envelope from %s", got, testUser)
	}
	msg, err := netmail.ReadMessage(strings.NewReader(string(got[0].data)))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := netmail.ParseAddress(msg.Header.Get("From")); err != nil || a.Name != "Ann Example" || a.Address != testUser {
		t.Fatalf("From header %q: %+v, %v", msg.Header.Get("From"), a, err)
	}
	if !c.isSelfCopy(map[string]any{"messageId": c.messageIDFor("x"), "from": "Ann Example <" + testUser + ">", "to": []any{"bob@example.net"}}) {
		t.Error("a copy of its own send, From with the name, is not recognised")
	}
	if _, err := New(Config{IMAP: "127.0.0.1:1", SMTP: "127.0.0.1:2", TLS: TLSNone, Username: testUser, From: "Ann <not an address>"}); err == nil || !strings.Contains(err.Error(), `from "Ann <not an address>"`) {
		t.Fatalf("a bad from: %v", err)
	}
}
