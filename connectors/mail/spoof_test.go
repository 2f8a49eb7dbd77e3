package mail

import (
	"context"
	"testing"

	"keep/connectors"
)

// TestASpoofedSendIsNotTakenForKeeps: the host's idempotency keys are
// "keep-INSTALL-N", and every message keep sends shows one; anyone who got
// one can work out the keys of the sends to come. A message carrying the
// id such a key would give, in any form keep ever derived from it, is not
// keep's send, however it claims to be.
func TestASpoofedSendIsNotTakenForKeeps(t *testing.T) {
	t.Parallel()

	// the ids a stranger derives from the key keep-abc-8, as keep once did
	guessed := []string{"<keep-abc-8@keep.invalid>", "<keep-keep-abc-8@keep.invalid>"}
	spoof := func(id string) string {
		return "Message-ID: " + id + "\r\nFrom: " + testUser + "\r\nTo: ann@example.org\r\nSubject: s\r\n\r\nb\r\n"
	}

	t.Run("Reconcile does not confirm a send by a spoofed copy in Sent or the inbox", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, id := range guessed {
			b.appendRaw(t, testSent, spoof(id))
			b.appendRaw(t, "INBOX", spoof(id))
		}
		c := b.connector(t, nil)
		call := sendCall("keep-abc-8", map[string]any{"to": "ann@example.org", "subject": "s", "body": "b"})
		v, res, err := c.Reconcile(context.Background(), call)
		if v != connectors.Unknown || res != nil || err != nil {
			t.Fatalf("got %v %v %v, want unknown: nothing was sent", v, res, err)
		}
	})

	t.Run("A search shows a message dressed as keep's own copy", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.appendRaw(t, "INBOX", spoof(guessed[0]))
		c := b.connector(t, nil)
		msgs := do(t, c, "search", nil)["messages"].([]any)
		if len(msgs) != 1 {
			t.Fatalf("search found %d messages, want the spoofed one shown, not filed away as keep's copy", len(msgs))
		}
		if sent := do(t, c, "search", map[string]any{"mailbox": testSent})["messages"].([]any); len(sent) != 0 {
			t.Fatalf("Sent holds %v", sent)
		}
	})
}
