package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
)

// reconcileItems is the uncertain prompts Attention shows for push.
func (b *bundle) reconcileItems() []api.AttentionItem {
	b.t.Helper()
	return b.attentionOf(api.AttentionReconciliation)
}

// TestUncertainHasAnOwner drives a call whose outcome is unknown through
// checks that cannot tell, the person's answers and restarts: at every
// point a timer of ours or a prompt owns it, an answer given once stays
// applied, and nothing goes out twice under two keys.
func TestUncertainHasAnOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, code := range []int{500, 502} {
		t.Run("a check that errs forever ends in a prompt that survives a restart and is answered once", func(t *testing.T) {
			t.Parallel()
			b := setupWithBus(t, allowMutations)
			s := newSink(t)
			s.Set("abort-after-apply", 1)
			s.ReconcileStatus(code)
			b.deploy("push", pushWorkflow(s.URL, "a"))
			b.drainUntilQuiet(time.Hour)
			ms := b.mutationsBy("")
			if len(ms) != 1 || ms[0].Status != MutationIndeterminate {
				t.Fatalf("mutations %+v, want one indeterminate", ms)
			}
			if items := b.reconcileItems(); len(items) != 1 || items[0].ID != ms[0].ID {
				t.Fatalf("attention %+v, want the one prompt", items)
			}
			if len(b.reminders()) != 1 {
				t.Fatalf("reminders %+v, want one", b.reminders())
			}
			b.reopen()
			b.drainUntilQuiet(time.Hour)
			if items := b.reconcileItems(); len(items) != 1 || items[0].ID != ms[0].ID {
				t.Fatalf("after a restart attention %+v, want the one prompt", items)
			}
			if err := b.e.Resolve(ctx, ms[0].ID, api.Happened); err != nil {
				t.Fatal(err)
			}
			if err := b.e.Resolve(ctx, ms[0].ID, api.Happened); err == nil {
				t.Fatal("a second answer was accepted")
			}
			b.drainUntilQuiet(time.Hour)
			b.reopen()
			b.drainUntilQuiet(time.Hour)
			if items := b.reconcileItems(); len(items) != 0 {
				t.Fatalf("after the answer and a restart attention %+v, want none", items)
			}
			if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != MutationApplied {
				t.Fatalf("mutations %+v, want the one applied", ms)
			}
			if s.Posts() != 1 || len(s.Keys()) != 1 {
				t.Fatalf("posts %d keys %v, want one", s.Posts(), s.Keys())
			}
			if ev := b.events("push", "item")[0]; ev.Status != "consumed" {
				t.Fatalf("event %+v, want consumed", ev)
			}
			for _, r := range b.reminders() {
				if r.Status != "cancelled" {
					t.Errorf("a reminder still stands: %+v", r)
				}
			}
		})
	}

	t.Run("a check that hangs is bounded and ends in a prompt", func(t *testing.T) {
		t.Parallel()
		var hangs atomic.Int32
		release := make(chan struct{})
		var posts atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				hangs.Add(1)
				select {
				case <-r.Context().Done():
				case <-release:
				}
				return
			}
			posts.Add(1)
			panic(http.ErrAbortHandler)
		}))
		t.Cleanup(func() { close(release); srv.Close() })
		b := setup(t, allowMutations, func(c *config.Config) {
			c.Policy.HandlerTimeout = config.Duration{Duration: 100 * time.Millisecond}
		})
		b.deploy("push", pushWorkflow(srv.URL, "a"))
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != MutationIndeterminate {
			t.Fatalf("mutations %+v, want one indeterminate", ms)
		}
		if items := b.reconcileItems(); len(items) != 1 {
			t.Fatalf("attention %+v", items)
		}
		if posts.Load() != 1 {
			t.Fatalf("posts %d", posts.Load())
		}
	})

	for _, answer := range []api.Answer{api.TryAgain, api.NotHappened, api.SkipIt, api.Happened} {
		t.Run("answer "+string(answer)+" given before a restart stays given", func(t *testing.T) {
			t.Parallel()
			b := setupWithBus(t, allowMutations)
			s := newSink(t)
			s.Set("abort-after-apply", 1)
			s.ReconcileStatus(500)
			b.deploy("push", pushWorkflow(s.URL, "a"))
			b.drainUntilQuiet(time.Hour)
			ms := b.mutationsBy("")
			if len(ms) != 1 || ms[0].Status != MutationIndeterminate {
				t.Fatalf("mutations %+v", ms)
			}
			if err := b.e.Pause(ctx, "push"); err != nil {
				t.Fatal(err)
			}
			if err := b.e.Resolve(ctx, ms[0].ID, answer); err != nil {
				t.Fatal(err)
			}
			b.reopen()
			if err := b.e.Resume(ctx, "push"); err != nil {
				t.Fatal(err)
			}
			s.ReconcileStatus(0)
			b.drainUntilQuiet(time.Hour)
			got := b.mutationsBy("")
			want := MutationApplied
			if answer == api.SkipIt {
				want = MutationSkipped
			}
			if len(got) != 1 || got[0].Status != want {
				t.Fatalf("mutations %+v, want one %s", got, want)
			}
			if len(s.Keys()) != 1 {
				t.Fatalf("keys %v", s.Keys())
			}
			if items := b.reconcileItems(); len(items) != 0 {
				t.Fatalf("attention %+v", items)
			}
			for _, r := range b.reminders() {
				if r.Status != "cancelled" {
					t.Errorf("a reminder still stands: %+v", r)
				}
			}
		})
	}
}

// A paused workflow's uncertain call is checked by nothing until it is
// resumed: its prompt said "keep is checking whether it happened", so a
// person who paused it waited on a check that was not coming.
func TestPausedCheckSaysWhoOwnsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	s := newSink(t)
	s.Set("abort-after-apply", 1)
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain()
	if err := b.e.Pause(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Hour)
	items := b.reconcileItems()
	if len(items) != 1 || !strings.Contains(items[0].Reason, "once push is resumed") {
		t.Fatalf("attention %+v, want the one prompt saying the check waits for the resume", items)
	}
	if err := b.e.Resume(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Hour)
	if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != MutationApplied || s.Posts() != 1 {
		t.Fatalf("mutations %+v, posts %d; want the one call found applied once resumed", ms, s.Posts())
	}
}
