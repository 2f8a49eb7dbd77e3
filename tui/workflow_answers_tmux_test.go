package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// The real program in a real 80x24 terminal: a workflow's answers under
// its row each fit on one line of the box, its borders whole, and the
// screen is 24 lines.
func TestAWorkflowsAnswersFitARealTerminal(t *testing.T) {
	if os.Getenv("KEEP_TUI_ANSWERS_CHILD") != "" {
		s := newStub()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": append(twoOlder(), threeAnswers()...)}
		if err := Run(context.Background(), s, Options{Now: func() time.Time { return testNow }, NoColor: true}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tm, waitFor := tuiInTmux(t, "ktans", "KEEP_TUI_ANSWERS_CHILD", 80, 24)
	waitFor("3 Attention (2)")
	tm("send-keys", "-t", "s", "1") // the window opens on the approval waiting
	sc := waitFor("resume (block 4) by user, 5 min ago")
	if n := len(strings.Split(sc, "\n")); n > 24 {
		t.Errorf("%d lines on a 24-line terminal:\n%s", n, sc)
	}
	for _, want := range []string{"answered:", "2 earlier (keep status --json has them)",
		"pause by user, 3 days ago", "retry (block 3) by user, 2 h ago", "resume (block 4) by user, 5 min ago"} {
		var line string
		for _, l := range strings.Split(sc, "\n") {
			if strings.Contains(l, want) {
				line = strings.TrimRight(l, " ")
			}
		}
		if !strings.HasPrefix(line, "│") || !strings.HasSuffix(line, "│") {
			t.Errorf("%q is not whole on one line of the box: %q\n%s", want, line, sc)
		}
	}
	tm("send-keys", "-t", "s", "q")
	waitFor("ENDED 0")
}
