package mail

import (
	"context"
	"fmt"
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

// TestADeeplyNestedMessageIsReadQuickly: go-message reads each level of a
// multipart through the readers of every level above it, so a message of
// nothing but nested boundaries (8000 levels, under half a megabyte) took
// its get half a minute of CPU, and 64000 levels hours, past any timeout
// (parsing does not watch the call's context). What lies deeper than real
// mail nests is not read; the text and attachments above it are.
func TestADeeplyNestedMessageIsReadQuickly(t *testing.T) {
	t.Parallel()
	nest := func(depth int, inner string) string {
		var b strings.Builder
		b.WriteString("From: mallory@example.org\r\nSubject: Deep\r\nMIME-Version: 1.0\r\n")
		for i := 0; i < depth; i++ {
			fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"b%d\"\r\n\r\n--b%d\r\n", i, i)
		}
		b.WriteString(inner)
		return b.String()
	}
	b := setup(t)
	b.appendRaw(t, "INBOX", nest(8000, "Content-Type: text/plain\r\n\r\nhidden\r\n"))
	b.appendRaw(t, "INBOX", nest(40, "Content-Type: text/plain\r\n\r\nhidden\r\n"))
	b.appendRaw(t, "INBOX", nest(3, "Content-Type: text/plain\r\n\r\nhello\r\n--b2\r\n"+
		"Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"a.pdf\"\r\n\r\n%PDF\r\n--b2--\r\n"))
	c := b.connector(t, nil)
	msgs := do(t, c, "search", nil)["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("search found %d messages", len(msgs))
	}
	id := func(i int) any { return msgs[i].(map[string]any)["id"] }
	// what lies deeper than walkParts goes is not read: 40 levels down is
	// past it, and the part there is not the message's text
	for _, deep := range []any{id(0), id(1)} {
		got := do(t, c, "get", map[string]any{"id": deep})
		if got["text"] == "hidden" {
			t.Fatalf("get read a part nested past %d levels", maxDepth)
		}
	}
	shallow := id(2)
	got := do(t, c, "get", map[string]any{"id": shallow})
	if got["text"] != "hello" {
		t.Fatalf("text %q", got["text"])
	}
	if a := got["attachments"].([]any); len(a) != 1 || a[0].(map[string]any)["name"] != "a.pdf" {
		t.Fatalf("attachments %v", a)
	}
}
