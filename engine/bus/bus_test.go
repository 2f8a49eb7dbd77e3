package bus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"keep/engine/bus"
	"keep/engine/enginetest/kit"
	"keep/storage"
)

// syncBuffer collects log output written from the loop's goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type bundle struct {
	ctx   context.Context
	db    *storage.DB
	bus   *bus.Bus
	clock *kit.Clock
	logs  *syncBuffer
}

// setup opens a real database in a temporary directory and a bus on it
// with a fake clock (unless opts brings its own). The bus is not started.
func setup(tb testing.TB, opts bus.Opts) bundle {
	tb.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, storage.Opts{Path: filepath.Join(tb.TempDir(), "keep.db"), Logger: discard()})
	if err != nil {
		tb.Fatal(err)
	}
	clock := kit.NewClock(time.UnixMilli(1_700_000_000_000).UTC())
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	b := bus.New(db, opts)
	tb.Cleanup(func() {
		if err := b.Stop(ctx); err != nil {
			tb.Error(err)
		}
		db.Close()
	})
	return bundle{ctx: ctx, db: db, bus: b, clock: clock, logs: logs}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func (b bundle) start(tb testing.TB) {
	tb.Helper()
	if err := b.bus.Start(b.ctx); err != nil {
		tb.Fatal(err)
	}
}

