package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"keep/engine/api"
)

// A call asked again (after "try again", or sent again) shows on its card
// what the person answered the last time, with the attempt it answered,
// who gave it and when, as keep mutations lists it: the person reads the
// card as the same question asked anew, not a new one.
func TestACardShowsWhatWasAnsweredBefore(t *testing.T) {
	t.Parallel()

	t.Run("an answer given before", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.attention[1].Attempt = 1
		s.attention[1].Answered = []api.AnswerView{{Answer: "try-again", AnsweredBy: "user", At: mins(8), Attempt: 1}}
		h := newHarness(t, s, 120, 40)
		h.keys("3", "down")
		sc := h.screen()
		if !inOrder(sc, "Post summary to #finance", "answered: try-again (attempt 1) by user, 8 min ago", "check by hand") {
			t.Fatalf("the card does not say what was answered before:\n%s", sc)
		}
		if strings.Count(sc, "answered:") != 1 {
			t.Fatalf("a card nothing was answered about says answered:\n%s", sc)
		}
		// the card is answered as ever, this attempt's question
		h.keys("f", "y")
		if got := h.api.actions(); len(got) != 1 || got[0] != "Resolve m3@1 not-happened" {
			t.Fatalf("calls %v, want the card's attempt answered", got)
		}
	})

	t.Run("the newest three, newest last, the rest counted", func(t *testing.T) {
		t.Parallel()
		s := newStub()
		s.attention[1].Attempt = 3
		s.attention[1].Answered = []api.AnswerView{
			{Answer: "try-again", AnsweredBy: "user", At: mins(300), Attempt: 1},
			{Answer: "not-happened", AnsweredBy: "user", At: mins(240), Attempt: 1},
			{Answer: "try-again", AnsweredBy: "user", At: mins(180), Attempt: 2},
			{Answer: "not-happened", AnsweredBy: "user", At: mins(120), Attempt: 2},
			{Answer: "try-again", AnsweredBy: "user", At: mins(8), Attempt: 3},
		}
		h := newHarness(t, s, 120, 40)
		h.keys("3", "down")
		sc := h.screen()
		if !inOrder(sc, "answered: 2 earlier (keep mutations inbox-archive has them)",
			"try-again (attempt 2) by user, 3 h ago", "not-happened (attempt 2) by user, 2 h ago",
			"try-again (attempt 3) by user, 8 min ago") {
			t.Fatalf("the card does not list the newest three answers, newest last, after the count of the rest:\n%s", sc)
		}
		if strings.Contains(sc, "(attempt 1)") {
			t.Fatalf("an answer left out is listed:\n%s", sc)
		}
	})
}

// keep attention says what was answered about a call before, as keep
// mutations does, each with the attempt it answered; a listing the newest
// few, keep attention ID them all; escaped like every other line.
func TestKeepAttentionSaysWhatWasAnsweredBefore(t *testing.T) {
	t.Parallel()
	item := newStub().attention[1]
	for i := range 7 {
		item.Answered = append(item.Answered, api.AnswerView{Answer: "try-again", AnsweredBy: "user", At: mins(60 - i), Attempt: i + 1})
	}
	item.Answered[6].AnsweredBy = "user\x1b]0;owned\a"
	write := func(w func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		if err := w(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	list := write(func(b *bytes.Buffer) error { return WriteAttention(b, []api.AttentionItem{item}, 120) })
	whole := write(func(b *bytes.Buffer) error { return WriteAttentionItems(b, []api.AttentionItem{item}, 120) })
	line := func(i int) string {
		return fmt.Sprintf("answered        try-again (attempt %d) by user at %s", i+1, cliTime(item.Answered[i].At))
	}
	if !inOrder(list, "why", "answered        2 earlier (keep attention m3 has them)", line(2), line(5), "check by hand") ||
		strings.Contains(list, "(attempt 2)") {
		t.Fatalf("keep attention does not list the newest five answers after the count of the rest:\n%s", list)
	}
	if !inOrder(whole, line(0), line(1), line(5)) || strings.Contains(whole, "earlier") {
		t.Fatalf("keep attention ID does not list every answer:\n%s", whole)
	}
	if strings.Contains(list+whole, "\x1b") || strings.Contains(list+whole, "\a") {
		t.Fatalf("an answer's text reached the terminal unescaped:\n%q", list)
	}
}

// keep mutations words an answer as keep attention does, with the
// attempt it answered: one answer, one wording (it had none).
func TestKeepMutationsNamesTheAttemptAnswered(t *testing.T) {
	t.Parallel()
	m := api.MutationView{ID: "m3", Status: "applied", RunID: "7", Connector: "http", Method: "request",
		Answers: []api.AnswerView{{Answer: "try-again", AnsweredBy: "user", At: mins(60), Attempt: 1}, {Answer: "happened", AnsweredBy: "user", At: mins(30), Attempt: 2}}}
	var b bytes.Buffer
	if err := WriteMutations(&b, []api.MutationView{m}, 120); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !inOrder(out, "try-again (attempt 1) by user at "+cliTime(mins(60)), "happened (attempt 2) by user at "+cliTime(mins(30))) {
		t.Fatalf("keep mutations does not name the attempt each answer was to:\n%s", out)
	}
}
