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

// bigHeaderMessage is a message whose Subject, folded over many lines as
// real headers are, is size bytes long.
func bigHeaderMessage(n, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From: mallory@example.org\r\nTo: %s\r\nSubject: big %d", testUser, n)
	for b.Len() < size {
		b.WriteString("\r\n xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	}
	b.WriteString("\r\nDate: Mon, 02 Jan 2006 15:04:05 +0000\r\n\r\nbody\r\n")
	return b.String()
}

// TestASearchReadsABoundedNumberOfBytes: imapclient reads each envelope
// whole into memory, and a search asked for up to 500 messages, so a
// mailbox of messages with huge headers made one search read without
// bound. A search stops at its byte budget: the messages that fit come
// back, truncated says so, and the cursor goes on from the last of them;
// searching on from it reads the rest, each message once.
func TestASearchReadsABoundedNumberOfBytes(t *testing.T) {
	t.Parallel()
	const n, size = 60, 512 << 10 // 30 MiB of headers
	b := setup(t)
	for i := 1; i <= n; i++ {
		b.appendRaw(t, "INBOX", bigHeaderMessage(i, size))
	}
	c := b.connector(t, nil)

	res := do(t, c, "search", map[string]any{"limit": 100})
	msgs := res["messages"].([]any)
	read := 0
	for _, m := range msgs {
		read += len(m.(map[string]any)["subject"].(string))
	}
	if res["truncated"] != true || len(msgs) == 0 || len(msgs) >= n || read > 24<<20 {
		t.Fatalf("one search returned %d of %d messages, %d bytes of subjects, truncated %v: want a part, flagged", len(msgs), n, read, res["truncated"])
	}
	if last := msgs[len(msgs)-1].(map[string]any)["uid"]; res["cursor"] != last {
		t.Fatalf("cursor %v after a last message of uid %v", res["cursor"], last)
	}

	seen := map[int64]bool{}
	for _, m := range msgs {
		seen[m.(map[string]any)["uid"].(int64)] = true
	}
	for cursor, pages := res["cursor"], 1; len(seen) < n; pages++ {
		if pages > n {
			t.Fatalf("%d pages and %d of %d messages seen", pages, len(seen), n)
		}
		res := do(t, c, "search", map[string]any{"after": cursor, "limit": 100})
		for _, m := range res["messages"].([]any) {
			uid := m.(map[string]any)["uid"].(int64)
			if seen[uid] {
				t.Fatalf("message %d returned twice", uid)
			}
			seen[uid] = true
		}
		cursor = res["cursor"]
	}
}

// TestAMessageOverTheSearchBudgetIsNamed: a message whose headers alone
// pass a search's budget cannot be returned in part: the search fails
// naming the message, the limit and the cursor that goes past it, and the
// search from there reads on.
func TestAMessageOverTheSearchBudgetIsNamed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.appendRaw(t, "INBOX", bigHeaderMessage(1, 256<<10))
	b.seed(t, "INBOX", "ann@example.org", "Small", "hello")
	c := b.connector(t, nil)
	c.maxSearch = 64 << 10

	_, err := c.Do(context.Background(), connectors.Call{Method: "search", Params: map[string]any{}})
	if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "message 1 of \"INBOX\"") ||
		!strings.Contains(err.Error(), "65536 bytes") || !strings.Contains(err.Error(), "after: 1") {
		t.Fatalf("err = %v, want a logic failure naming the message, the limit and the cursor past it", err)
	}
	res := do(t, c, "search", map[string]any{"after": 1})
	if msgs := res["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["subject"] != "Small" || res["truncated"] != nil {
		t.Fatalf("the search past it got %v", res)
	}
}
