package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The real program in a real 80x24 terminal: a card of 100 lines is cut at
// the pane's foot with a line saying more is below, and J, as a terminal
// sends it, scrolls to its last line.
func TestACardScrollsInARealTerminal(t *testing.T) {
	if os.Getenv("KEEP_TUI_SCROLL_CHILD") != "" {
		s := newStub()
		s.attention[0].Preview = longPreview(93)
		if err := Run(context.Background(), s, Options{Now: func() time.Time { return testNow }, NoColor: true}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tm, waitFor := tuiInTmux(t, "ktscr", "KEEP_TUI_SCROLL_CHILD", 80, 24)
	const lastLine = `because of: Email from alice@example.com: "Invoice December"`
	sc := waitFor("more lines · J")
	if strings.Contains(sc, lastLine) {
		t.Fatalf("the card's last line shows before it was scrolled:\n%s", sc)
	}
	// J at the card's foot does nothing: more presses than it needs are harmless
	tm(append([]string{"send-keys", "-t", "s"}, strings.Split(strings.Repeat("J", 20), "")...)...)
	sc = waitFor(lastLine)
	if !strings.Contains(sc, "more lines · K") {
		t.Errorf("scrolled to its foot, nothing says the card goes on above:\n%s", sc)
	}
	tm("send-keys", "-t", "s", "q")
	waitFor("ENDED 0")
}
