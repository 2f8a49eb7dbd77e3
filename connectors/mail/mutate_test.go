package mail

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"

	"keep/connectors"
)

// storeFault makes the IMAP server's STORE fail on purpose.
type storeFault int32

const (
	storeOK           storeFault = iota
	storeRefused                 // a plain NO: a definite refusal
	storeLimit                   // NO [LIMIT]: a rate limit
	storeApplyAndDrop            // apply it, then hang up before the reply
	copyApplyAndDrop             // COPY: copy, then hang up before the reply
)

// faultySession wraps the in-memory backend's session to fail STORE.
type faultySession struct {
	imapserver.Session
	conn  *imapserver.Conn
	fault *atomic.Int32
}

func (s *faultySession) Store(w *imapserver.FetchWriter, numSet imap.NumSet, flags *imap.StoreFlags, options *imap.StoreOptions) error {
	switch storeFault(s.fault.Load()) {
	case storeRefused:
		return &imap.Error{Type: imap.StatusResponseTypeNo, Text: "flags are read-only here"}
	case storeLimit:
		return &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeLimit, Text: "slow down"}
	case storeApplyAndDrop:
		err := s.Session.Store(w, numSet, flags, options)
		s.conn.NetConn().Close()
		return err
	}
	return s.Session.Store(w, numSet, flags, options)
}

func (s *faultySession) Copy(numSet imap.NumSet, dest string) (*imap.CopyData, error) {
	data, err := s.Session.Copy(numSet, dest)
	if storeFault(s.fault.Load()) == copyApplyAndDrop {
		s.conn.NetConn().Close()
	}
	return data, err
}

// faultyIMAP serves b's mailboxes through faultySession and points the
// config at it.
func (b *bundle) faultyIMAP(t *testing.T, caps imap.CapSet) *atomic.Int32 {
	t.Helper()
	fault := new(atomic.Int32)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(c *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &faultySession{Session: b.imapMem.NewSession(), conn: c, fault: fault}, nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       quietLogger{},
	})
	ln := listen(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	b.cfg.IMAP = ln.Addr().String()
	return fault
}

func firstID(t *testing.T, c *Connector, mailbox string) string {
	t.Helper()
	res := do(t, c, "search", map[string]any{"mailbox": mailbox})
	msgs := res["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("%s is empty", mailbox)
	}
	return msgs[0].(map[string]any)["id"].(string)
}

