package storage

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type journalBundle struct {
	db  *DB
	ctx context.Context
	t0  time.Time
}

func setupJournal(t *testing.T) journalBundle {
	t.Helper()
	ctx := context.Background()
	db := openTemp(t)
	return journalBundle{db: db, ctx: ctx, t0: time.UnixMilli(1_700_000_000_000).UTC()}
}

func (b journalBundle) write(t *testing.T, fn func(tx *Tx) error) {
	t.Helper()
	if err := b.db.Write(b.ctx, fn); err != nil {
		t.Fatal(err)
	}
}

func (b journalBundle) insert(t *testing.T, topic string, at time.Time) int64 {
	t.Helper()
	var id int64
	b.write(t, func(tx *Tx) (err error) {
		id, err = tx.InsertJournalEvent(b.ctx, BusMessage{Topic: topic, Source: "test",
			Payload: json.RawMessage(`{"n":1}`), CorrelationID: "wf-1"}, at)
		return err
	})
	return id
}

func (b journalBundle) schedule(t *testing.T, topic string, fireAt time.Time) int64 {
	t.Helper()
	var id int64
	b.write(t, func(tx *Tx) (err error) {
		id, err = tx.ScheduleDeferred(b.ctx, BusMessage{Topic: topic, Source: "test",
			Payload: json.RawMessage(`{"text":"later"}`), CorrelationID: "wf-2"}, fireAt, b.t0)
		return err
	})
	return id
}

func (b journalBundle) claim(t *testing.T, limit int) []JournalEvent {
	t.Helper()
	var evs []JournalEvent
	b.write(t, func(tx *Tx) (err error) {
		evs, err = tx.ClaimPending(b.ctx, limit)
		return err
	})
	return evs
}

