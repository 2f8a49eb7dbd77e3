package engine

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
	"keep/engine/enginetest/kit"

	_ "modernc.org/sqlite"
)

func shortTimeout(c *config.Config) {
	c.Policy.HandlerTimeout = config.Duration{Duration: 300 * time.Millisecond}
}

func TestLedger(t *testing.T) {
	t.Parallel()

	t.Run("the in_flight row is on disk before the request arrives", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		seen := make(chan string, 1)
		s.OnPost(func(r *http.Request) {
			// a separate connection, as another process would see the file
			db, err := sql.Open("sqlite", "file:"+b.dbPath+"?mode=ro")
			if err != nil {
				seen <- err.Error()
				return
			}
			defer db.Close()
			var status string
			err = db.QueryRow(`SELECT status FROM mutations ORDER BY id DESC LIMIT 1`).Scan(&status)
			if err != nil {
				status = err.Error()
			}
			seen <- status
		})
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		if got := kit.Wait(t, seen, kit.Timeout); got != "in_flight" {
			t.Fatalf("during the request the ledger said %q, want in_flight", got)
		}
	})

	t.Run("the in_flight commit waits for the disk, and the drain leaves nothing waiting", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		unsynced := make(chan bool, 1)
		s.OnPost(func(r *http.Request) { unsynced <- b.db.Unsynced() })
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		if kit.Wait(t, unsynced, kit.Timeout) {
			t.Fatal("during the request a commit was still waiting for the disk: the in_flight row was not synced")
		}
		if b.db.Unsynced() {
			t.Fatal("after the drain a commit is still waiting for the disk")
		}
	})

	t.Run("code after the mutation call never runs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		for _, r := range b.runs("push") {
			tr, err := b.e.Trace(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tr {
				if strings.Contains(l.Result, "after the mutation call") {
					t.Fatalf("run %s logged a line written after its mutation call", r.ID)
				}
			}
		}
		if ms := b.mutationsBy("applied"); len(ms) != 1 {
			t.Fatalf("applied = %+v", ms)
		}
	})

	t.Run("an ambiguous 500 keeps the events reserved and reconciles to applied without sending again", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("500-after-apply", 1)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		// uncertain first: the event is still reserved by the paused run
		ev := b.events("push", "item")[0]
		if ev.Status != "pending" || ev.ReservedBy == "" {
			t.Fatalf("after an uncertain outcome the event is %s reserved by %q; it must stay reserved", ev.Status, ev.ReservedBy)
		}
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "applied" || ms[0].ResolvedBy != "reconciler" {
			t.Fatalf("mutations = %+v, want one applied by the reconciler", ms)
		}
		if s.Posts() != 1 {
			t.Fatalf("the sink got %d posts, want 1 (reconciled, never re-sent)", s.Posts())
		}
		if ev := b.events("push", "item")[0]; ev.Status != "consumed" {
			t.Fatalf("event %s, want consumed", ev.Status)
		}
	})

	t.Run("a 500 that did nothing reconciles to failed and a fresh run applies it once", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("500", 1)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 2 || ms[0].Status != "failed" || ms[0].ResolvedBy != "reconciler" || ms[1].Status != "applied" {
			t.Fatalf("mutations = %+v, want failed (reconciler) then applied", ms)
		}
		if s.MaxPerKey() != 1 {
			t.Fatal("a key reached the sink twice")
		}
		// the ledger keeps both rows; the input shows one outcome, its
		// attempts counted (engine/attempts.go)
		ins := b.inputs("push")
		if len(ins[0].Outputs) != 1 || ins[0].Outputs[0].Status != MutationApplied || ins[0].Outputs[0].Attempts != 2 || ins[0].Status != api.InputDone {
			t.Fatalf("input = %+v: want one output, applied after 2 attempts", ins[0])
		}
	})

	t.Run("a 504 whose check keeps failing becomes indeterminate after the attempts, and is never re-sent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("504", 1)
		s.ReconcileStatus(500)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drainUntilQuiet(24 * time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "indeterminate" || !strings.Contains(ms[0].Error, "5 checks could not confirm it") {
			t.Fatalf("mutations = %+v, want indeterminate after 5 checks", ms)
		}
		att, _ := b.e.Attention(context.Background())
		if len(att) != 1 || att[0].Kind != api.AttentionReconciliation || att[0].Check == "" {
			t.Fatalf("attention = %+v, want the reconciliation prompt with what to check", att)
		}
		if s.Posts() != 1 {
			t.Fatalf("posts = %d: an uncertain mutation is never re-sent", s.Posts())
		}
		if w := b.workflow("push"); w.State != api.StateNeedsAttention {
			t.Fatalf("state %s, want needs_attention", w.State)
		}
	})

	t.Run("a deadline during the call is uncertain, never failed", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations, shortTimeout)
		s := newSink(t)
		s.Set("hang", 1)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "needs_reconcile" {
			t.Fatalf("mutations = %+v, want needs_reconcile", ms)
		}
	})

	t.Run("a 400 is a definite failure: events released, run failed:logic, workflow needs repair", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("400", 0)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "failed" {
			t.Fatalf("mutations = %+v", ms)
		}
		ev := b.events("push", "item")[0]
		if ev.ReservedBy != "" || ev.Status != "pending" {
			t.Fatalf("event %+v, want released to pending", ev)
		}
		runs := b.runs("push")
		if runs[0].Status != "failed:logic" {
			t.Fatalf("newest run %+v, want failed:logic", runs[0])
		}
		att, _ := b.e.Attention(context.Background())
		if len(att) != 1 || att[0].Kind != api.AttentionFailedRun {
			t.Fatalf("attention = %+v, want the failed run", att)
		}
	})

	t.Run("429 is retried with back-off as the same mutation and applied once", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("429", 2)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		w := b.workflow("push")
		if w.Block == nil || w.Block.Kind != "transient" {
			t.Fatalf("block = %+v, want a transient back-off", w.Block)
		}
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "applied" {
			t.Fatalf("mutations = %+v, want the same mutation applied", ms)
		}
		if s.Posts() != 3 {
			t.Fatalf("posts = %d, want 3 (two 429s, one success)", s.Posts())
		}
	})

	t.Run("a crash while in flight is reconciled on restart, never re-executed", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		// the service applies it, then the connection dies: keep never learns
		s.Set("abort-after-apply", 1)
		b.drain()
		crashMidCall(t, b)
		b.reopen()
		ms := b.mutationsBy("")
		if len(ms) != 1 || ms[0].Status != "needs_reconcile" {
			t.Fatalf("after restart mutations = %+v, want needs_reconcile", ms)
		}
		runs := b.runs("push")
		var crashed, recovery bool
		for _, r := range runs {
			crashed = crashed || r.Status == "crashed"
			recovery = recovery || (r.Trigger == "recovery" && r.RetryOf != "")
		}
		if !crashed || !recovery {
			t.Fatalf("runs = %+v, want a crashed run and a recovery run pointing to it", runs)
		}
		b.drainUntilQuiet(time.Hour)
		if s.Posts() != 1 {
			t.Fatalf("the sink got %d posts, want 1: a restart must reconcile, not re-send", s.Posts())
		}
		if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != "applied" || ms[0].ResolvedBy != "reconciler" {
			t.Fatalf("mutations = %+v, want one, applied by the reconciler", ms)
		}
	})

	t.Run("approval: the mutation waits with its parameters; approve performs it without re-running mutate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		att, _ := b.e.Attention(context.Background())
		if len(att) != 1 || att[0].Kind != api.AttentionApproval || !strings.Contains(att[0].Preview, "/items") || att[0].Title != "Push a" {
			t.Fatalf("attention = %+v", att)
		}
		if len(att[0].Inputs) != 1 || att[0].Inputs[0] != "Item a" {
			t.Fatalf("because of = %v", att[0].Inputs)
		}
		if s.Posts() != 0 {
			t.Fatal("sent before approval")
		}
		ctx := context.Background()
		if err := b.e.Approve(ctx, att[0].ID, false); err != nil {
			t.Fatal(err)
		}
		if err := b.e.Approve(ctx, att[0].ID, false); !errors.Is(err, ErrRefused) {
			t.Fatalf("second approve: %v, want refused", err)
		}
		b.drain()
		if s.Posts() != 1 || len(b.mutationsBy("applied")) != 1 {
			t.Fatalf("posts %d, mutations %+v", s.Posts(), b.mutationsBy(""))
		}
		if in := b.inputs("push")[0]; in.Status != api.InputDone {
			t.Fatalf("input %+v", in)
		}
	})

	t.Run("reject skips: next gets skipped and the events become skipped", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		att, _ := b.e.Attention(context.Background())
		if err := b.e.Reject(context.Background(), att[0].ID); err != nil {
			t.Fatal(err)
		}
		b.drain()
		if ev := b.events("push", "item")[0]; ev.Status != "skipped" {
			t.Fatalf("event %s, want skipped", ev.Status)
		}
		st, _ := b.db.Read().HandlerState(context.Background(), 1, "push")
		if string(st) != `{"last":"skipped"}` {
			t.Fatalf("next saw %s, want {last: skipped}", st)
		}
		if s.Posts() != 0 {
			t.Fatal("a rejected mutation was sent")
		}
	})
}

