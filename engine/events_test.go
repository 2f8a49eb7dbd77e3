package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"keep/engine/bus"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

func (b *bundle) journal(topic string) []storage.JournalEvent {
	b.t.Helper()
	evs, err := b.db.Read().ListJournal(context.Background(), storage.JournalFilter{Topic: topic, Limit: 100})
	if err != nil {
		b.t.Fatal(err)
	}
	return evs
}

func (b *bundle) reminders() []storage.DeferredEvent {
	b.t.Helper()
	evs, err := b.db.Read().ListDeferred(context.Background(), storage.DeferredFilter{Topic: topicReminder, Limit: 100})
	if err != nil {
		b.t.Fatal(err)
	}
	return evs
}

func TestEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("the engine journals what a person may care about, correlated by workflow", func(t *testing.T) {
		t.Parallel()
		b := setupWithBus(t)
		s := newSink(t)
		s.Set("500", 1)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain() // an approval
		att, _ := b.e.Attention(ctx)
		if err := b.e.Approve(ctx, att[0].ID, false); err != nil {
			t.Fatal(err)
		}
		b.drain() // the 500: uncertain
		if err := b.e.Pause(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		if err := b.e.Resume(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		for _, topic := range []string{"approval.requested", "mutation.needs_reconcile", "workflow.paused", "workflow.resumed", "workflow.needs_attention"} {
			evs := b.journal(topic)
			if len(evs) == 0 {
				t.Errorf("no %s in the journal", topic)
				continue
			}
			if evs[0].CorrelationID != "1" {
				t.Errorf("%s correlation %q, want the workflow id 1", topic, evs[0].CorrelationID)
			}
			var p map[string]any
			_ = json.Unmarshal(evs[0].Payload, &p)
			if p["workflow"] != "push" {
				t.Errorf("%s payload %s does not name the workflow", topic, evs[0].Payload)
			}
		}
		b2 := setupWithBus(t)
		b2.deploy("half", `export default Keep.workflow({ name: "half", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async () => { throw new Error("boom"); } } }, consumers: {} });`)
		b2.drain()
		if len(b2.journal("run.failed")) != 1 {
			t.Error("no run.failed in the journal")
		}
	})

	t.Run("an approval schedules a reminder and answering it cancels the reminder", func(t *testing.T) {
		t.Parallel()
		b := setupWithBus(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		rs := b.reminders()
		if len(rs) != 1 || rs[0].Status != storage.DeferredScheduled || !rs[0].FireAt.Equal(b.clock.Now().Add(time.Hour)) {
			t.Fatalf("reminders = %+v, want one at +1h", rs)
		}
		att, _ := b.e.Attention(ctx)
		if err := b.e.Approve(ctx, att[0].ID, false); err != nil {
			t.Fatal(err)
		}
		if rs := b.reminders(); rs[0].Status != storage.DeferredCancelled {
			t.Fatalf("after the answer the reminder is %s, want cancelled", rs[0].Status)
		}
	})

	t.Run("a reminder of an earlier question does not start a second chain", func(t *testing.T) {
		t.Parallel()
		b := setupWithBus(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		att, _ := b.e.Attention(ctx)
		id, err := parseID("mutation", att[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		// a reminder that fired for a question asked before: not the one
		// the prompt waits on now (scheduled, not fired)
		stale := bus.Event{ID: 1 << 40, Topic: topicReminder, Payload: json.RawMessage(fmt.Sprintf(`{"mutation":%d}`, id))}
		if err := b.e.onReminder(ctx, stale); err != nil {
			t.Fatal(err)
		}
		if rs := b.reminders(); len(rs) != 1 {
			t.Fatalf("%d reminders after a stale one came, want the prompt's own alone: %+v", len(rs), rs)
		}
		for _, ev := range b.journal("approval.requested") {
			if strings.Contains(string(ev.Payload), `"reminder":true`) {
				t.Fatalf("a stale reminder announced the prompt again: %s", ev.Payload)
			}
		}
	})

	t.Run("an unanswered approval is announced again after the delay, then daily, across a restart", func(t *testing.T) {
		t.Parallel()
		b := setupWithBus(t)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		b.reopen() // the reminder is a deferred event: it survives a restart
		got := make(chan bus.Event, 4)
		b.bus.Subscribe("approval.requested", func(_ context.Context, ev bus.Event) error { got <- ev; return nil })
		if _, err := b.bus.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.bus.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer b.bus.Stop(ctx)
		// the original request, journaled before the restart, is delivered first
		first := kit.Wait(t, got, kit.Timeout)
		if json.Valid(first.Payload) && contains(first.Payload, `"reminder":true`) {
			t.Fatalf("first delivery %s is already a reminder", first.Payload)
		}
		b.clock.Advance(time.Hour)
		b.bus.Wake()
		select {
		case ev := <-got:
			if !contains(ev.Payload, `"reminder":true`) {
				t.Fatalf("delivery after an hour = %s, want a reminder", ev.Payload)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no reminder after the delay")
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			rs := b.reminders()
			if len(rs) == 2 && rs[0].Status == storage.DeferredScheduled && rs[0].FireAt.Equal(b.clock.Now().Add(24*time.Hour)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("reminders = %+v, want the next one a day later", rs)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
