package tui

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"keep/engine/api"
	"keep/engine/enginetest"
)

// Layer 3: whole-program flows with teatest: a real tea.Program, keys
// typed, notifications sent in the way Run sends them.

// seen lets a test wait until the program is about to handle a message
// matching want (the filter runs just before Update), which is sturdier
// than matching the renderer's partial redraws.
type seen struct {
	mu    sync.Mutex
	want  func(tea.Msg) bool
	ch    chan struct{}
	fired bool
}

func (s *seen) filter(_ tea.Model, msg tea.Msg) tea.Msg {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.want != nil && !s.fired && s.want(msg) {
		s.fired = true
		close(s.ch)
	}
	return msg
}

func (s *seen) expect(want func(tea.Msg) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.want, s.ch, s.fired = want, make(chan struct{}), false
}

func (s *seen) wait(t *testing.T, what string) {
	t.Helper()
	s.mu.Lock()
	ch := s.ch
	s.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func startProgram(t *testing.T, api *stubAPI, w, h int) (*teatest.TestModel, *seen) {
	t.Helper()
	m := New(api, Options{Now: func() time.Time { return testNow }, NoColor: true})
	s := &seen{}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii), tea.WithFilter(s.filter)))
	// both first reads in: a key typed before Attention is loaded finds
	// no card to answer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return strings.Contains(string(b), "email-to-sheets") && strings.Contains(string(b), "APPROVAL")
	}, teatest.WithDuration(5*time.Second))
	return tm, s
}

func waitCall(t *testing.T, api *stubAPI, call string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if slices.Contains(api.actions(), call) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %q; calls: %v", call, api.actions())
}

func finalScreen(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model).render()
}

func isAttention(n int) func(tea.Msg) bool {
	return func(msg tea.Msg) bool {
		r, ok := msg.(refreshMsg)
		return ok && slices.ContainsFunc(r.msgs, func(m tea.Msg) bool {
			a, ok := m.(attentionMsg)
			return ok && len(a.items) == n
		})
	}
}

func TestProgram(t *testing.T) {
	t.Parallel()

	t.Run("press 3, a: Approve is called with the id, and the view follows the notification", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		tm, s := startProgram(t, apiHost, 120, 40)
		// The approve's outcome must be in before the notification, or its
		// "approved …" would follow the notification in the status line.
		s.expect(func(msg tea.Msg) bool { _, ok := msg.(doneMsg); return ok })
		tm.Type("3")
		tm.Type("a")
		waitCall(t, apiHost, "Approve m7 always=false")
		s.wait(t, "the approve's outcome")

		// The engine applies it and says so; the TUI re-reads.
		apiHost.mu.Lock()
		apiHost.attention = apiHost.attention[1:]
		apiHost.workflows[0].State, apiHost.workflows[0].Attention = api.StateIdle, 0
		apiHost.mu.Unlock()
		s.expect(isAttention(1))
		tm.Send(notifyMsg{Kind: api.NoteRunCommitted, Workflow: "email-to-sheets", Text: "email-to-sheets added a row"})
		s.wait(t, "the re-read after the notification")

		screen := finalScreen(t, tm)
		for _, want := range []string{"3 Attention (1)", "last: email-to-sheets added a row", "UNCERTAIN"} {
			if !strings.Contains(screen, want) {
				t.Errorf("screen lacks %q:\n%s", want, screen)
			}
		}
		if strings.Contains(screen, "APPROVAL") {
			t.Errorf("the approved item is still shown:\n%s", screen)
		}
	})

	t.Run("at 80×24 a reject waits for y", func(t *testing.T) {
		t.Parallel()
		api := newStub()
		tm, _ := startProgram(t, api, 80, 24)
		tm.Type("3x")
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "sure?") },
			teatest.WithDuration(5*time.Second))
		if got := api.actions(); len(got) != 0 {
			t.Fatalf("called before y: %v", got)
		}
		tm.Type("y")
		waitCall(t, api, "Reject m7")
		finalScreen(t, tm)
	})

	t.Run("d, a approves nothing behind the dry run; 3, a approves the card then on screen", func(t *testing.T) {
		t.Parallel()
		api := newStub()
		tm, s := startProgram(t, api, 120, 40)
		tm.Type("d")
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "Dry run") },
			teatest.WithDuration(5*time.Second))
		// keys are handled in order: once 3 reaches the program, a has been
		s.expect(func(msg tea.Msg) bool { k, ok := msg.(tea.KeyPressMsg); return ok && k.Text == "3" })
		tm.Type("a")
		tm.Type("3")
		s.wait(t, "the 3 after the a")
		if got := api.actions(); slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "Approve") }) {
			t.Fatalf("a approved behind the dry run: %v", got)
		}
		tm.Type("a")
		waitCall(t, api, "Approve m7 always=false")
		finalScreen(t, tm)
	})

	t.Run("an uncertain mutation toasts for a while", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		tm, _ := startProgram(t, apiHost, 120, 40)
		tm.Send(notifyMsg{Kind: api.NoteIndeterminate, Workflow: "inbox-archive", Text: "inbox-archive: did it post?"})
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "Uncertain: did it happen?") },
			teatest.WithDuration(5*time.Second))
		finalScreen(t, tm)
	})
}

func TestBridge(t *testing.T) {
	t.Parallel()

	t.Run("notifications reach the program until stop", func(t *testing.T) {
		t.Parallel()
		notes := make(chan api.Notification, 2)
		stop := make(chan struct{})
		got := make(chan tea.Msg, 2)
		done := make(chan struct{})
		go func() { bridge(notes, func(m tea.Msg) { got <- m }, stop); close(done) }()
		notes <- api.Notification{Kind: api.NoteChanged, Text: "x"}
		if m := enginetest.Wait(t, got, enginetest.Timeout); m.(notifyMsg).Text != "x" {
			t.Fatalf("got %v", m)
		}
		close(stop)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("bridge did not stop")
		}
	})
}
