package mail

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

// hostileLabelCall runs a label call against a gimap whose answer to the
// chosen command is hostile, through connectors.Do as the host calls it.
func hostileLabelCall(t *testing.T, hostile string, fetch bool) error {
	t.Helper()
	g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}, hostile: []byte(hostile), fetch: fetch}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
	call := connectors.Call{Method: "label", Params: map[string]any{"id": "INBOX:7:5", "add": "x"}, IdempotencyKey: "label-1"}
	_, err := connectors.Do(context.Background(), c, call, true)
	return err
}

// TestADeeplyNestedLabelAnswerDoesNotCrashKeep: go-imap v1, which the
// label method speaks through, parses a list by recursing once per level,
// so an answer of nothing but "(" overflowed the goroutine stack: a fatal
// error that no recover catches, and the daemon died (a few megabytes do
// it at Go's default 1 GB stack). The call fails instead, the server's
// fault, and when the answer was to the STORE the labels may have changed:
// uncertain. A fatal error ends the test binary too, so the call runs in a
// child process (with a smaller stack, so less nesting suffices).
func TestADeeplyNestedLabelAnswerDoesNotCrashKeep(t *testing.T) {
	if os.Getenv("KEEP_MAIL_NESTED_CHILD") == "1" {
		debug.SetMaxStack(64 << 20)
		deep := strings.Repeat("(", 1<<20)
		err := hostileLabelCall(t, "* 1 FETCH (UID 5 X-GM-LABELS "+deep+"\r\n", true)
		if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "nested more than") ||
			!strings.Contains(err.Error(), "fetch labels") {
			t.Fatalf("fetch: err = %v, want a logic failure saying the answer nests too deep", err)
		}
		err = hostileLabelCall(t, "* 1 FETCH (UID 5 X-GM-LABELS "+deep+"\r\n", false)
		if connectors.ClassOf(err) != connectors.Uncertain || !strings.Contains(err.Error(), "nested more than") {
			t.Fatalf("store: err = %v, want uncertain (the STORE was sent), saying why", err)
		}
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestADeeplyNestedLabelAnswerDoesNotCrashKeep$", "-test.v")
	cmd.Env = append(os.Environ(), "KEEP_MAIL_NESTED_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		if len(out) > 4000 {
			out = out[:4000]
		}
		t.Fatalf("the call in a child process: %v\n%s", err, out)
	}
}

// TestALabelAnswersDeclaredSizeIsNotAllocated: go-imap v1 allocates a
// literal's declared size before it reads a byte of it, so a server that
// announced {2147483648} had keep allocate 2 GiB for a label call. The
// call fails, the server's fault, with next to nothing allocated.
func TestALabelAnswersDeclaredSizeIsNotAllocated(t *testing.T) {
	// not parallel: the allocations measured are the whole process's
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := hostileLabelCall(t, "* 1 FETCH (UID 5 X-GM-LABELS ({2147483648}\r\n", true)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the call allocated %d MiB", grew>>20)
	}
	if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "literal of more than") {
		t.Errorf("err = %v, want a logic failure naming the literal", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the refusal took %s: it waited for the literal", d)
	}
}