func (b bundle) emit(tb testing.TB, topic string, payload any) int64 {
	tb.Helper()
	id, err := b.bus.Emit(b.ctx, topic, payload, "")
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// waitStatus waits, in small steps, for the loop to bring a journal event
// to status.
func (b bundle) waitStatus(tb testing.TB, id int64, status string) storage.JournalEvent {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ev, err := b.db.Read().JournalEvent(b.ctx, id)
		if err != nil {
			tb.Fatal(err)
		}
		if ev.Status == status {
			return ev
		}
		if time.Now().After(deadline) {
			tb.Fatalf("event %d is %s, want %s", id, ev.Status, status)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// settle waits until the loop has made a full pass that started after
// this call: it emits a marker event and waits for it to be done. Passes
// promote first and deliver oldest first, so anything that was due or
// pending before is handled by then.
func (b bundle) settle(tb testing.TB) {
	tb.Helper()
	b.waitStatus(tb, b.emit(tb, "test.settle", nil), storage.JournalDone)
}

func (b bundle) journal(tb testing.TB, f storage.JournalFilter) []storage.JournalEvent {
	tb.Helper()
	evs, err := b.db.Read().ListJournal(b.ctx, f)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// recorder is a handler that remembers what it saw, in order, and tells.
type recorder struct {
	mu   sync.Mutex
	seen []string
	got  chan bus.Event
}

func newRecorder() *recorder { return &recorder{got: make(chan bus.Event, 100)} }

func (r *recorder) handler(name string, err error) bus.Handler {
	return func(_ context.Context, ev bus.Event) error {
		r.mu.Lock()
		r.seen = append(r.seen, fmt.Sprintf("%s:%d", name, ev.ID))
		r.mu.Unlock()
		r.got <- ev
		return err
	}
}

func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func receive(tb testing.TB, ch <-chan bus.Event) bus.Event {
	tb.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		tb.Fatal("no event delivered")
		return bus.Event{}
	}
}

func TestDelivery(t *testing.T) {
	t.Parallel()

	t.Run("an emitted event reaches every subscriber in registration order and ends done", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("approval.requested", r.handler("first", nil))
		b.bus.Subscribe("approval.requested", r.handler("second", nil))
		b.start(t)
		id, err := b.bus.Emit(b.ctx, "approval.requested", map[string]any{"mutation": 7}, "wf-3")
		if err != nil {
			t.Fatal(err)
		}
		ev := receive(t, r.got)
		receive(t, r.got)
		done := b.waitStatus(t, id, storage.JournalDone)
		if want := []string{fmt.Sprintf("first:%d", id), fmt.Sprintf("second:%d", id)}; !slices.Equal(r.calls(), want) {
			t.Fatalf("calls %v, want %v", r.calls(), want)
		}
		if ev.ID != id || ev.Topic != "approval.requested" || ev.CorrelationID != "wf-3" || ev.Status != storage.JournalProcessing ||
			string(ev.Payload) != `{"mutation":7}` || !ev.CreatedAt.Equal(b.clock.Now()) {
			t.Fatalf("event %+v", ev)
		}
		if done.CorrelationID != "wf-3" || done.Error != "" || !done.ProcessedAt.Equal(b.clock.Now()) {
			t.Fatalf("journal %+v", done)
		}
	})

	t.Run("a failing handler marks the event failed with its error and the others still run", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("run.failed", r.handler("first", errors.New("smtp refused")))
		b.bus.Subscribe("run.failed", r.handler("second", nil))
		b.start(t)
		id := b.emit(t, "run.failed", nil)
		ev := b.waitStatus(t, id, storage.JournalFailed)
		if len(r.calls()) != 2 {
			t.Fatalf("calls %v, want both handlers", r.calls())
		}
		if !strings.Contains(ev.Error, "smtp refused") || !strings.Contains(ev.Error, "run.failed#1") {
			t.Fatalf("error %q, want the handler's error and name", ev.Error)
		}
	})

	t.Run("a panicking handler counts as that handler failing, not the host", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("t", func(context.Context, bus.Event) error { panic("oops") })
		b.bus.Subscribe("t", r.handler("after", nil))
		b.start(t)
		id := b.emit(t, "t", nil)
		ev := b.waitStatus(t, id, storage.JournalFailed)
		if !strings.Contains(ev.Error, "panic: oops") || len(r.calls()) != 1 {
			t.Fatalf("error %q, calls %v", ev.Error, r.calls())
		}
		b.settle(t) // the loop lives on
	})

	t.Run("an event nobody subscribes to is done", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		b.start(t)
		b.waitStatus(t, b.emit(t, "workflow.resumed", nil), storage.JournalDone)
	})

	t.Run("a context records its source on what it emits and names its handlers", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		c := b.bus.Context("connectors/mail")
		c.Subscribe("mail.bounced", func(context.Context, bus.Event) error { return errors.New("no") })
		b.start(t)
		id, err := c.Emit(b.ctx, "mail.bounced", map[string]string{"to": "a@b"}, "wf-1")
		if err != nil {
			t.Fatal(err)
		}
		ev := b.waitStatus(t, id, storage.JournalFailed)
		if ev.Source != "connectors/mail" || ev.CorrelationID != "wf-1" || !strings.Contains(ev.Error, "connectors/mail: no") {
			t.Fatalf("journal %+v", ev)
		}
	})

	t.Run("an event emitted in a transaction exists only if the transaction commits", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("workflow.paused", r.handler("h", nil))
		b.start(t)
		rollback := errors.New("rollback")
		err := b.db.Write(b.ctx, func(tx *storage.Tx) error {
			if _, err := b.bus.EmitTx(tx, "workflow.paused", "engine", nil, "wf-1"); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		var id int64
		if err := b.db.Write(b.ctx, func(tx *storage.Tx) (err error) {
			id, err = b.bus.EmitTx(tx, "workflow.paused", "engine", nil, "wf-1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		b.bus.Wake()
		if ev := receive(t, r.got); ev.ID != id || ev.Source != "engine" {
			t.Fatalf("event %+v", ev)
		}
		b.settle(t)
		if got := r.calls(); len(got) != 1 {
			t.Fatalf("calls %v, want only the committed event", got)
		}
	})

	t.Run("a pass claims no more than the batch size", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{BatchSize: 3})
		release := make(chan struct{})
		entered := make(chan struct{}, 10)
		b.bus.Subscribe("t", func(context.Context, bus.Event) error {
			entered <- struct{}{}
			<-release
			return nil
		})
		var ids []int64
		for range 7 {
			ids = append(ids, b.emit(t, "t", nil))
		}
		b.start(t)
		kit.Wait(t, entered, kit.Timeout)
		if n := len(b.journal(t, storage.JournalFilter{Status: storage.JournalProcessing})); n != 3 {
			t.Fatalf("%d processing, want the batch of 3", n)
		}
		close(release)
		for _, id := range ids {
			b.waitStatus(t, id, storage.JournalDone)
		}
	})

	t.Run("an event written without a wake is found by the fallback poll", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{PollInterval: 20 * time.Millisecond})
		r := newRecorder()
		b.bus.Subscribe("t", r.handler("h", nil))
		b.start(t)
		b.settle(t)
		var id int64
		if err := b.db.Write(b.ctx, func(tx *storage.Tx) (err error) {
			id, err = b.bus.EmitTx(tx, "t", "engine", nil, "")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// no Wake: a caller that forgot it is late, never lost
		if ev := receive(t, r.got); ev.ID != id {
			t.Fatalf("event %+v", ev)
		}
	})

	t.Run("an invalid emit is refused before anything is written", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		if _, err := b.bus.Emit(b.ctx, "", nil, ""); err == nil {
			t.Fatal("empty topic accepted")
		}
		if _, err := b.bus.Emit(b.ctx, "t", func() {}, ""); err == nil {
			t.Fatal("unencodable payload accepted")
		}
		if evs := b.journal(t, storage.JournalFilter{}); len(evs) != 0 {
			t.Fatalf("journal %+v", evs)
		}
	})
}

