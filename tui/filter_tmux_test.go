package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The filter in a real terminal: text pasted (bracketed, as a terminal
// sends a paste) goes in on one line; typed past the box its end shows;
// backspace after an accent typed as a combining mark takes the letter
// with it.
func TestTheFilterInARealTerminal(t *testing.T) {
	if os.Getenv("KEEP_TUI_FILTER_CHILD") != "" {
		if err := Run(context.Background(), newStub(), Options{Now: func() time.Time { return testNow }, NoColor: true}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tm, waitFor := tuiInTmux(t, "ktflt", "KEEP_TUI_FILTER_CHILD", 40, 24)
	waitFor("email-to-sheets")
	tm("send-keys", "-t", "s", "1", "/")
	waitFor("keep filter")
	tm("set-buffer", "-b", "p", "inbox\n-arch")
	tm("paste-buffer", "-p", "-d", "-b", "p", "-t", "s")
	waitFor("/ inbox -arch")
	tm("send-keys", "-t", "s", "-l", " the quick brown fox jumps over the lazy dog")
	waitFor("lazy dog")
	tm("send-keys", "-t", "s", "C-u")
	tm("send-keys", "-t", "s", "-l", "cafe\u0301")
	waitFor("/ cafe\u0301")
	tm("send-keys", "-t", "s", "BSpace")
	sc := waitFor("/ caf ")
	if strings.Contains(sc, "/ cafe") {
		t.Errorf("backspace left the bare letter of an accented one:\n%s", sc)
	}
	tm("send-keys", "-t", "s", "Escape")
	waitFor("? help")
	tm("send-keys", "-t", "s", "q")
	waitFor("ENDED 0")
}