// TestLabelsWithParenthesesAreRead: the bound on nesting counts lists, not
// the parentheses inside a quoted label name.
func TestLabelsWithParenthesesAreRead(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("(", 2*maxV1Depth) + " {99}"
	g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
	res, err := c.Do(context.Background(), connectors.Call{Method: "label", Params: map[string]any{"id": "INBOX:7:5", "add": name}, IdempotencyKey: "label-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(map[string]any)["labels"].([]any); len(got) != 2 || got[0] != name {
		t.Fatalf("labels %q", got)
	}
}

// TestAnAnswerPaddedWithAMessageIsNotReadWhole: imapclient reads into
// memory whatever a server puts in an answer, asked for or not, and only
// search and get's one message were bounded: a server that answered
// markRead's fetch of the flags with a message body of any size had keep
// read it all. A call reads a bounded number of bytes, and a server past
// it fails the call, its fault.
func TestAnAnswerPaddedWithAMessageIsNotReadWhole(t *testing.T) {
	// not parallel: the allocations measured are the whole process's
	const size = 48 << 20
	hostile := []byte(fmt.Sprintf("* 1 FETCH (UID 5 FLAGS () BODY[] {%d}\r\n%s)\r\n", size, strings.Repeat("x", size)))
	g := &gimap{gmail: true, labels: map[string]bool{}, hostile: hostile, fetch: true}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
	c.maxMessage, c.maxSearch = 64<<10, 64<<10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := connectors.Do(context.Background(), c, connectors.Call{Method: "markRead", Params: map[string]any{"id": "INBOX:7:5"}, IdempotencyKey: "k"}, true)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 24<<20 {
		t.Errorf("the call allocated %d MiB", grew>>20)
	}
	if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "bytes keep reads in one call") {
		t.Errorf("err = %v, want a logic failure saying the server sent too much", err)
	}
}

// TestTheLabelClientWritesNothingToStandardError: go-imap v1 prints what
// it cannot parse to os.Stderr, through a logger it made in its
// constructor, which is the daemon's terminal when keep runs in one: a
// server had it write there at will. The failure reaches the call; the
// process's standard error hears nothing.
func TestTheLabelClientWritesNothingToStandardError(t *testing.T) {
	// not parallel: os.Stderr is the whole process's
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	// The noise precedes the answer to the FETCH, so the client has
	// read past it, logging as it does, before the call can return.
	g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}, noise: "* 1 FETCH (UID 5 FLAGS (\\Seen \x1b]0;owned\x07\r\n"}
	b := setup(t)
	c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
	call := connectors.Call{Method: "label", Params: map[string]any{"id": "INBOX:7:5", "add": "x"}, IdempotencyKey: "label-1"}
	_, callErr := connectors.Do(context.Background(), c, call, true)
	os.Stderr = stderr
	w.Close()
	heard, _ := io.ReadAll(r)
	if len(heard) > 0 {
		t.Errorf("standard error heard %q", heard)
	}
	if callErr != nil {
		t.Errorf("the call: %v", callErr)
	}
}

// TestResponsesThatCrashedTheLabelClientAreRefused: go-imap v1 indexes
// the fields after EXISTS, RECENT, EXPUNGE and FETCH without looking, in
// its reader goroutine, so "* EXPUNGE" or "* 1 FETCH" alone from a
// server was an index out of range there: a panic nothing recovers, and
// the daemon died. The call fails instead, the server's fault. A panic
// ends the test binary too, so the calls run in a child process.
func TestResponsesThatCrashedTheLabelClientAreRefused(t *testing.T) {
	crashers := []string{"* 1 FETCH\r\n", "* EXPUNGE\r\n", "* EXISTS\r\n", "* recent\r\n", "* FETCH 1\r\n"}
	if os.Getenv("KEEP_MAIL_CRASH_CHILD") == "1" {
		for _, n := range crashers {
			g := &gimap{gmail: true, labels: map[string]bool{`\Inbox`: true}, noise: n}
			b := setup(t)
			c := b.connector(t, func(cfg *Config) { cfg.IMAP = g.serve(t) })
			call := connectors.Call{Method: "label", Params: map[string]any{"id": "INBOX:7:5", "add": "x"}, IdempotencyKey: "label-1"}
			_, err := connectors.Do(context.Background(), c, call, true)
			if connectors.ClassOf(err) != connectors.Logic || !strings.Contains(err.Error(), "response keep does not read") {
				t.Errorf("%q: err = %v, want a logic failure naming the response", n, err)
			}
		}
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResponsesThatCrashedTheLabelClientAreRefused$", "-test.v")
	cmd.Env = append(os.Environ(), "KEEP_MAIL_CRASH_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		if len(out) > 4000 {
			out = out[:4000]
		}
		t.Fatalf("the calls in a child process: %v\n%s", err, out)
	}
}
