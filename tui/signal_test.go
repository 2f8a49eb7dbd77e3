package tui

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The TUI stopped by a signal (kill, a logout, systemctl) ends and gives
// the terminal back as it found it, however it was started: here as
// keep's main starts it, with a context the same signals end. Bubble Tea's
// own handler then raced the context: its quit, sent to a program that had
// already stopped reading, never arrived, and the program waited for it
// for ever, the screen left in the alternate buffer with no cursor; every
// later SIGTERM went to that handler too.
func TestASignalEndsTheTUIAndGivesTheTerminalBack(t *testing.T) {
	if os.Getenv("KEEP_TUI_SIGNAL_CHILD") != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		go func() { <-ctx.Done(); stop() }() // as main: a second signal ends it at once
		err := Run(ctx, newStub(), Options{Now: func() time.Time { return testNow }, NoColor: true})
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tm, killServer, self := tmuxServer(t, "ktsig")
	dir := t.TempDir()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		session := "s" + strconv.Itoa(int(sig))
		// the shell stays, so the terminal's state can be read once it ends
		tm("new-session", "-d", "-s", session, "-x", "100", "-y", "30",
			"sh -c 'echo $$ >"+filepath.Join(dir, "pid")+"; exec env KEEP_TUI_SIGNAL_CHILD=1 "+self+
				" -test.run=^TestASignalEndsTheTUIAndGivesTheTerminalBack$'; echo ENDED $?; sleep 600")
		t.Cleanup(killServer)
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(tm("capture-pane", "-p", "-t", session), "APPROVAL"); {
			if time.Now().After(deadline) {
				t.Fatalf("the TUI never showed its first screen:\n%s", tm("capture-pane", "-p", "-t", session))
			}
			time.Sleep(50 * time.Millisecond)
		}
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(tm("capture-pane", "-p", "-t", session), "ENDED"); {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("%v: the TUI still runs 10 s after it", sig)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := tm("display", "-p", "-t", session, "#{alternate_on} #{cursor_flag}"); got != "0 1" {
			t.Errorf("%v: after the TUI ended, alternate screen and cursor shown = %q, want \"0 1\"", sig, got)
		}
		if s := tm("capture-pane", "-p", "-t", session); !strings.Contains(s, "ENDED 0") {
			t.Errorf("%v: the TUI did not end cleanly:\n%s", sig, s)
		}
	}
}
