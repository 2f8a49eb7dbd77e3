package mail

import (
	"context"
	"fmt"
	"testing"

	"github.com/emersion/go-imap/v2"

	"keep/connectors"
)

// On a server without MOVE, move copies, then deletes the original. A reply
// lost after the COPY leaves the copy in place: reconciliation must find it
// there, or the move is called not applied and done again (two copies).
func TestMoveWithoutMOVE(t *testing.T) {
	t.Parallel()

	moveCall := func(id string) connectors.Call {
		return connectors.Call{Method: "move", Params: map[string]any{"id": id, "to": "Archive"}, IdempotencyKey: "mut-1"}
	}
	count := func(t *testing.T, c *Connector, mailbox string) int {
		t.Helper()
		return len(do(t, c, "search", map[string]any{"mailbox": mailbox})["messages"].([]any))
	}

	for _, tc := range []struct {
		name  string
		fault storeFault
		caps  imap.CapSet
	}{
		{"the COPY's reply", copyApplyAndDrop, imap.CapSet{imap.CapIMAP4rev1: {}}},
		{"the reply to the STORE of \\Deleted", storeApplyAndDrop, imap.CapSet{imap.CapIMAP4rev1: {}}},
		{"the COPY's reply on a server with UIDPLUS", copyApplyAndDrop, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapUIDPlus: {}}},
	} {
		t.Run(fmt.Sprintf("A move that copied, then lost %s, is applied and copied once", tc.name), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			fault := b.faultyIMAP(t, tc.caps)
			b.seed(t, "INBOX", "ann@example.org", "Move me", "x")
			if err := b.imapUser.Create("Archive", nil); err != nil {
				t.Fatal(err)
			}
			c := b.connector(t, nil)
			id := firstID(t, c, "INBOX")

			fault.Store(int32(tc.fault))
			if _, err := c.Do(context.Background(), moveCall(id)); connectors.ClassOf(err) != connectors.Uncertain {
				t.Fatalf("want uncertain, got %v", err)
			}
			fault.Store(int32(storeOK))
			v, res, err := c.Reconcile(context.Background(), moveCall(id))
			if v != connectors.Applied || err != nil {
				t.Fatalf("reconcile: %v %v %v (Archive holds %d): a not applied would have the move made again", v, res, err, count(t, c, "Archive"))
			}
			if n := count(t, c, "Archive"); n != 1 {
				t.Fatalf("Archive holds %d copies", n)
			}
			if got := res.(map[string]any)["id"]; got != firstID(t, c, "Archive") {
				t.Fatalf("result id %v", got)
			}
			if _, ok := tc.caps[imap.CapUIDPlus]; ok {
				if n := count(t, c, "INBOX"); n != 0 {
					t.Fatalf("with UIDPLUS the original is removed once the copy is found: INBOX holds %d", n)
				}
			}
		})
	}

	t.Run("Another message with the same Message-ID in the destination is not taken for the copy", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.faultyIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}})
		if err := b.imapUser.Create("Archive", nil); err != nil {
			t.Fatal(err)
		}
		b.seed(t, "INBOX", "ann@example.org", "Twin", "the one in the inbox")
		b.seed(t, "Archive", "ann@example.org", "Twin", "delivered again, another body")
		c := b.connector(t, nil)
		id := firstID(t, c, "INBOX")
		if v, _, err := c.Reconcile(context.Background(), moveCall(id)); v != connectors.NotApplied || err != nil {
			t.Fatalf("reconcile: %v %v", v, err)
		}
	})
}
