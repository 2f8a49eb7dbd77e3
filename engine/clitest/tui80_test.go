package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// tmuxTUI is keep's TUI in a tmux session of its own at a fixed size.
type tmuxTUI struct {
	t       *testing.T
	tmux    string
	socket  string
	session string
}

func startTUI(t *testing.T, w, h int, command string) *tmuxTUI {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("tmux is needed for the end-to-end TUI tests (apt-get install tmux)")
	}
	dir, err := os.MkdirTemp("", "ktmux")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &tmuxTUI{t: t, tmux: tmux, socket: filepath.Join(dir, "tmux.sock"), session: "keep"}
	s.run("new-session", "-d", "-s", s.session, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), command)
	t.Cleanup(func() { exec.Command(tmux, "-S", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxTUI) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxTUI) screen() string { return s.run("capture-pane", "-p", "-t", s.session) }

func (s *tmuxTUI) keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", s.session}, keys...)...)
}

// waitFor waits until the screen says what (or, with not, stops saying it).
func (s *tmuxTUI) waitFor(what string, not bool) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sc := s.screen()
		if strings.Contains(sc, what) != not {
			return sc
		}
		if time.Now().After(deadline) {
			verb := "showed"
			if not {
				verb = "stopped showing"
			}
			s.t.Fatalf("the screen never %s %q:\n%s", verb, what, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTUIAt80x24 drives the real binary in tmux at 80x24, as a newcomer
// would: the demo's folder is named on the first screen until a file is
// dropped there; the selected card is marked in text (NO_COLOR); the tab
// strip and the help bar fit, keeping ? and q; ? names every key of the
// pane, skip input included; p asks before it pauses.
func TestTUIAt80x24(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "keep.db")
	if err := os.MkdirAll(filepath.Join(dir, "cfg", "keep"), 0o700); err != nil { // watched from the start
		t.Fatal(err)
	}
	env := "HOME=" + dir + " XDG_CONFIG_HOME=" + filepath.Join(dir, "cfg") + " NO_COLOR=1"
	s := startTUI(t, 80, 24, "env "+env+" "+keepBin+" --db "+db)

	sc := s.waitFor("APPROVAL", false)
	lines := strings.Split(strings.TrimRight(sc, "\n"), "\n")
	if !strings.Contains(lines[0], "demo: drop a .txt into ~/data/demo/inbox") {
		t.Errorf("the first screen does not name the demo's folder:\n%s", sc)
	}
	if !strings.Contains(sc, "│ > APPROVAL") {
		t.Errorf("the selected card is not marked in text:\n%s", sc)
	}
	for _, l := range []string{lines[1], lines[len(lines)-1]} {
		if utf8.RuneCountInString(strings.TrimRight(l, " ")) > 80 || strings.Contains(l, "…") {
			t.Errorf("a line does not fit 80 columns: %q", l)
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "? help") || !strings.Contains(last, "q quit") {
		t.Errorf("the help bar lost ? or q: %q", last)
	}
	if !strings.Contains(sc, "a: this call · A: always, for") {
		t.Errorf("the card does not name both answers:\n%s", sc)
	}

	s.keys("?")
	sc = s.waitFor("in parentheses:", false)
	for _, key := range []string{"approve", "always", "skip input", "retry", "help", "quit"} {
		if !strings.Contains(sc, key) {
			t.Errorf("? does not list %q:\n%s", key, sc)
		}
	}
	fit80(t, sc)
	s.keys("?")
	s.waitFor("in parentheses:", true)

	// every pane: its selected row marked in text, the tab strip and the
	// hints within 80 columns, ? listing the pane's keys and fitting too
	for _, p := range []struct{ key, box, marked, listed string }{
		{"1", "─ 1 Workflows", "│ > ", "dry run"},
		{"2", "─ 2 Inputs", "│ > ", "skip input"},
		{"4", "─ 4 Run log", "│ > #", "enter trace"},
		{"5", "─ 5 Accounts", "", "(back)"},
	} {
		s.keys(p.key)
		sc = s.waitFor(p.box, false)
		if p.marked != "" {
			sc = s.waitFor(p.marked, false) // the selected row marked in text, once the rows are read
		}
		fit80(t, sc)
		s.keys("?")
		sc = s.waitFor("in parentheses:", false)
		if !strings.Contains(sc, p.listed) {
			t.Errorf("pane %s: ? does not list %q:\n%s", p.key, p.listed, sc)
		}
		fit80(t, sc)
		s.keys("?")
		s.waitFor("in parentheses:", true)
	}

	s.keys("1", "p")
	s.waitFor("pause demo? sure?", false)
	s.keys("n")
	s.waitFor("cancelled", false)

	// approve the welcome note, then drop a file and run the producer now
	s.keys("3", "a")
	s.waitFor("Nothing needs you.", false)
	if err := os.WriteFile(filepath.Join(dir, "data", "demo", "inbox", "second.txt"), []byte("a second note\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// the approved run may still be finishing, and run now is refused
	// while a run is active (as the CLI's is): asked again, as a person
	// reading the refusal would, until the producer's run takes the file
	s.keys("1", "R")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		sc = s.screen()
		if !strings.Contains(sc, "demo: drop a .txt into") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never stopped showing %q:\n%s", "demo: drop a .txt into", sc)
		}
		if strings.Contains(sc, "has a run in progress") {
			time.Sleep(200 * time.Millisecond)
			s.keys("R")
		}
	}

	// a config written under the open TUI reaches its engine, and it says
	// what changed
	cfg := filepath.Join(dir, "cfg", "keep", "config.toml")
	if err := os.WriteFile(cfg, []byte("[policy]\ncrash_limit = 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.waitFor("config reloaded: policy.crash_limit changed", false)
	s.keys("q")
}

// fit80 fails unless the screen's tab strip, status and help lines fit 80
// columns uncut.
func fit80(t *testing.T, sc string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(sc, "\n"), "\n")
	for i, l := range lines {
		if utf8.RuneCountInString(strings.TrimRight(l, " ")) > 80 {
			t.Errorf("line %d does not fit 80 columns: %q", i, l)
		}
	}
	if strings.Contains(lines[1], "…") || strings.Contains(lines[len(lines)-1], "…") {
		t.Errorf("the tab strip or the hints are cut:\n%s", sc)
	}
}

// TestTUIAcrossAnEngineRestart: a TUI attached to a daemon that restarts
// under it listens again; a key on a card no longer waiting (answered
// meanwhile elsewhere) says so on screen rather than failing.
func TestTUIAcrossAnEngineRestart(t *testing.T) {
	e := newEnv(t, "ask")
	e.deployLines()
	d := startDaemon(t, e)
	awaitSocket(t, e, d, 30*time.Second)
	env := "HOME=" + e.dir + " XDG_CONFIG_HOME=" + filepath.Join(e.dir, "xdg-config") + " NO_COLOR=1"
	s := startTUI(t, 80, 24, "env "+env+" "+keepBin+" --db "+e.db+" --config "+e.config)
	s.keys("3")
	s.waitFor("> APPROVAL", false)

	// the daemon stops (a service restart) and starts again; meanwhile the
	// call is answered elsewhere
	d.kill(t)
	d = startDaemon(t, e)
	defer d.kill(t)
	awaitSocket(t, e, d, 30*time.Second)
	a := attentionOf(e, "approval")
	if len(a) != 1 {
		t.Fatalf("approvals = %+v", a)
	}
	e.ok("approve", a[0].ID)
	// answered on screen: either the TUI heard of it and shows it gone,
	// or the key says the card no longer waits
	s.keys("a")
	// under a loaded machine a key sent while the TUI was busy with the
	// engine's return has been seen to leave no trace (the cause is not
	// known): a person presses again, and so does this test, every 10 s
	deadline, again := time.Now().Add(60*time.Second), time.Now().Add(10*time.Second)
	for {
		if time.Now().After(again) {
			s.keys("a")
			again = time.Now().Add(10 * time.Second)
		}
		sc := s.screen()
		if strings.Contains(sc, "no longer waiting") {
			break
		}
		if !strings.Contains(sc, "APPROVAL") || strings.Contains(sc, "failed:") && !strings.Contains(sc, "no longer waiting") {
			if strings.Contains(sc, "failed:") {
				t.Fatalf("a key on a card no longer waiting reads as a failure:\n%s", sc)
			}
			break // the TUI listened again and the card is gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never said the card no longer waits:\n%s", sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
