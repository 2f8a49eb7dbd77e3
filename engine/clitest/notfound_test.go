package clitest

import (
	"strings"
	"testing"
)

// TestNotFoundSaysSoFirst: whatever names something that does not exist
// fails (exit 1) with one line that begins "keep: not found: ", so a
// person or a script tells a missing thing from a failure the same way for
// every command, attention ID included.
func TestNotFoundSaysSoFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ask")
	e.deployLines()
	for _, args := range [][]string{
		{"attention", "999"},
		{"attention", "p9", "--json"},
		{"status", "nope"},
		{"logs", "lines", "--run", "999"},
		{"approve", "999"},
		{"reject", "p999"},
		{"resolve", "999", "happened"},
		{"skip", "999"},
		{"skip-input", "999"},
	} {
		r := e.expect(1, args...)
		if r.stdout != "" || !strings.HasPrefix(r.stderr, "keep: not found: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("keep %s: want one line on stderr beginning %q and nothing on stdout, got %s", strings.Join(args, " "), "keep: not found: ", r)
		}
	}
}
