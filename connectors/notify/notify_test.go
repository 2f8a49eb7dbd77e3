package notify_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"keep/connectors"
	"keep/connectors/notify"
	"keep/tui/printable"
)

// fakeNotifier writes an executable named notify-send into a fresh
// directory: it records its arguments, one a line, to args beside it, then
// runs tail (a shell snippet). It uses only shell builtins, since PATH
// may hold nothing but the fake.
func fakeNotifier(t *testing.T, tail string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"${0%/*}/args\"\n" + tail + "\n"
	if err := os.WriteFile(filepath.Join(dir, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func send(t *testing.T, c *notify.Connector, ctx context.Context, params map[string]any) (any, error) {
	t.Helper()
	return c.Do(ctx, connectors.Call{Method: "send", Params: params, IdempotencyKey: "k1"})
}

func TestSend(t *testing.T) {
	t.Parallel()

	t.Run("it runs the notifier with the title and body after a double dash", func(t *testing.T) {
		t.Parallel()
		dir := fakeNotifier(t, "exit 0")
		c, _ := notify.New(notify.Config{Command: filepath.Join(dir, "notify-send")})
		got, err := send(t, c, context.Background(), map[string]any{"title": "-rf Done", "body": "3 files"})
		if err != nil {
			t.Fatal(err)
		}
		m := got.(map[string]any)
		if m["delivered"] != true || m["via"] != "notify-send" {
			t.Fatalf("got %v", m)
		}
		args, _ := os.ReadFile(filepath.Join(dir, "args"))
		if want := "--app-name=keep\n--\n-rf Done\n3 files\n"; string(args) != want {
			t.Fatalf("args %q, want %q", args, want)
		}
	})

	t.Run("without a notifier the sink shows it", func(t *testing.T) {
		t.Parallel()
		var gotTitle, gotBody string
		c, _ := notify.New(notify.Config{
			Command: filepath.Join(t.TempDir(), "notify-send"),
			Sink:    func(title, body string) bool { gotTitle, gotBody = title, body; return true },
		})
		got, err := send(t, c, context.Background(), map[string]any{"title": "Hi", "body": "there"})
		if err != nil {
			t.Fatal(err)
		}
		if got.(map[string]any)["via"] != "tui" || gotTitle != "Hi" || gotBody != "there" {
			t.Fatalf("got %v, sink saw %q %q", got, gotTitle, gotBody)
		}
	})

	t.Run("without a notifier, a sink nobody took it from is no delivery", func(t *testing.T) {
		t.Parallel()
		told := 0
		c, _ := notify.New(notify.Config{
			Command: filepath.Join(t.TempDir(), "notify-send"),
			Sink:    func(string, string) bool { told++; return false },
		})
		got, err := send(t, c, context.Background(), map[string]any{"title": "Hi"})
		if connectors.ClassOf(err) != connectors.Logic || told != 1 {
			t.Fatalf("got %v, %v (sink told %d times), want a logic error", got, err, told)
		}
	})

	t.Run("with a notifier the sink is told too, and the notifier says how it went", func(t *testing.T) {
		t.Parallel()
		dir := fakeNotifier(t, "exit 0")
		told := 0
		c, _ := notify.New(notify.Config{Command: filepath.Join(dir, "notify-send"), Sink: func(string, string) bool { told++; return true }})
		got, err := send(t, c, context.Background(), map[string]any{"title": "Hi"})
		if err != nil || got.(map[string]any)["via"] != "notify-send" || told != 1 {
			t.Fatalf("got %v, %v, sink told %d times", got, err, told)
		}
	})

	t.Run("a notifier that fails is no failure when the sink showed it", func(t *testing.T) {
		t.Parallel()
		dir := fakeNotifier(t, "echo 'no bus' >&2; exit 1")
		c, _ := notify.New(notify.Config{Command: filepath.Join(dir, "notify-send"), Sink: func(string, string) bool { return true }})
		got, err := send(t, c, context.Background(), map[string]any{"title": "Hi"})
		if err != nil || got.(map[string]any)["via"] != "tui" {
			t.Fatalf("got %v, %v, want delivered by the sink", got, err)
		}
	})

	t.Run("a long body is refused rather than cut", func(t *testing.T) {
		t.Parallel()
		c, _ := notify.New(notify.Config{Sink: func(string, string) bool { return true }})
		_, err := send(t, c, context.Background(), map[string]any{"title": "x", "body": strings.Repeat("b", 5000)})
		if connectors.ClassOf(err) != connectors.Logic {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("the preview shows title and body and the scope is empty", func(t *testing.T) {
		t.Parallel()
		c, _ := notify.New(notify.Config{})
		m := c.Methods()[0]
		p := map[string]any{"title": "Invoice paid", "body": "ACME, 120 EUR"}
		if got := m.Preview(p); got != `notify "Invoice paid": "ACME, 120 EUR"` {
			t.Fatalf("preview %q", got)
		}
		if m.Scope(p) != "" || m.Kind != connectors.Mutate || !strings.Contains(m.Check(p), "Invoice paid") {
			t.Fatalf("method %+v", m)
		}
		if _, ok := any(c).(connectors.Reconciler); ok {
			t.Fatal("notify must not claim to reconcile")
		}
	})
}

func TestSendFailureClasses(t *testing.T) {
	t.Parallel()

	missing := func(t *testing.T) string { return filepath.Join(t.TempDir(), "notify-send") }
	script := func(tail string) func(t *testing.T) string {
		return func(t *testing.T) string { return filepath.Join(fakeNotifier(t, tail), "notify-send") }
	}
	cases := []struct {
		name    string
		command func(t *testing.T) string
		params  map[string]any
		timeout time.Duration
		want    connectors.Class
	}{
		{"no notifier and no sink is a logic error", missing, map[string]any{"title": "x"}, 0, connectors.Logic},
		{"a missing title is a logic error", script("exit 0"), map[string]any{"body": "x"}, 0, connectors.Logic},
		{"a body that is not a string is a logic error", script("exit 0"), map[string]any{"title": "x", "body": 3.0}, 0, connectors.Logic},
		{"a notifier that exits non-zero is transient", script("echo 'no bus' >&2; exit 1"), map[string]any{"title": "x"}, 0, connectors.Transient},
		{"a notifier killed at the deadline is uncertain", script("exec sleep 5"), map[string]any{"title": "x"}, 200 * time.Millisecond, connectors.Uncertain},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := notify.New(notify.Config{Command: tc.command(t)})
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			_, err := send(t, c, ctx, tc.params)
			if got := connectors.ClassOf(err); got != tc.want {
				t.Fatalf("class %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	t.Run("a send whose context is already done is transient", func(t *testing.T) {
		t.Parallel()
		dir := fakeNotifier(t, "exit 0")
		c, _ := notify.New(notify.Config{Command: filepath.Join(dir, "notify-send")})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := send(t, c, ctx, map[string]any{"title": "x"})
		if connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("got %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "args")); !os.IsNotExist(err) {
			t.Fatal("the notifier ran")
		}
	})
	t.Run("the missing notifier error names it", func(t *testing.T) {
		t.Parallel()
		c, _ := notify.New(notify.Config{Command: "keep-no-such-notifier"})
		_, err := send(t, c, context.Background(), map[string]any{"title": "x"})
		if err == nil || !strings.Contains(err.Error(), "no desktop notifier (keep-no-such-notifier not found)") {
			t.Fatalf("got %v", err)
		}
		// the reference (keep help api, keep.d.ts) says a send fails so,
		// not that something else shows it
		if doc := c.Methods()[0].Doc; !strings.Contains(doc, "with neither notify-send nor an open TUI the call fails") {
			t.Errorf("notify.send's doc %q does not say it fails with neither notify-send nor a TUI", doc)
		}
	})
}

// TestSendFindsTheNotifierOnPath is not parallel: it sets PATH, which the
// default Command is looked up on.
func TestSendFindsTheNotifierOnPath(t *testing.T) {
	dir := fakeNotifier(t, "exit 0")
	t.Setenv("PATH", dir)
	c, err := notify.New(notify.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := send(t, c, context.Background(), map[string]any{"title": "On PATH"})
	if err != nil {
		t.Fatal(err)
	}
	if got.(map[string]any)["via"] != "notify-send" {
		t.Fatalf("got %v", got)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if string(args) != "--app-name=keep\n--\nOn PATH\n" {
		t.Fatalf("args %q", args)
	}
}

// A desktop notification is text a script wrote, shown outside keep: its
// control and invisible characters go escaped, as on every screen of
// keep's, and its body's markup is shown as text. Before, notify-send was
// handed ESC, BEL, a C1 CSI and a bidi override raw, and a body of
// <a href="…">Click to verify</a> <img src="file:///…"/> was a link and
// an image to every notification server that reads markup.
func TestSendHandsTheDesktopTextNotMarkupOrControls(t *testing.T) {
	t.Parallel()
	dir := fakeNotifier(t, "exit 0")
	c, _ := notify.New(notify.Config{Command: filepath.Join(dir, "notify-send")})
	_, err := send(t, c, context.Background(), map[string]any{
		"title": "Bank \u202eevil\x1b]0;x\x07",
		"body":  "<a href=\"https://evil.example/\">Click to verify</a> & <img src=\"file:///etc/passwd\"/> \u009b2J\u200b",
	})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	want := "--app-name=keep\n--\n" +
		`Bank \u202eevil\x1b]0;x\x07` + "\n" +
		`&lt;a href="https://evil.example/"&gt;Click to verify&lt;/a&gt; &amp; &lt;img src="file:///etc/passwd"/&gt; \u009b2J\u200b` + "\n"
	if string(args) != want {
		t.Fatalf("notify-send was handed\n%q\nwant\n%q", args, want)
	}
}

// The desktop escapes what every screen of keep's escapes, rune for rune.
func TestDesktopTextEscapesWhatPrintableEscapes(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		if p, d := printable.String(s) != s, notify.DesktopText(s) != s; p != d {
			t.Errorf("%U: printable escapes it: %v, the desktop: %v", r, p, d)
		}
	}
	if s := "Done: 3 files\n\tnext ❤ e\u0301"; notify.DesktopText(s) != s {
		t.Errorf("DesktopText changed visible text: %q", notify.DesktopText(s))
	}
}
