package engine

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// TestMutationOutcomes: how a call's failure lands in the ledger (DESIGN.md
// §6 "Outcomes"), across a restart too.
func TestMutationOutcomes(t *testing.T) {
	t.Parallel()

	t.Run("a refused connection is retried as the same row and key, never needs_reconcile; only giving up is a failure", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens here: every connection is refused
		b.deploy("push", pushWorkflow("http://"+addr, "a"))
		b.drain()
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != MutationInFlight {
			t.Fatalf("mutations = %+v, want one waiting to be sent again (not failed)", ms)
		}
		var paused bool
		for _, r := range b.runs("push") {
			paused = paused || (r.HandlerType == "consumer" && r.Status == "paused:transient")
		}
		if !paused {
			t.Fatalf("runs %+v, want the consumer's run paused:transient", b.runs("push"))
		}
		w := b.workflow("push")
		if w.Block == nil || w.Block.Kind != "transient" || w.State == api.StateNeedsAttention || !strings.Contains(w.Block.Reason, "again") {
			t.Fatalf("block %+v, state %s: want a transient back-off that says it sends again, not the user's matter", w.Block, w.State)
		}
		if next, _ := b.e.NextDue(context.Background()); next == nil || !next.After(b.clock.Now()) {
			t.Fatalf("next due %v, want a retry after a back-off", next)
		}
		if ev := b.events("push", "item")[0]; ev.ReservedBy == "" {
			t.Fatalf("event %+v, want it held for the same call", ev)
		}
		b.reopen() // a restart changes nothing about a call that was never sent
		b.drainUntilQuiet(time.Hour)
		ms = b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != MutationFailed || !strings.Contains(ms[0].Error, "gave up after") {
			t.Fatalf("mutations %+v, want the one row, failed only once the retries gave up", ms)
		}
	})

	t.Run("a 429 across a restart is the same mutation sent again with the same key: one row, applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("429", 1)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		if w := b.workflow("push"); w.Block == nil || w.Block.Kind != "transient" {
			t.Fatalf("block = %+v, want a transient back-off", w.Block)
		}
		b.reopen() // keep drain again later, or the daemon restarted
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "applied" {
			t.Fatalf("mutations = %+v, want one row, applied", ms)
		}
		if s.Posts() != 2 || s.MaxPerKey() != 1 || len(s.Keys()) != 1 {
			t.Fatalf("posts %d, keys %v: want the 429 and one success under the same key", s.Posts(), s.Keys())
		}
	})

	t.Run("a mutation left in_flight by a crash is checked as soon as the engine starts: the first check needs no back-off", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		s.Set("abort-after-apply", 1)
		b.drain()
		crashMidCall(t, b)
		b.reopen()
		b.drain() // the same instant: no back-off has passed
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "applied" || ms[0].ResolvedBy != "reconciler" {
			t.Fatalf("mutations = %+v, want it reconciled to applied at once", ms)
		}
		if ev := b.events("push", "item")[0]; ev.Status != "consumed" {
			t.Fatalf("event %s, want consumed", ev.Status)
		}
	})
}
