package tui

import (
	"context"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// While the TUI draws, what anything else in the process writes to
// standard error (go-imap's own logger printing a server's answer, Go's
// log package) must not reach the terminal: between frames it breaks the
// screen, and a server or a script chooses what escape sequences it
// carries. Here a library's logger clears the screen and writes in the
// middle of it while the TUI runs in a real terminal: the TUI's screen
// stays, and the line is in keep's log, its escapes shown, not obeyed.
func TestWhatElseWritesToStandardErrorStaysOffTheScreen(t *testing.T) {
	if logPath := os.Getenv("KEEP_TUI_STDERR_CHILD"); logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			os.Exit(2)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			lib := log.New(os.Stderr, "imap/client: ", 0) // as go-imap makes its own
			for range 300 {
				lib.Println("cannot handle response \x1b[2J\x1b[5;5HPWNED\x1b]0;title\x07")
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
		}()
		err = Run(ctx, newStub(), Options{Now: func() time.Time { return testNow }, NoColor: true, Logger: slog.New(slog.NewTextHandler(f, nil))})
		f.Close()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	tm, killServer, self := tmuxServer(t, "ktstderr")
	t.Cleanup(killServer)
	logPath := filepath.Join(t.TempDir(), "keep.log")
	tm("new-session", "-d", "-s", "s", "-x", "100", "-y", "30",
		"sh -c 'exec env KEEP_TUI_STDERR_CHILD="+logPath+" "+self+
			" -test.run=^TestWhatElseWritesToStandardErrorStaysOffTheScreen$'; echo ENDED $?; sleep 600")
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(tm("capture-pane", "-p", "-t", "s"), "APPROVAL"); {
		if time.Now().After(deadline) {
			t.Fatalf("the TUI never showed its first screen:\n%s", tm("capture-pane", "-p", "-t", "s"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// the library writes every 20 ms: once some lines are logged (or the
	// screen shows them), look
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, _ := os.ReadFile(logPath)
		if strings.Count(string(b), "cannot handle response") >= 5 || strings.Contains(tm("capture-pane", "-p", "-t", "s"), "PWNED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing the library wrote arrived anywhere; the log:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	screen := tm("capture-pane", "-p", "-t", "s")
	if strings.Contains(screen, "PWNED") || strings.Contains(screen, "cannot handle response") || !strings.Contains(screen, "APPROVAL") {
		t.Errorf("what the library wrote reached the TUI's screen:\n%s", screen)
	}
	tm("send-keys", "-t", "s", "q")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(tm("capture-pane", "-p", "-t", "s"), "ENDED"); {
		if time.Now().After(deadline) {
			t.Fatalf("the TUI did not end on q:\n%s", tm("capture-pane", "-p", "-t", "s"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	logged := string(b)
	if !strings.Contains(logged, "cannot handle response") {
		t.Errorf("keep's log has nothing of what was written:\n%s", logged)
	}
	if strings.Contains(logged, "\x1b") || strings.Contains(logged, "\x07") {
		t.Errorf("keep's log holds the escapes as they were written:\n%q", logged)
	}
}