func TestAnswers(t *testing.T) {
	t.Parallel()
	// each answer to an uncertain mutation, with the effect §7.1 gives it
	cases := []struct {
		answer    api.Answer
		mutation  MutationStatus // its final status
		by        string         // who settled it
		event     EventStatus
		nextSaw   string
		sentAgain bool
	}{
		{api.Happened, "applied", "user", "consumed", `{"last":"applied"}`, false},
		// the same row sent again (same key), applied by the host's call
		{api.NotHappened, "applied", "host", "consumed", `{"last":"applied"}`, true},
		{api.SkipIt, "skipped", "user", "skipped", `{"last":"skipped"}`, false},
	}
	for _, c := range cases {
		t.Run("answer "+string(c.answer), func(t *testing.T) {
			t.Parallel()
			b := setup(t, allowMutations, func(cfg *config.Config) { cfg.Policy.ReconcileAttempts = 1 })
			s := newSink(t)
			s.Set("500", 1)
			// no reconcile URL: the connector cannot check, the user is asked at once
			src := strings.Replace(pushWorkflow(s.URL, "a"), `, reconcile: { url: "`+s.URL+`" + "/items/" + p.data.id }`, "", 1)
			b.deploy("push", src)
			b.drainUntilQuiet(time.Minute)
			m := b.mutationsBy("")[0]
			if m.Status != "indeterminate" {
				t.Fatalf("mutation %s, want indeterminate", m.Status)
			}
			att, _ := b.e.Attention(context.Background())
			if len(att) != 1 || att[0].Kind != api.AttentionReconciliation || !strings.Contains(att[0].Reason, "no way to check") || att[0].Check == "" {
				t.Fatalf("attention = %+v", att)
			}
			if err := b.e.Resolve(context.Background(), m.ID, c.answer); err != nil {
				t.Fatal(err)
			}
			if err := b.e.Resolve(context.Background(), m.ID, c.answer); !errors.Is(err, ErrRefused) {
				t.Fatalf("a second answer was not refused: %v", err)
			}
			b.drainUntilQuiet(time.Minute)
			if got := b.mutationsBy(""); len(got) != 1 || got[0].Status != c.mutation || got[0].ResolvedBy != c.by {
				t.Fatalf("mutations %+v, want one %s by %s", got, c.mutation, c.by)
			}
			if ev := b.events("push", "item")[0]; ev.Status != c.event {
				t.Fatalf("event %s, want %s", ev.Status, c.event)
			}
			st, _ := b.db.Read().HandlerState(context.Background(), 1, "push")
			if string(st) != c.nextSaw {
				t.Fatalf("next saw %s, want %s", st, c.nextSaw)
			}
			if sent := s.Posts() > 1; sent != c.sentAgain {
				t.Fatalf("posts = %d", s.Posts())
			}
		})
	}
}