func TestJournal(t *testing.T) {
	t.Parallel()

	t.Run("an inserted event reads back pending with every field", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.insert(t, "approval.requested", b.t0)
		ev, err := b.db.Read().JournalEvent(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := JournalEvent{ID: id, Topic: "approval.requested", Source: "test", Payload: json.RawMessage(`{"n":1}`),
			CorrelationID: "wf-1", Status: JournalPending, CreatedAt: b.t0}
		if ev.ID != want.ID || ev.Topic != want.Topic || ev.Source != want.Source || string(ev.Payload) != string(want.Payload) ||
			ev.CorrelationID != want.CorrelationID || ev.Status != want.Status || !ev.CreatedAt.Equal(want.CreatedAt) ||
			!ev.ProcessedAt.IsZero() || ev.Error != "" {
			t.Fatalf("got %+v, want %+v", ev, want)
		}
	})

	t.Run("an empty payload is stored as an empty object and invalid JSON is refused", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		var id int64
		b.write(t, func(tx *Tx) (err error) {
			id, err = tx.InsertJournalEvent(b.ctx, BusMessage{Topic: "t"}, b.t0)
			return err
		})
		ev, err := b.db.Read().JournalEvent(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Payload) != "{}" {
			t.Fatalf("payload %s, want {}", ev.Payload)
		}
		err = b.db.Write(b.ctx, func(tx *Tx) error {
			_, err := tx.InsertJournalEvent(b.ctx, BusMessage{Topic: "t", Payload: json.RawMessage(`{`)}, b.t0)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
			t.Fatalf("got %v, want a JSON error", err)
		}
	})

	t.Run("an unknown id is ErrNotFound", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		if _, err := b.db.Read().JournalEvent(b.ctx, 42); !errors.Is(err, ErrNotFound) {
			t.Fatalf("journal: got %v", err)
		}
		if _, err := b.db.Read().DeferredEvent(b.ctx, 42); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deferred: got %v", err)
		}
	})

	t.Run("the database refuses a status outside the lifecycle", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.insert(t, "t", b.t0)
		err := b.db.Write(b.ctx, func(tx *Tx) error {
			_, err := tx.exec(b.ctx, `UPDATE event_journal SET status = 'lost' WHERE id = ?`, id)
			return err
		})
		if err == nil {
			t.Fatal("want a CHECK failure")
		}
	})

	t.Run("claiming takes the oldest pending events up to the limit and marks them processing", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		var ids []int64
		for i := range 5 {
			ids = append(ids, b.insert(t, "t", b.t0.Add(time.Duration(i)*time.Second)))
		}
		got := b.claim(t, 3)
		if len(got) != 3 {
			t.Fatalf("claimed %d, want 3", len(got))
		}
		for i, ev := range got {
			if ev.ID != ids[i] || ev.Status != JournalProcessing {
				t.Fatalf("claim %d: got id %d status %s, want id %d processing", i, ev.ID, ev.Status, ids[i])
			}
		}
		rest := b.claim(t, 3)
		if len(rest) != 2 || rest[0].ID != ids[3] || rest[1].ID != ids[4] {
			t.Fatalf("second claim: %+v", rest)
		}
		if again := b.claim(t, 3); len(again) != 0 {
			t.Fatalf("third claim: %+v", again)
		}
	})

	t.Run("done and failed end a processing event with its time and error", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		ok, bad := b.insert(t, "t", b.t0), b.insert(t, "t", b.t0)
		b.claim(t, 10)
		later := b.t0.Add(time.Minute)
		b.write(t, func(tx *Tx) error {
			if err := tx.MarkJournalDone(b.ctx, ok, later); err != nil {
				return err
			}
			return tx.MarkJournalFailed(b.ctx, bad, "boom", later)
		})
		r := b.db.Read()
		e1, _ := r.JournalEvent(b.ctx, ok)
		e2, _ := r.JournalEvent(b.ctx, bad)
		if e1.Status != JournalDone || !e1.ProcessedAt.Equal(later) || e1.Error != "" {
			t.Fatalf("done: %+v", e1)
		}
		if e2.Status != JournalFailed || !e2.ProcessedAt.Equal(later) || e2.Error != "boom" {
			t.Fatalf("failed: %+v", e2)
		}
	})

	t.Run("only a processing event can be marked done", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.insert(t, "t", b.t0)
		err := b.db.Write(b.ctx, func(tx *Tx) error { return tx.MarkJournalDone(b.ctx, id, b.t0) })
		if err == nil || !strings.Contains(err.Error(), "not processing") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("reset puts processing events back to pending and counts them", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		b.insert(t, "t", b.t0)
		b.insert(t, "t", b.t0)
		done := b.insert(t, "t", b.t0)
		b.claim(t, 10)
		b.write(t, func(tx *Tx) error { return tx.MarkJournalDone(b.ctx, done, b.t0) })
		var n int
		b.write(t, func(tx *Tx) (err error) {
			n, err = tx.ResetProcessing(b.ctx)
			return err
		})
		if n != 2 {
			t.Fatalf("reset %d, want 2", n)
		}
		if got := b.claim(t, 10); len(got) != 2 {
			t.Fatalf("claimable after reset: %d, want 2", len(got))
		}
	})

	t.Run("release puts one claimed event back to pending", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.insert(t, "t", b.t0)
		b.claim(t, 1)
		b.write(t, func(tx *Tx) error { return tx.ReleaseJournalEvent(b.ctx, id) })
		if ev, _ := b.db.Read().JournalEvent(b.ctx, id); ev.Status != JournalPending {
			t.Fatalf("status %s, want pending", ev.Status)
		}
	})

	t.Run("listing filters by topic, status and correlation, newest first, paged", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		a1 := b.insert(t, "a", b.t0)
		b.insert(t, "b", b.t0)
		a2 := b.insert(t, "a", b.t0)
		var other int64
		b.write(t, func(tx *Tx) (err error) {
			other, err = tx.InsertJournalEvent(b.ctx, BusMessage{Topic: "a", CorrelationID: "wf-9"}, b.t0)
			return err
		})
		r := b.db.Read()
		got, err := r.ListJournal(b.ctx, JournalFilter{Topic: "a", CorrelationID: "wf-1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != a2 || got[1].ID != a1 {
			t.Fatalf("by topic and correlation: %+v", got)
		}
		page, _ := r.ListJournal(b.ctx, JournalFilter{Topic: "a", BeforeID: other, Limit: 1})
		if len(page) != 1 || page[0].ID != a2 {
			t.Fatalf("page: %+v", page)
		}
		b.claim(t, 1)
		processing, _ := r.ListJournal(b.ctx, JournalFilter{Status: JournalProcessing})
		if len(processing) != 1 || processing[0].ID != a1 {
			t.Fatalf("by status: %+v", processing)
		}
		all, _ := r.ListJournal(b.ctx, JournalFilter{})
		if len(all) != 4 {
			t.Fatalf("all: %d", len(all))
		}
	})
}