func TestDeferred(t *testing.T) {
	t.Parallel()

	t.Run("a scheduled event is delivered once its time comes and not before", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("reminder.due", r.handler("h", nil))
		b.start(t)
		id, err := b.bus.ScheduleAt(b.ctx, time.Hour, "reminder.due", map[string]string{"text": "answer me"}, "wf-5")
		if err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Hour - time.Millisecond)
		b.settle(t)
		if got := r.calls(); len(got) != 0 {
			t.Fatalf("delivered early: %v", got)
		}
		b.clock.Advance(time.Millisecond)
		b.bus.Wake()
		ev := receive(t, r.got)
		if ev.Topic != "reminder.due" || ev.CorrelationID != "wf-5" || string(ev.Payload) != `{"text":"answer me"}` {
			t.Fatalf("event %+v", ev)
		}
		b.waitStatus(t, ev.ID, storage.JournalDone)
		d, err := b.db.Read().DeferredEvent(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != storage.DeferredFired || d.EventID != ev.ID {
			t.Fatalf("deferred %+v", d)
		}
	})

	t.Run("a reminder made while the clock ran ahead fires its delay after the clock is set back", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("reminder.due", r.handler("h", nil))
		b.start(t)
		right := b.clock.Now()
		b.clock.Advance(7 * 24 * time.Hour) // the clock a week ahead
		b.settle(t)
		if _, err := b.bus.ScheduleAt(b.ctx, time.Hour, "reminder.due", nil, "wf-1"); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(right) // set right again (NTP, the person)
		b.bus.Wake()
		b.settle(t)
		b.clock.Advance(time.Hour)
		b.bus.Wake()
		ev := receive(t, r.got) // before: a week and an hour on
		if ev.Topic != "reminder.due" {
			t.Fatalf("event %+v", ev)
		}
	})

	t.Run("a restart after the clock was set back brings its reminders back too", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		right := b.clock.Now()
		b.clock.Advance(7 * 24 * time.Hour)
		id, err := b.bus.ScheduleAt(b.ctx, time.Hour, "reminder.due", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		b.clock.Set(right)
		if _, err := b.bus.Recover(b.ctx); err != nil {
			t.Fatal(err)
		}
		d, err := b.db.Read().DeferredEvent(b.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := right.Add(time.Hour); !d.FireAt.Equal(want) {
			t.Fatalf("after the restart the reminder fires at %v, want %v (its hour after now)", d.FireAt, want)
		}
	})

	t.Run("a cancelled event never fires and a second cancel says so", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("reminder.due", r.handler("h", nil))
		b.start(t)
		id, err := b.bus.ScheduleAt(b.ctx, time.Minute, "reminder.due", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := b.bus.Cancel(b.ctx, id); !ok || err != nil {
			t.Fatalf("cancel: %v %v", ok, err)
		}
		b.clock.Advance(time.Hour)
		b.settle(t)
		if got := r.calls(); len(got) != 0 {
			t.Fatalf("a cancelled event was delivered: %v", got)
		}
		if ok, err := b.bus.Cancel(b.ctx, id); ok || err != nil {
			t.Fatalf("second cancel: %v %v", ok, err)
		}
		if _, err := b.bus.Cancel(b.ctx, 999); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("cancel of an unknown id: %v", err)
		}
	})

	t.Run("a fired event can no longer be cancelled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		b.start(t)
		id, err := b.bus.ScheduleAt(b.ctx, 0, "t", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		b.settle(t)
		if ok, err := b.bus.Cancel(b.ctx, id); ok || err != nil {
			t.Fatalf("cancel after firing: %v %v", ok, err)
		}
	})

	t.Run("a reminder scheduled and cancelled inside the engine's transactions", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		var id int64
		if err := b.db.Write(b.ctx, func(tx *storage.Tx) (err error) {
			id, err = b.bus.ScheduleAtTx(tx, time.Hour, "approval.reminder", "engine", map[string]int{"mutation": 1}, "wf-1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		d, _ := b.db.Read().DeferredEvent(b.ctx, id)
		if d.Source != "engine" || !d.FireAt.Equal(b.clock.Now().Add(time.Hour)) {
			t.Fatalf("deferred %+v", d)
		}
		var ok bool
		if err := b.db.Write(b.ctx, func(tx *storage.Tx) (err error) {
			ok, err = b.bus.CancelTx(tx, id)
			return err
		}); err != nil || !ok {
			t.Fatalf("cancel: %v %v", ok, err)
		}
	})

	t.Run("a context cancels only what its own source scheduled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		mine, other := b.bus.Context("a"), b.bus.Context("b")
		id, err := mine.ScheduleAt(b.ctx, time.Hour, "t", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := other.Cancel(b.ctx, id); ok || err == nil {
			t.Fatalf("another source cancelled it: %v %v", ok, err)
		}
		if ok, err := mine.Cancel(b.ctx, id); !ok || err != nil {
			t.Fatalf("own cancel: %v %v", ok, err)
		}
	})

	t.Run("a near schedule wakes the loop long before the fallback poll", func(t *testing.T) {
		t.Parallel()
		// The real clock here: the loop's timer must be set from the
		// earliest fire_at, not left at the one-minute poll.
		b := setup(t, bus.Opts{Now: time.Now, PollInterval: time.Minute})
		r := newRecorder()
		b.bus.Subscribe("reminder.due", r.handler("h", nil))
		b.start(t)
		b.settle(t) // the loop is idle, waiting on its poll
		start := time.Now()
		if _, err := b.bus.ScheduleAt(b.ctx, 50*time.Millisecond, "reminder.due", nil, ""); err != nil {
			t.Fatal(err)
		}
		receive(t, r.got)
		if elapsed := time.Since(start); elapsed < 50*time.Millisecond || elapsed > 30*time.Second {
			t.Fatalf("delivered after %v, want shortly after 50ms", elapsed)
		}
	})
}

func TestLifecycle(t *testing.T) {
	t.Parallel()

	t.Run("recover resets interrupted deliveries and promotes overdue deferred events", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		first, second := b.emit(t, "t", nil), b.emit(t, "t", nil)
		if _, err := b.bus.ScheduleAt(b.ctx, time.Minute, "t", nil, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := b.bus.ScheduleAt(b.ctx, time.Hour, "t", nil, ""); err != nil {
			t.Fatal(err)
		}
		// A crash mid-delivery: both claimed, neither finished.
		if err := b.db.Write(b.ctx, func(tx *storage.Tx) error {
			_, err := tx.ClaimPending(b.ctx, 10)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(2 * time.Minute)
		n, err := b.bus.Recover(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("recovered %d, want 2 interrupted + 1 overdue", n)
		}
		if !strings.Contains(b.logs.String(), "recovered 3 events") {
			t.Fatalf("logs:\n%s", b.logs.String())
		}
		pending := b.journal(t, storage.JournalFilter{Status: storage.JournalPending})
		if len(pending) != 3 {
			t.Fatalf("pending %+v", pending)
		}
		r := newRecorder()
		b.bus.Subscribe("t", r.handler("h", nil))
		b.start(t)
		b.waitStatus(t, first, storage.JournalDone)
		b.waitStatus(t, second, storage.JournalDone)
		b.waitStatus(t, pending[0].ID, storage.JournalDone)
		if got := r.calls(); len(got) != 3 {
			t.Fatalf("calls %v", got)
		}
	})

	t.Run("recover refuses while the loop runs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		b.start(t)
		if _, err := b.bus.Recover(b.ctx); err == nil {
			t.Fatal("recover while running succeeded")
		}
	})

	t.Run("stop ends the loop, and nothing is delivered until the next start", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		r := newRecorder()
		b.bus.Subscribe("t", r.handler("h", nil))
		b.start(t)
		if err := b.bus.Start(b.ctx); err == nil {
			t.Fatal("a second start succeeded")
		}
		b.settle(t)
		if err := b.bus.Stop(b.ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.bus.Stop(b.ctx); err != nil {
			t.Fatalf("second stop: %v", err)
		}
		id := b.emit(t, "t", nil)
		b.bus.Wake()
		select {
		case ev := <-r.got:
			t.Fatalf("delivered while stopped: %+v", ev)
		case <-time.After(20 * time.Millisecond):
		}
		if ev, _ := b.db.Read().JournalEvent(b.ctx, id); ev.Status != storage.JournalPending {
			t.Fatalf("status %s while stopped", ev.Status)
		}
		b.start(t)
		receive(t, r.got)
		b.waitStatus(t, id, storage.JournalDone)
	})

	t.Run("a delivery cut short by stop goes back to pending with the rest of its batch", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{BatchSize: 3})
		entered := make(chan struct{}, 10)
		b.bus.Subscribe("t", func(ctx context.Context, _ bus.Event) error {
			entered <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		})
		for range 3 {
			b.emit(t, "t", nil)
		}
		b.start(t)
		kit.Wait(t, entered, kit.Timeout)
		if err := b.bus.Stop(b.ctx); err != nil {
			t.Fatal(err)
		}
		if evs := b.journal(t, storage.JournalFilter{Status: storage.JournalPending}); len(evs) != 3 {
			t.Fatalf("pending after stop: %+v", evs)
		}
	})

	t.Run("stop gives up when its context ends before a stuck handler does", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		release, entered := make(chan struct{}), make(chan struct{})
		b.bus.Subscribe("t", func(context.Context, bus.Event) error {
			close(entered)
			<-release
			return nil
		})
		b.start(t)
		id := b.emit(t, "t", nil)
		kit.Wait(t, entered, kit.Timeout)
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Millisecond)
		defer cancel()
		if err := b.bus.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("stop: %v", err)
		}
		close(release)
		if err := b.bus.Stop(b.ctx); err != nil {
			t.Fatal(err)
		}
		// The handler succeeded, so the delivery is recorded despite the stop.
		b.waitStatus(t, id, storage.JournalDone)
	})
}

