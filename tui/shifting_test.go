package tui

import (
	"context"
	"strings"
	"testing"

	"keep/engine/api"
)

// twoApprovals is the real engine with two cards waiting, one per
// workflow, and the TUI on Attention with the first one selected.
func twoApprovals(t *testing.T) (*realEngine, *harness) {
	t.Helper()
	r := newRealEngine(t)
	r.Write("inbox/a.txt", "alpha")
	r.Deploy("notes", []byte(copyWorkflow))
	r.Deploy("other", []byte(strings.Replace(copyWorkflow, `name: "notes"`, `name: "other"`, 1)))
	r.Drain()
	h := r.harness(r.API, 120, 40)
	h.keys("3")
	if n := len(h.m.at.all); n != 2 {
		t.Fatalf("%d cards waiting, want 2:\n%s", n, h.screen())
	}
	return r, h
}

func status(t *testing.T, r *realEngine, wf string) string {
	t.Helper()
	ms := r.Mutations(wf)
	if len(ms) != 1 {
		t.Fatalf("%s has %d mutations, want 1", wf, len(ms))
	}
	return string(ms[0].Status)
}

// A card that moves under the cursor because the one there went (answered
// here a moment ago, or elsewhere) is one the person has not read: a key
// pressed twice, or pressed just as the list changed, must not answer it.
func TestACardThatMovesUnderTheCursorIsNotAnsweredBlind(t *testing.T) {
	t.Parallel()

	t.Run("a pressed twice approves the card it was pressed on, not the next one", func(t *testing.T) {
		t.Parallel()
		r, h := twoApprovals(t)
		first := h.m.at.Selected().Workflow
		second := map[string]string{"notes": "other", "other": "notes"}[first]
		h.keys("a")
		if got := status(t, r, first); got == "awaiting_approval" {
			t.Fatalf("the first a did not approve %s: %s", first, h.screen())
		}
		if it := h.m.at.Selected(); it == nil || it.Workflow != second {
			t.Fatalf("the selection after the answer is %+v, want %s's card", it, second)
		}
		h.keys("a")
		if got := status(t, r, second); got != "awaiting_approval" {
			t.Fatalf("the second a approved %s's card, which had just moved under the cursor (status %s)", second, got)
		}
		if s := h.screen(); !strings.Contains(s, "has just come under the cursor") {
			t.Errorf("the screen does not say why the key did nothing:\n%s", s)
		}
		// once it has been on screen a moment, it is the person's to answer
		r.Clock.Advance(settleFor)
		h.keys("a")
		if got := status(t, r, second); got == "awaiting_approval" {
			t.Fatalf("a on the card after it settled did not approve it:\n%s", h.screen())
		}
	})

	t.Run("a card answered elsewhere leaves the next one held until the person moves", func(t *testing.T) {
		t.Parallel()
		r, h := twoApprovals(t)
		notes, cancel := r.E.Subscribe()
		defer cancel()
		first := h.m.at.Selected()
		second := map[string]string{"notes": "other", "other": "notes"}[first.Workflow]
		// keep approve in another process
		if err := r.API.Approve(context.Background(), first.ID, false); err != nil {
			t.Fatal(err)
		}
		if deliver(h, notes) == 0 {
			t.Fatal("no notification for the answer given elsewhere")
		}
		if it := h.m.at.Selected(); it == nil || it.Workflow != second {
			t.Fatalf("the selection is %+v, want %s's card", it, second)
		}
		if help := h.m.helpView(); strings.Contains(help, "approve") {
			t.Errorf("help offers approve on a card that just moved under the cursor: %s", help)
		}
		h.keys("x")
		if h.m.confirm != nil {
			t.Fatalf("x asked to reject a card that just moved under the cursor:\n%s", h.screen())
		}
		h.keys("a")
		if got := status(t, r, second); got != "awaiting_approval" {
			t.Fatalf("a approved %s's card, which had just moved under the cursor (status %s)", second, got)
		}
		// the person choosing it (a movement key, even one that does not
		// move) makes it theirs
		h.keys("k")
		if help := h.m.helpView(); !strings.Contains(help, "approve") {
			t.Errorf("help after the person chose the card: %s", help)
		}
		h.keys("a")
		if got := status(t, r, second); got == "awaiting_approval" {
			t.Fatalf("a on the chosen card did not approve it:\n%s", h.screen())
		}
	})

	t.Run("a card arriving after the one answered, the list empty between, is held too", func(t *testing.T) {
		t.Parallel()
		r := newRealEngine(t)
		r.Write("inbox/b.txt", "beta")
		h := r.awaitingApproval(120, 40)
		notes, cancel := r.E.Subscribe()
		defer cancel()
		h.keys("a")
		if n := len(h.m.at.all); n != 0 {
			t.Fatalf("%d cards after the answer, want none until the next run", n)
		}
		r.Drain() // the next note's copy asks in its turn
		deliver(h, notes)
		if n := len(h.m.at.all); n != 1 {
			t.Fatalf("%d cards, want the next note's", n)
		}
		h.keys("a")
		waiting := 0
		for _, m := range r.Mutations("notes") {
			if m.Status == "awaiting_approval" {
				waiting++
			}
		}
		if waiting != 1 {
			t.Fatalf("a approved the card that had just arrived (%d waiting):\n%s", waiting, h.screen())
		}
	})

	t.Run("the first card on screen and a card arriving beside the selection are not held", func(t *testing.T) {
		t.Parallel()
		r := newRealEngine(t)
		h := r.awaitingApproval(120, 40)
		notes, cancel := r.E.Subscribe()
		defer cancel()
		sel := h.m.at.Selected()
		if sel == nil {
			t.Fatal("no card")
		}
		r.Deploy("other", []byte(strings.Replace(copyWorkflow, `name: "notes"`, `name: "other"`, 1)))
		r.Drain()
		deliver(h, notes)
		if n := len(h.m.at.all); n != 2 {
			t.Fatalf("%d cards, want 2", n)
		}
		if it := h.m.at.Selected(); it == nil || it.ID != sel.ID {
			t.Fatalf("the selection moved to %+v when a card arrived", it)
		}
		h.keys("a")
		if got := status(t, r, "notes"); got == "awaiting_approval" {
			t.Fatalf("a on the card the person was reading did nothing:\n%s", h.screen())
		}
		for _, it := range r.Attention() {
			if it.Kind == api.AttentionApproval && it.Workflow == "notes" {
				t.Fatalf("notes still waits: %+v", it)
			}
		}
	})
}