func TestDeferred(t *testing.T) {
	t.Parallel()

	t.Run("a scheduled event is due only once its fire time has come", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.schedule(t, "reminder.due", b.t0.Add(time.Hour))
		r := b.db.Read()
		if due, _ := r.DueDeferred(b.ctx, b.t0.Add(time.Hour-time.Millisecond), 10); len(due) != 0 {
			t.Fatalf("due early: %+v", due)
		}
		due, err := r.DueDeferred(b.ctx, b.t0.Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != 1 || due[0].ID != id || due[0].Status != DeferredScheduled || !due[0].FireAt.Equal(b.t0.Add(time.Hour)) ||
			due[0].CorrelationID != "wf-2" || string(due[0].Payload) != `{"text":"later"}` {
			t.Fatalf("due: %+v", due)
		}
	})

	t.Run("due events come earliest first and bounded by the limit", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		late := b.schedule(t, "t", b.t0.Add(3*time.Second))
		early := b.schedule(t, "t", b.t0.Add(1*time.Second))
		b.schedule(t, "t", b.t0.Add(2*time.Second))
		due, _ := b.db.Read().DueDeferred(b.ctx, b.t0.Add(time.Hour), 2)
		if len(due) != 2 || due[0].ID != early || due[1].ID == late {
			t.Fatalf("due: %+v", due)
		}
	})

	t.Run("firing journals the event as pending and links it, in one transaction", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.schedule(t, "reminder.due", b.t0.Add(time.Second))
		at := b.t0.Add(2 * time.Second)
		var ids []int64
		b.write(t, func(tx *Tx) (err error) {
			ids, err = tx.PromoteDueDeferred(b.ctx, at, 10)
			return err
		})
		if len(ids) != 1 {
			t.Fatalf("promoted %v", ids)
		}
		r := b.db.Read()
		d, _ := r.DeferredEvent(b.ctx, id)
		if d.Status != DeferredFired || !d.FiredAt.Equal(at) || d.EventID != ids[0] {
			t.Fatalf("deferred: %+v", d)
		}
		ev, _ := r.JournalEvent(b.ctx, ids[0])
		if ev.Status != JournalPending || ev.Topic != "reminder.due" || ev.Source != "test" || ev.CorrelationID != "wf-2" ||
			string(ev.Payload) != `{"text":"later"}` || !ev.CreatedAt.Equal(at) {
			t.Fatalf("journal: %+v", ev)
		}
		if due, _ := r.DueDeferred(b.ctx, at, 10); len(due) != 0 {
			t.Fatalf("still due after firing: %+v", due)
		}
	})

	t.Run("a failed promotion leaves nothing behind", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.schedule(t, "t", b.t0)
		boom := errors.New("boom")
		err := b.db.Write(b.ctx, func(tx *Tx) error {
			if _, err := tx.FireDeferred(b.ctx, id, b.t0); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
		r := b.db.Read()
		if d, _ := r.DeferredEvent(b.ctx, id); d.Status != DeferredScheduled {
			t.Fatalf("deferred: %+v", d)
		}
		if evs, _ := r.ListJournal(b.ctx, JournalFilter{}); len(evs) != 0 {
			t.Fatalf("journal: %+v", evs)
		}
	})

	t.Run("cancel works only while scheduled and says whether it did", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.schedule(t, "t", b.t0.Add(time.Hour))
		cancel := func(id int64) (ok bool, err error) {
			err = b.db.Write(b.ctx, func(tx *Tx) (err error) {
				ok, err = tx.CancelDeferred(b.ctx, id)
				return err
			})
			return ok, err
		}
		if ok, err := cancel(id); !ok || err != nil {
			t.Fatalf("first cancel: %v %v", ok, err)
		}
		if ok, err := cancel(id); ok || err != nil {
			t.Fatalf("second cancel: %v %v", ok, err)
		}
		if due, _ := b.db.Read().DueDeferred(b.ctx, b.t0.Add(2*time.Hour), 10); len(due) != 0 {
			t.Fatalf("a cancelled event is due: %+v", due)
		}
		fired := b.schedule(t, "t", b.t0)
		b.write(t, func(tx *Tx) error { _, err := tx.PromoteDueDeferred(b.ctx, b.t0, 10); return err })
		if ok, err := cancel(fired); ok || err != nil {
			t.Fatalf("cancel after firing: %v %v", ok, err)
		}
		if _, err := cancel(999); !errors.Is(err, ErrNotFound) {
			t.Fatalf("cancel of an unknown id: %v", err)
		}
	})

	t.Run("a cancelled event cannot fire", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		id := b.schedule(t, "t", b.t0)
		b.write(t, func(tx *Tx) error { _, err := tx.CancelDeferred(b.ctx, id); return err })
		err := b.db.Write(b.ctx, func(tx *Tx) error { _, err := tx.FireDeferred(b.ctx, id, b.t0); return err })
		if !errors.Is(err, ErrNotScheduled) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("the next fire time is the earliest scheduled one", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		r := b.db.Read()
		if _, ok, err := r.NextFireAt(b.ctx); ok || err != nil {
			t.Fatalf("empty: %v %v", ok, err)
		}
		first := b.schedule(t, "t", b.t0.Add(time.Minute))
		b.schedule(t, "t", b.t0.Add(time.Hour))
		if at, ok, _ := r.NextFireAt(b.ctx); !ok || !at.Equal(b.t0.Add(time.Minute)) {
			t.Fatalf("next: %v %v", at, ok)
		}
		b.write(t, func(tx *Tx) error { _, err := tx.CancelDeferred(b.ctx, first); return err })
		if at, ok, _ := r.NextFireAt(b.ctx); !ok || !at.Equal(b.t0.Add(time.Hour)) {
			t.Fatalf("next after cancel: %v %v", at, ok)
		}
	})

	t.Run("listing filters by status and correlation", func(t *testing.T) {
		t.Parallel()
		b := setupJournal(t)
		keep := b.schedule(t, "t", b.t0.Add(time.Hour))
		gone := b.schedule(t, "t", b.t0.Add(time.Hour))
		b.write(t, func(tx *Tx) error { _, err := tx.CancelDeferred(b.ctx, gone); return err })
		r := b.db.Read()
		got, err := r.ListDeferred(b.ctx, DeferredFilter{Status: DeferredScheduled, CorrelationID: "wf-2"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != keep {
			t.Fatalf("scheduled: %+v", got)
		}
		if got, _ := r.ListDeferred(b.ctx, DeferredFilter{Topic: "t"}); len(got) != 2 || got[0].ID != gone {
			t.Fatalf("by topic: %+v", got)
		}
	})
}

// The dispatch loop's queries must cost what the page costs, however much
// history the tables hold (DESIGN.md §2): SQLite must answer them from the
// partial indexes, not by scanning.
func TestJournalQueriesUsePartialIndexes(t *testing.T) {
	t.Parallel()
	b := setupJournal(t)
	cases := []struct {
		name, query, index string
		args               []any
	}{
		{"claiming pending events", claimPendingSQL, "event_journal_pending", []any{3}},
		{"fetching due deferred events", dueDeferredSQL, "deferred_events_due", []any{int64(0), 3}},
		{"finding the next fire time", nextFireAtSQL, "deferred_events_due", nil},
	}
	for _, c := range cases {
		t.Run(c.name+" uses "+c.index, func(t *testing.T) {
			t.Parallel()
			err := b.db.Write(b.ctx, func(tx *Tx) error {
				plan, err := queryPlan(b.ctx, tx.q, c.query, c.args...)
				if err != nil {
					return err
				}
				text := strings.Join(plan, "\n")
				if !strings.Contains(text, c.index) {
					t.Errorf("plan does not use %s:\n%s", c.index, text)
				}
				for _, line := range plan {
					// a bare SCAN of a table reads the whole history
					if line == "SCAN event_journal" || line == "SCAN deferred_events" {
						t.Errorf("plan scans a table:\n%s", text)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