func TestWire(t *testing.T) {
	t.Parallel()

	t.Run("manifest subscriptions call the named handlers", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		var mu sync.Mutex
		var notes []string
		notified := make(chan struct{}, 1)
		named := map[string]bus.Handler{
			bus.NotifyUserHandler: bus.NotifyUser(func(title, text string) {
				mu.Lock()
				notes = append(notes, title+" | "+text)
				mu.Unlock()
				notified <- struct{}{}
			}),
		}
		err := b.bus.Wire([]bus.Subscription{{Topic: "approval.requested", Handler: "notify_user"}}, named)
		if err != nil {
			t.Fatal(err)
		}
		b.start(t)
		b.emit(t, "approval.requested", map[string]string{"text": "Send the invoice to ACME?"})
		kit.Wait(t, notified, kit.Timeout)
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"approval.requested | Send the invoice to ACME?"}; !slices.Equal(notes, want) {
			t.Fatalf("notes %v, want %v", notes, want)
		}
	})

	t.Run("an unknown handler name fails, naming it and the known ones, and wires nothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		called := false
		named := map[string]bus.Handler{
			"notify_user": func(context.Context, bus.Event) error { called = true; return nil },
			"log":         func(context.Context, bus.Event) error { return nil },
		}
		err := b.bus.Wire([]bus.Subscription{
			{Topic: "approval.requested", Handler: "notify_user"},
			{Topic: "run.failed", Handler: "invoke_agent"},
		}, named)
		if err == nil {
			t.Fatal("wired an unknown handler")
		}
		for _, want := range []string{`"invoke_agent"`, `"run.failed"`, "known: log, notify_user"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not contain %s", err, want)
			}
		}
		b.start(t)
		b.waitStatus(t, b.emit(t, "approval.requested", nil), storage.JournalDone)
		if called {
			t.Fatal("a subscription of a refused config was wired")
		}
	})

	t.Run("an empty topic or handler is refused", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bus.Opts{})
		if err := b.bus.Wire([]bus.Subscription{{Handler: "x"}}, nil); err == nil || !strings.Contains(err.Error(), "empty topic") {
			t.Fatalf("got %v", err)
		}
		if err := b.bus.Wire([]bus.Subscription{{Topic: "t"}}, nil); err == nil || !strings.Contains(err.Error(), "empty handler") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestNotifyUser(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 300)
	cases := []struct {
		name, payload, want string
	}{
		{"the payload's text is the message", `{"text":"Drink water","x":1}`, "Drink water"},
		{"without text the topic and a summary of the payload", `{"workflow":"mail","mutation":12,"params":{"to":"a@b"}}`,
			`approval.requested: mutation=12, params={"to":"a@b"}, workflow=mail`},
		{"an empty payload is just the topic", `{}`, "approval.requested"},
		{"a payload that is not an object is shown compact", `[1, 2]`, "approval.requested: [1,2]"},
		{"a long text is cut short", `{"text":"` + long + `"}`, strings.Repeat("é", 199) + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var title, text string
			h := bus.NotifyUser(func(ti, te string) { title, text = ti, te })
			if err := h(context.Background(), bus.Event{Topic: "approval.requested", Payload: json.RawMessage(c.payload)}); err != nil {
				t.Fatal(err)
			}
			if title != "approval.requested" || text != c.want {
				t.Fatalf("got %q / %q, want %q", title, text, c.want)
			}
		})
	}
}

