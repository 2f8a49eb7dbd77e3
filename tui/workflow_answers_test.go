package tui

import (
	"strings"
	"testing"

	"keep/engine/api"
)

// threeAnswers is a workflow paused, then retried and resumed on two
// blocks: oldest first, as the engine gives them.
func threeAnswers() []api.AnswerView {
	return []api.AnswerView{
		{Answer: "pause", AnsweredBy: "user", At: mins(3 * 24 * 60)},
		{Answer: "retry", AnsweredBy: "user", At: mins(120), Block: 3},
		{Answer: "resume", AnsweredBy: "user", At: mins(5), Block: 4},
	}
}

// twoOlder are answers given weeks before threeAnswers.
func twoOlder() []api.AnswerView {
	return []api.AnswerView{
		{Answer: "pause", AnsweredBy: "user", At: mins(20 * 24 * 60)},
		{Answer: "resume", AnsweredBy: "user", At: mins(19 * 24 * 60)},
	}
}

// leftText is the Workflows pane's text in the wide layout, its lines
// joined by spaces: an answer wrapped in the narrow pane reads whole.
func leftText(screen string) string {
	var words []string
	for _, l := range strings.Split(screen, "\n") {
		cells := strings.Split(l, "│")
		if len(cells) >= 3 {
			words = append(words, strings.Fields(strings.TrimPrefix(cells[1], "> "))...)
		}
	}
	return strings.Join(words, " ")
}

// inOrder says whether each of wants is in s, each after the one before.
func inOrder(s string, wants ...string) bool {
	for _, w := range wants {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

// What the person answered about a workflow itself (pause, retry,
// resume) is read back under its row in pane 1 when it is selected,
// newest last, each with the block it answered, who gave it and when, as
// keep status lists them: weeks later, every answer is still answered.
func TestAWorkflowsAnswersShowUnderItsRow(t *testing.T) {
	t.Parallel()

	t.Run("three answers under the selected row, in a window of tabs", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": threeAnswers()}
		h := newHarness(t, s, 80, 24)
		h.keys("1") // the window opens on the approval waiting
		sc := h.screen()
		if !inOrder(sc, "email-to-sheets", "Checks every 5 min", "answered:",
			"pause by user, 3 days ago", "retry (block 3) by user, 2 h ago", "resume (block 4) by user, 5 min ago",
			"inbox-archive") {
			t.Fatalf("the workflow's three answers are not listed under its row, newest last:\n%s", sc)
		}
		if strings.Contains(sc, "earlier") {
			t.Errorf("three answers, all listed, and a line says more are earlier:\n%s", sc)
		}
		fits(t, sc)
	})

	t.Run("beside the other panes, wrapped in the narrow pane rather than cut", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": threeAnswers()}
		h := newHarness(t, s, 120, 40)
		if got := leftText(h.screen()); !inOrder(got, "email-to-sheets", "answered:",
			"pause by user, 3 days ago", "retry (block 3) by user, 2 h ago", "resume (block 4) by user, 5 min ago",
			"inbox-archive") {
			t.Fatalf("the Workflows pane does not list the three answers whole:\n%s\n%s", got, h.screen())
		}
	})

	t.Run("the newest three, and a line counting the earlier ones", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": append(twoOlder(), threeAnswers()...)}
		h := newHarness(t, s, 80, 24)
		h.keys("1") // the window opens on the approval waiting
		sc := h.screen()
		if !inOrder(sc, "answered:", "2 earlier (keep status --json has them)",
			"pause by user, 3 days ago", "retry (block 3)", "resume (block 4)") {
			t.Fatalf("no count of the earlier answers before the newest three:\n%s", sc)
		}
		if strings.Contains(sc, "20 days ago") || strings.Contains(sc, "19 days ago") {
			t.Errorf("more than three answers listed:\n%s", sc)
		}
	})

	t.Run("a pane too short for them all keeps the newest, and counts the rest", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": append(twoOlder(), threeAnswers()...)}
		h := newHarness(t, s, 100, 30)
		got := leftText(h.screen())
		if !inOrder(got, "answered:", "3 earlier (keep status --json has them)",
			"retry (block 3) by user, 2 h ago", "resume (block 4) by user, 5 min ago") {
			t.Fatalf("the newest answers are not those shown, after a count of those left out:\n%s\n%s", got, h.screen())
		}
	})

	t.Run("moving to another workflow shows its answers, not the first's", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.answers = map[string][]api.AnswerView{"inbox-archive": {{Answer: "retry", AnsweredBy: "user", At: mins(30), Block: 9}}}
		h := newHarness(t, s, 80, 24)
		h.keys("1") // the window opens on the approval waiting
		if sc := h.screen(); strings.Contains(sc, "answered:") {
			t.Fatalf("answers shown under a workflow that has none:\n%s", sc)
		}
		h.keys("down")
		if sc := h.screen(); !inOrder(sc, "inbox-archive", "answered:", "retry (block 9) by user, 30 min ago", "daily-digest") {
			t.Fatalf("the selected workflow's answer is not under its row:\n%s", sc)
		}
		h.keys("up")
		if sc := h.screen(); strings.Contains(sc, "block 9") {
			t.Fatalf("another workflow's answer is still shown:\n%s", sc)
		}
	})

	t.Run("an answer given meanwhile shows once the engine says something changed", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		h := newHarness(t, s, 80, 24)
		h.keys("1") // the window opens on the approval waiting
		s.mu.Lock()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": {{Answer: "retry", AnsweredBy: "user", At: mins(1), Block: 12}}}
		s.mu.Unlock()
		h.send(notifyMsg{Kind: api.NoteChanged, Workflow: "email-to-sheets"})
		if sc := h.screen(); !strings.Contains(sc, "retry (block 12) by user, 1 min ago") {
			t.Fatalf("the new answer is not read again:\n%s", sc)
		}
	})

	t.Run("who answered is escaped, as every text the engine gives", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.answers = map[string][]api.AnswerView{"email-to-sheets": {{Answer: "retry", AnsweredBy: "x\x1b]0;owned\x07", At: mins(1), Block: 2}}}
		h := newHarness(t, s, 80, 24)
		h.keys("1") // the window opens on the approval waiting
		sc := h.screen()
		if strings.Contains(sc, "\x1b]") || strings.Contains(sc, "\x07") {
			t.Fatalf("a control character reached the screen: %q", sc)
		}
		if !strings.Contains(sc, `retry (block 2) by x\x1b]0;owned\x07`) {
			t.Fatalf("the answer is not shown escaped:\n%s", sc)
		}
	})
}
