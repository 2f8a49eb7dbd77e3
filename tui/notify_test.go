package tui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest"
)

// pinger's consumer sends one desktop notification, its title and body
// laced with what would drive a terminal: a window title (OSC 0, ended by
// BEL) and a screen clear.
const pinger = `
export default Keep.workflow({
  name: "pinger",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "once", title: "once" });
    await ctx.publish("t", { messageId: "once", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      const [e] = await ctx.peek("t");
      return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {} } : { reservations: [], data: {} };
    },
    async mutate(ctx) { await ctx.notify.send({ title: "Build \x1b]0;pwned\x07 done", body: "all\ngreen \x1b[2J" }); },
    async next() {} }) },
});
`

// A script's notify.send reaches the open TUI the way every notification
// does (the engine's screens, printableAPI, Run's listen): a toast with
// its title and body, the one bell keep writes, and nothing of the
// script's text raw; the call counts as delivered (there is no
// notify-send on a test machine; if there is, it is delivered by both).
func TestNotifySendRingsTheBellAndToastsInTheTUI(t *testing.T) {
	t.Parallel()
	r := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){enginetest.AllowMutations}})
	h := newHarnessAt(t, r.API, r.Clock.Now, 120, 40)

	msgs := make(chan tea.Msg, 64)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { listen(h.m.sh.api, func(m tea.Msg) { msgs <- m }, stop); close(done) }()
	defer func() { close(stop); <-done }()
	time.Sleep(2 * aliveAfter) // listen has subscribed

	r.Deploy("pinger", []byte(pinger))
	r.Drain()
	deadline := time.After(5 * time.Second)
	for h.m.toast == nil || !strings.Contains(h.m.toast.text, "Build") {
		select {
		case m := <-msgs:
			h.send(m)
		case <-deadline:
			t.Fatalf("no toast came; raw %q\n%s", h.raw, h.screen())
		}
	}
	const want = `Build \x1b]0;pwned\x07 done: all green \x1b[2J`
	if h.m.toast.text != want {
		t.Errorf("toast = %q, want %q", h.m.toast.text, want)
	}
	if !slices.Equal(h.raw, []string{"\a"}) {
		t.Errorf("written raw %q, want one bell", h.raw)
	}
	s := h.screen()
	if !strings.Contains(s, `Build \x1b]0;pwned`) {
		t.Errorf("the screen does not show the toast:\n%s", s)
	}
	if found := driving(s); len(found) > 0 {
		t.Errorf("the screen has raw %q", found)
	}
	muts, err := r.API.Mutations(context.Background(), "pinger", "")
	if err != nil || len(muts) != 1 || muts[0].Status != "applied" {
		t.Fatalf("mutations = %+v, %v; want the send applied", muts, err)
	}
}

// notify_user (the bus's) toasts without a bell; a bell is a script's
// notify.send only. Of news the TUI toasts itself (an approval asked) it
// makes no second toast over the first.
func TestNotifyUserToastsWithoutTheBell(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newStub(), 120, 40)
	h.send(notifyMsg{Kind: api.NoteNotifyUser, Title: "workflow.needs_attention", Text: "notes needs you"})
	if h.m.toast == nil || h.m.toast.text != "workflow.needs_attention: notes needs you" {
		t.Fatalf("toast = %+v", h.m.toast)
	}
	if len(h.raw) != 0 {
		t.Errorf("written raw %q, want nothing", h.raw)
	}
	if s := h.screen(); !strings.Contains(s, "last: workflow.needs_attention: notes needs you") {
		t.Errorf("the status line does not say it:\n%s", s)
	}

	h.send(notifyMsg{Kind: api.NoteApproval, Workflow: "notes", Text: "notes asks"})
	h.send(notifyMsg{Kind: api.NoteNotifyUser, Title: api.NoteApproval, Text: "notes: Copy a.txt"})
	if h.m.toast == nil || h.m.toast.text != "Approval needed · notes" {
		t.Errorf("toast = %+v, want the TUI's own for the approval", h.m.toast)
	}
	if s := h.screen(); !strings.Contains(s, "last: notes asks") {
		t.Errorf("the status line does not keep the approval's news:\n%s", s)
	}
}

// The bell reaches the terminal: a real program writes BEL for a
// notify.send, and none for a notify_user's toast.
func TestTheProgramWritesTheBell(t *testing.T) {
	t.Parallel()
	tm, _ := startProgram(t, newStub(), 120, 40)
	var quiet []byte
	tm.Send(notifyMsg{Kind: api.NoteNotifyUser, Title: "Quiet", Text: "no bell"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { quiet = b; return strings.Contains(string(b), "Quiet: no bell") },
		teatest.WithDuration(5*time.Second))
	if strings.Contains(string(quiet), "\a") {
		t.Fatalf("a bell for notify_user: %q", quiet)
	}
	tm.Send(notifyMsg{Kind: api.NoteNotifySend, Title: "Ping", Text: "from pinger"})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return strings.Contains(string(b), "\a") && strings.Contains(string(b), "Ping: from pinger")
	}, teatest.WithDuration(5*time.Second))
	finalScreen(t, tm)
}
