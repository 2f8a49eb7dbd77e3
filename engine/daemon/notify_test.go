package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// pingWorkflow's consumer sends one desktop notification (the name is
// replaced per workflow).
const pingWorkflow = `
export default Keep.workflow({
  name: "NAME",
  topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => {
    const id = ctx.registerInput({ source: "system", type: "schedule", id: "once", title: "once" });
    await ctx.publish("t", { messageId: "once", inputId: id, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) {
      const [e] = await ctx.peek("t");
      return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {}, ui: { title: "Ping NAME" } } : { reservations: [], data: {} };
    },
    async mutate(ctx) { await ctx.notify.send({ title: "Ping", body: "from NAME" }); },
    async next() {} }) },
});
`

// TestNotificationsReachAnAttachedScreen: on a machine without
// notify-send, a notify.send with no screen attached fails as a logic
// error and waits in Attention (a plain subscriber, a command waiting on
// keep, is no screen: nobody saw it); with a TUI attached over the socket
// the screen gets it, and it is delivered. The approval asked before it
// reaches the screen as notify_user's toast (approval.requested is its
// default topic). Not parallel: it empties PATH.
func TestNotificationsReachAnAttachedScreen(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "knt") // short: the socket sits beside the db
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("PATH", t.TempDir()) // no notify-send
	opts := SiteOpts{DBPath: filepath.Join(dir, "keep.db"), ConfigPath: filepath.Join(dir, "config.toml")}
	s := NewSite(opts)
	defer s.Close()
	g, err := s.Get(ctx, ForFrontEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop(ctx, 10*time.Second)
	c, ok := Attach(opts.DBPath)
	if !ok {
		t.Fatal("nothing answers on the socket")
	}
	defer c.Close()

	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never came", what)
			}
		}
	}
	item := func(wf string, kind api.AttentionKind) *api.AttentionItem {
		items, err := c.Attention(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Workflow == wf && it.Kind == kind {
				return &it
			}
		}
		return nil
	}
	// ping deploys a ping workflow (its producer runs at once) and
	// approves its send.
	ping := func(name string) {
		t.Helper()
		if _, err := c.Deploy(ctx, name+".js", []byte(strings.ReplaceAll(pingWorkflow, "NAME", name)), ""); err != nil {
			t.Fatal(err)
		}
		eventually(name+"'s approval", func() bool { return item(name, api.AttentionApproval) != nil })
		if err := c.Approve(ctx, item(name, api.AttentionApproval).ID, false); err != nil {
			t.Fatal(err)
		}
	}

	plain, cancelPlain := c.Subscribe()
	defer cancelPlain()
	ping("alone")
	eventually("alone's failed send in Attention", func() bool { return item("alone", api.AttentionFailedRun) != nil })
	if it := item("alone", api.AttentionFailedRun); !strings.Contains(it.Reason, "no desktop notifier") {
		t.Errorf("the failed run says %q, want that there is no desktop notifier", it.Reason)
	}
	for _, n := range drained(plain) {
		if n.Kind == api.NoteNotifySend || n.Kind == api.NoteNotifyUser {
			t.Errorf("a plain subscriber was handed %+v, meant for a screen", n)
		}
	}

	screen, cancelScreen := c.SubscribeScreen()
	defer cancelScreen()
	ping("watched")
	var toast, bell *api.Notification
	timeout := time.After(10 * time.Second)
	// the approval's toast and the send's bell come on their own paths:
	// either may be first
	for bell == nil || toast == nil {
		select {
		case n, ok := <-screen:
			if !ok {
				t.Fatal("the screen's stream ended")
			}
			switch n.Kind {
			case api.NoteNotifyUser:
				toast = &n
			case api.NoteNotifySend:
				bell = &n
			}
		case <-timeout:
			t.Fatalf("the screen got the notify.send %+v and the approval's toast %+v, want both", bell, toast)
		}
	}
	if bell.Title != "Ping" || bell.Text != "from watched" {
		t.Errorf("the screen got %+v, want the script's title and body", bell)
	}
	if toast == nil || toast.Title != "approval.requested" || !strings.Contains(toast.Text, "watched") {
		t.Errorf("the approval's notify_user on the screen = %+v", toast)
	}
	eventually("watched's send applied", func() bool {
		muts, err := c.Mutations(ctx, "watched", "")
		return err == nil && len(muts) == 1 && muts[0].Status == "applied"
	})
	if it := item("watched", api.AttentionFailedRun); it != nil {
		t.Errorf("the watched send failed: %+v", it)
	}
}

// drained is what ch holds now.
func drained(ch <-chan api.Notification) []api.Notification {
	var out []api.Notification
	for {
		select {
		case n, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, n)
		default:
			return out
		}
	}
}
