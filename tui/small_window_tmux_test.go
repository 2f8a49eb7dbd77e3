package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The real program in a real 20x6 terminal, too small for a pane: the
// screen says so and the size that draws one, and q, as a terminal sends
// it, quits. Grown to 80x24 the pane comes back.
func TestATooSmallTerminalSaysSoAndQuits(t *testing.T) {
	if os.Getenv("KEEP_TUI_SMALL_CHILD") != "" {
		if err := Run(context.Background(), newStub(), Options{Now: func() time.Time { return testNow }, NoColor: true}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tm, waitFor := tuiInTmux(t, "ktsml", "KEEP_TUI_SMALL_CHILD", 20, 6)
	sc := waitFor("too small: 7 rows")
	if !strings.Contains(sc, "q quit") {
		t.Errorf("the help bar does not offer q:\n%s", sc)
	}
	tm("resize-window", "-t", "s", "-x", "80", "-y", "24")
	waitFor("╰")
	tm("resize-window", "-t", "s", "-x", "20", "-y", "6")
	waitFor("too small: 7 rows")
	tm("send-keys", "-t", "s", "q")
	waitFor("ENDED 0")
}