// TestEmitTxWakesTheLoop: an event journaled (or scheduled) inside a
// caller's transaction wakes the loop once that transaction commits, with
// no Wake from the caller, so nothing else need wake the loop "in case"
// (the engine woke it on every notification: two write transactions each).
func TestEmitTxWakesTheLoop(t *testing.T) {
	t.Parallel()
	b := setup(t, bus.Opts{PollInterval: time.Hour})
	r := newRecorder()
	b.bus.Subscribe("run.failed", r.handler("only", nil))
	b.bus.Subscribe("approval.reminder", r.handler("only", nil))
	b.start(t)
	b.settle(t) // the loop's first pass is over: it sleeps for the hour
	var id int64
	if err := b.db.Write(b.ctx, func(tx *storage.Tx) (err error) {
		id, err = b.bus.EmitTx(tx, "run.failed", "", map[string]any{"run": 1}, "")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b.waitStatus(t, id, storage.JournalDone)
	if ev := receive(t, r.got); ev.Topic != "run.failed" {
		t.Fatalf("delivered %+v, want the run.failed", ev)
	}
	if err := b.db.Write(b.ctx, func(tx *storage.Tx) (err error) {
		_, err = b.bus.ScheduleAtTx(tx, 0, "approval.reminder", "", nil, "")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if ev := receive(t, r.got); ev.Topic != "approval.reminder" {
		t.Fatalf("delivered %+v, want the reminder", ev)
	}
}
