package mail

import (
	"context"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

// TestAMessageTooLargeIsRefusedUnread: imapclient reads a fetched message
// whole into memory, however large the server says it is. get refuses
// one over its limit from the size the server announces, before reading
// it, and says so; the next call reads as before.
func TestAMessageTooLargeIsRefusedUnread(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.seed(t, "INBOX", "ann@example.org", "Big", strings.Repeat("0123456789abcdef\n", 16<<10)) // ~300 KiB
	b.seed(t, "INBOX", "ann@example.org", "Small", "hello")
	c := b.connector(t, nil)
	c.maxMessage = 64 << 10
	msgs := do(t, c, "search", nil)["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("search found %d messages", len(msgs))
	}
	big, small := msgs[0].(map[string]any)["id"], msgs[1].(map[string]any)["id"]

	start := time.Now()
	_, err := c.Do(context.Background(), connectors.Call{Method: "get", Params: map[string]any{"id": big}})
	if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "more than the 65536") {
		t.Fatalf("err = %v, want a logic failure naming the limit", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the refusal took %s: it waited on the connection", d)
	}
	if got := do(t, c, "get", map[string]any{"id": small}); !strings.Contains(got["text"].(string), "hello") {
		t.Fatalf("the next get read %v", got)
	}
}
