package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"keep/engine/api"
)

// An answer acts only on a card the person can read: no key approves,
// rejects, answers, skips or retries what is hidden behind the dry run,
// scrolled out of the pane, or in a pane that is not drawn.
func TestActionKeysActOnlyOnWhatIsOnScreen(t *testing.T) {
	t.Parallel()

	t.Run("after d the dry run covers Attention and a approves nothing; 3 shows the card again", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("1", "d")
		if !strings.Contains(h.screen(), "Dry run") || strings.Contains(h.screen(), "APPROVAL") {
			t.Fatalf("the dry run does not cover Attention:\n%s", h.screen())
		}
		for _, k := range []string{"a", "x", "t", "h", "s"} {
			h.keys(k)
			if h.m.confirm != nil {
				h.keys("y")
			}
		}
		if got := answers(h.api); len(got) != 0 {
			t.Fatalf("keys acted on a card under the dry run: %v", got)
		}
		h.keys("3")
		if !strings.Contains(h.screen(), "APPROVAL   email-to-sheets · Add row for alice@example.com") {
			t.Fatalf("3 does not show the card:\n%s", h.screen())
		}
		h.keys("a")
		if got := answers(h.api); len(got) != 1 || got[0] != "Approve m7 always=false" {
			t.Fatalf("calls = %v, want the card on screen approved", got)
		}
	})

	t.Run("in tabs, with the dry run open, no answer reaches Attention", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 80, 24)
		h.keys("1", "d", "a", "x", "t")
		if got := answers(h.api); len(got) != 0 || h.m.confirm != nil {
			t.Fatalf("keys acted on Attention from behind the dry run: %v", got)
		}
	})

	t.Run("a card scrolled out of the pane by a resize is not answered until it is back", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		apiHost.attention = nil
		for i := range 4 {
			apiHost.attention = append(apiHost.attention, api.AttentionItem{Kind: api.AttentionApproval, Workflow: "notes",
				ID: fmt.Sprintf("m%d", i), Title: fmt.Sprintf("Card %d", i), Connector: "files", Method: "append",
				Target: fmt.Sprintf("notes/%d.txt", i), Preview: fmt.Sprintf("append to notes/%d.txt (3 bytes)", i),
				Params: json.RawMessage(`{}`), Reason: "asks", Answers: []string{"approve", "reject"}})
		}
		h := newHarness(t, apiHost, 80, 24)
		h.keys("3", "G")
		if !strings.Contains(h.screen(), "Card 3") {
			t.Fatalf("the last card is not on screen:\n%s", h.screen())
		}
		h.send(tea.WindowSizeMsg{Width: 80, Height: 14})
		if strings.Contains(h.screen(), "notes/3.txt") {
			t.Fatalf("the resize left the card's call on screen:\n%s", h.screen())
		}
		h.keys("a", "x")
		if got := h.api.actions(); len(got) != 0 || h.m.confirm != nil {
			t.Fatalf("keys acted on a card off screen: %v", got)
		}
		if strings.Contains(ansi.Strip(h.m.helpView()), "a approve") {
			t.Errorf("help offers approve for a card off screen: %s", h.m.helpView())
		}
		h.keys("k", "j")
		if !strings.Contains(h.screen(), "notes/3.txt") {
			t.Fatalf("moving did not bring the card back:\n%s", h.screen())
		}
		h.keys("a")
		if got := h.api.actions(); len(got) != 1 || got[0] != "Approve m3 always=false" {
			t.Fatalf("calls = %v, want the card back on screen approved", got)
		}
	})

	t.Run("a card whose call the toast covers waits until the toast is gone", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		apiHost.attention = nil
		for i := range 4 {
			apiHost.attention = append(apiHost.attention, api.AttentionItem{Kind: api.AttentionApproval, Workflow: "notes",
				ID: fmt.Sprintf("m%d", i), Title: fmt.Sprintf("Card %d", i), Connector: "files", Method: "append",
				Target: fmt.Sprintf("notes/%d.txt", i), Preview: fmt.Sprintf("append to notes/%d.txt (3 bytes): a line to go under", i),
				Params: json.RawMessage(`{}`), Reason: "asks", Answers: []string{"approve", "reject"}})
		}
		// 16 rows inside the pane: four cards of four lines fill it, the
		// last card's call on its last rows, where the toast is drawn
		h := newHarness(t, apiHost, 80, 22)
		h.keys("3", "G")
		h.send(notifyMsg(api.Notification{Kind: api.NoteApproval, Workflow: "notes", Text: "notes: approve Card 3?"}))
		if h.m.toast == nil || strings.Contains(h.screen(), "notes/3.txt (3 bytes): a line to go under") {
			t.Fatalf("the toast does not cover the card's call (toast %v):\n%s", h.m.toast != nil, h.screen())
		}
		h.keys("a")
		if got := answers(h.api); len(got) != 0 {
			t.Fatalf("a approved a card under the toast: %v", got)
		}
		h.send(toastDoneMsg{id: h.m.toast.id})
		if !strings.Contains(h.screen(), "notes/3.txt (3 bytes): a line to go under") {
			t.Fatalf("the call is not on screen once the toast is gone:\n%s", h.screen())
		}
		h.keys("a")
		if got := answers(h.api); len(got) != 1 || got[0] != "Approve m3 always=false" {
			t.Fatalf("calls = %v, want the card approved once on screen", got)
		}
	})
}

// answers are the calls that act, without the dry run's own.
func answers(api *stubAPI) []string {
	var out []string
	for _, c := range api.actions() {
		if !strings.HasPrefix(c, "dry-run ") {
			out = append(out, c)
		}
	}
	return out
}