func TestMutations(t *testing.T) {
	t.Parallel()

	call := func(method, id string, extra ...any) connectors.Call {
		p := map[string]any{"id": id}
		for i := 0; i+1 < len(extra); i += 2 {
			p[extra[i].(string)] = extra[i+1]
		}
		return connectors.Call{Method: method, Params: p, IdempotencyKey: "mut-1"}
	}

	t.Run("Each outcome of a STORE maps onto the ledger: refused fails, a limit waits, a drop is reconciled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		fault := b.faultyIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}})
		b.seed(t, "INBOX", "ann@example.org", "Flag me", "x")
		c := b.connector(t, nil)
		id := firstID(t, c, "INBOX")

		fault.Store(int32(storeRefused))
		if _, err := c.Do(context.Background(), call("flag", id)); connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("refused: %v", err)
		}
		fault.Store(int32(storeLimit))
		if _, err := c.Do(context.Background(), call("flag", id)); connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("limit: %v", err)
		}
		if v, _, err := c.Reconcile(context.Background(), call("flag", id)); v != connectors.NotApplied || err != nil {
			t.Fatalf("nothing was flagged yet: %v %v", v, err)
		}
		fault.Store(int32(storeApplyAndDrop))
		if _, err := c.Do(context.Background(), call("flag", id)); connectors.ClassOf(err) != connectors.Uncertain {
			t.Fatalf("drop: %v", err)
		}
		fault.Store(int32(storeOK))
		v, res, err := c.Reconcile(context.Background(), call("flag", id))
		if v != connectors.Applied || err != nil || res.(map[string]any)["flagged"] != true {
			t.Fatalf("reconcile after the drop: %v %v %v", v, res, err)
		}
	})

	t.Run("Reads and flags round-trip and search filters unseen", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "ann@example.org", "One", "x")
		b.seed(t, "INBOX", "bob@example.org", "Two", "y")
		c := b.connector(t, nil)
		id := firstID(t, c, "INBOX")
		if res := do(t, c, "markRead", map[string]any{"id": id}); res["seen"] != true {
			t.Fatalf("markRead: %v", res)
		}
		res := do(t, c, "search", map[string]any{"unseen": true})
		if msgs := res["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "Two" {
			t.Fatalf("unseen: %v", msgs)
		}
		all := do(t, c, "search", nil)["messages"].([]any)
		if all[0].(map[string]any)["seen"] != true || all[1].(map[string]any)["seen"] != false {
			t.Fatalf("seen flags: %v", all)
		}
		do(t, c, "markUnread", map[string]any{"id": id})
		if msgs := do(t, c, "search", map[string]any{"unseen": true})["messages"].([]any); len(msgs) != 2 {
			t.Fatalf("after markUnread: %v", msgs)
		}
	})

	t.Run("Since filters by the received date", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "ann@example.org", "Today", "x")
		c := b.connector(t, nil)
		if msgs := do(t, c, "search", map[string]any{"since": "2000-01-01"})["messages"].([]any); len(msgs) != 1 {
			t.Fatalf("since 2000: %v", msgs)
		}
		if msgs := do(t, c, "search", map[string]any{"since": "2999-01-01T00:00:00Z"})["messages"].([]any); len(msgs) != 0 {
			t.Fatalf("since 2999: %v", msgs)
		}
		if _, err := c.Do(context.Background(), connectors.Call{Method: "search", Params: map[string]any{"since": "last week"}}); connectors.ClassOf(err) != connectors.Logic ||
			!strings.Contains(err.Error(), "since") {
			t.Fatalf("bad since: %v", err)
		}
	})

	t.Run("Move to a missing mailbox is a definite refusal; a move is reconciled by looking in the source", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, "INBOX", "ann@example.org", "Move me", "x")
		if err := b.imapUser.Create("Archive", nil); err != nil {
			t.Fatal(err)
		}
		c := b.connector(t, nil)
		id := firstID(t, c, "INBOX")
		if _, err := c.Do(context.Background(), call("move", id, "to", "Nowhere")); connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("missing mailbox: %v", err)
		}
		if v, _, _ := c.Reconcile(context.Background(), call("move", id, "to", "Archive")); v != connectors.NotApplied {
			t.Fatalf("before: %v", v)
		}
		do(t, c, "move", map[string]any{"id": id, "to": "Archive"})
		if v, _, _ := c.Reconcile(context.Background(), call("move", id, "to", "Archive")); v != connectors.Applied {
			t.Fatalf("after: %v", v)
		}
		if got := do(t, c, "get", map[string]any{"id": firstID(t, c, "Archive")}); got["subject"] != "Move me" {
			t.Fatalf("archive holds %v", got)
		}
	})

	t.Run("Bad ids and parameters are refused before anything is changed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		c := b.connector(t, nil)
		for _, bad := range []connectors.Call{
			{Method: "flag", Params: map[string]any{}},
			{Method: "markRead", Params: map[string]any{"id": "nope"}},
			{Method: "move", Params: map[string]any{"id": "INBOX:1:1"}},
			{Method: "label", Params: map[string]any{"id": "INBOX:1:1"}},
			{Method: "label", Params: map[string]any{"id": "INBOX:1:1", "add": 5}},
		} {
			if _, err := c.Do(context.Background(), bad); connectors.ClassOf(err) != connectors.Logic {
				t.Errorf("%v: %v", bad, err)
			}
		}
	})
}
