package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
)

// TestRetryLeavesTheCallItsOwner: the person's retry (or resume) lifts a
// block; what the block stood over — a call waiting to be sent again, a
// check, a question — is not over with it (DESIGN.md §7.3: every
// uncertain state has an owner at all times). The run that carries it
// stays open and takes the block back; what waited on a timer of ours is
// due at once.
func TestRetryLeavesTheCallItsOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	for _, answer := range []string{"retry", "resume"} {
		t.Run(answer+" during a 429 back-off sends the same call at once, once", func(t *testing.T) {
			t.Parallel()
			b := setup(t, allowMutations)
			s := newSink(t)
			s.Set("429", 1)
			b.deploy("push", pushWorkflow(s.URL, "a"))
			b.drain()
			if w := b.workflow("push"); w.Block == nil || w.Block.Kind != "transient" {
				t.Fatalf("block = %+v, want a transient back-off", w.Block)
			}
			var err error
			if answer == "retry" {
				err = b.e.Retry(ctx, "push")
			} else {
				if err := b.e.Pause(ctx, "push"); err != nil {
					t.Fatal(err)
				}
				err = b.e.Resume(ctx, "push")
			}
			if err != nil {
				t.Fatal(err)
			}
			b.drain() // no clock moved: the person asked for now
			if s.Posts() != 2 {
				t.Fatalf("posts %d, want the call sent again at once", s.Posts())
			}
			b.drainUntilQuiet(time.Hour)
			ms := b.mutationsBy("")
			if len(ms) != 1 || ms[0].Status != "applied" || s.Posts() != 2 {
				t.Fatalf("mutations = %+v, posts %d; want the same mutation applied after 2 posts", ms, s.Posts())
			}
			if ev := b.events("push", "item")[0]; ev.Status != "consumed" {
				t.Fatalf("event %+v, want consumed", ev)
			}
		})
	}

	t.Run("retry of an internal block over a check leaves the check its owner", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("500-after-apply", 1)
		src := pushWorkflow(s.URL, "a")
		b.deploy("push", src)
		b.drain() // the call applied, keep saw a 500: a check is due after a back-off
		if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != "needs_reconcile" {
			t.Fatalf("mutations = %+v, want needs_reconcile", ms)
		}
		b.breakScripts()
		b.clock.Advance(time.Hour)
		_ = b.e.Drain(ctx) // the step fails on the script: internal
		if w := b.workflowRow("push"); w.BlockKind != BlockInternal {
			t.Fatalf("block = %q, want internal", w.BlockKind)
		}
		b.deploy("push", src+"\n") // the person fixes it
		if err := b.e.Retry(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drainUntilQuiet(time.Hour)
		// the check found it applied; next is the broken version's, which
		// fails the run past its mutation (internal): retried, it runs next
		// under the version deployed since
		if w := b.workflowRow("push"); w.BlockKind != BlockInternal {
			t.Fatalf("block = %q, want internal: next's version does not load", w.BlockKind)
		}
		if err := b.e.Retry(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "applied" || s.Posts() != 1 {
			t.Fatalf("mutations = %+v, posts %d; want the one call checked and found applied", ms, s.Posts())
		}
		if ev := b.events("push", "item")[0]; ev.Status != "consumed" {
			t.Fatalf("event %+v, want consumed", ev)
		}
	})

	t.Run("retry of an internal block over a resend the person asked for sends it", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations, func(cfg *config.Config) { cfg.Policy.ReconcileAttempts = 1 })
		s := newSink(t)
		s.Set("500", 1)
		// no reconcile URL: the connector cannot check, the person is asked
		src := strings.Replace(pushWorkflow(s.URL, "a"), `, reconcile: { url: "`+s.URL+`" + "/items/" + p.data.id }`, "", 1)
		b.deploy("push", src)
		b.drainUntilQuiet(time.Minute)
		m := b.mutationsBy("")[0]
		if m.Status != "indeterminate" {
			t.Fatalf("mutation %s, want indeterminate", m.Status)
		}
		if err := b.e.Resolve(ctx, m.ID, api.NotHappened); err != nil {
			t.Fatal(err)
		}
		b.breakScripts()
		if err := b.e.Drain(ctx); err == nil {
			t.Fatal("drain: want the step to fail on the script")
		}
		if w := b.workflowRow("push"); w.BlockKind != BlockInternal {
			t.Fatalf("block %q, want internal", w.BlockKind)
		}
		b.deploy("push", src+"\n")
		if err := b.e.Retry(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		_ = b.e.Drain(ctx)
		if s.Posts() != 2 {
			t.Fatalf("posts %d, mutations %+v: want the call the person said did not happen sent again", s.Posts(), b.mutationsBy(""))
		}
		if err := b.e.Retry(ctx, "push"); err != nil && !errors.Is(err, ErrRefused) {
			t.Fatal(err)
		}
		b.drainUntilQuiet(time.Hour)
		if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != "applied" || s.Posts() != 2 {
			t.Fatalf("mutations %+v, posts %d: want it applied by the one resend", ms, s.Posts())
		}
		if ev := b.events("push", "item")[0]; ev.Status != "consumed" {
			t.Fatalf("event %s, want consumed", ev.Status)
		}
	})
}
