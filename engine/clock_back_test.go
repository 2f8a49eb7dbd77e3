package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/enginetest/kit"
)

// clockAhead deploys, on a clock a year ahead (a flat RTC battery, a
// typo), a workflow with an hourly producer and a consumer that asks to
// sleep for ever (held to policy.max_wake), and runs it once: its next
// run and wakeAt are reckoned a year from the right time.
func clockAhead(t *testing.T) (b *bundle, count func() (producer, consumer int)) {
	b = setup(t)
	b.clock.Set(kit.Start.AddDate(1, 0, 0))
	b.deploy("wrong", `export default Keep.workflow({ name: "wrong", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async () => {} } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare() { return { reservations: [], data: {}, wakeAt: "2100-01-01T00:00:00Z" }; },
    async mutate() {}, async next() {} }) } });`)
	b.drain()
	count = func() (producer, consumer int) {
		for _, r := range b.runs("wrong") {
			if r.Handler == "p" {
				producer++
			} else {
				consumer++
			}
		}
		return
	}
	if p, c := count(); p != 1 || c != 1 {
		t.Fatalf("%d producer and %d consumer runs at deploy, want 1 and 1", p, c)
	}
	return b, count
}

// TestAClockPutRightWhileDownDoesNotPostponeSchedules: the clock put right
// while keep was down, the restart brings a producer's next run back to
// its schedule's next time from now and a consumer's wakeAt to max_wake
// from now: neither waits the year.
func TestAClockPutRightWhileDownDoesNotPostponeSchedules(t *testing.T) {
	t.Parallel()
	b, count := clockAhead(t)
	b.clock.Set(kit.Start) // put right
	b.reopen()
	b.clock.Advance(b.e.pol.MaxWake + time.Hour)
	b.drain()
	if p, c := count(); p != 2 || c != 2 {
		t.Fatalf("a day after the clock was put right: %d producer and %d consumer runs, want 2 and 2 (the hourly producer, the consumer at max_wake)", p, c)
	}
}

// TestAClockPutRightWhileRunningDoesNotPostponeSchedules: the same, the
// clock put right under the running host: it sees its clock jump and
// brings the times back without a restart.
func TestAClockPutRightWhileRunningDoesNotPostponeSchedules(t *testing.T) {
	t.Parallel()
	b, count := clockAhead(t)
	b.e.clockCheck = 5 * time.Millisecond
	asleep := make(chan time.Duration, 16)
	b.e.armed = func(_ *wfState, d time.Duration) {
		select {
		case asleep <- d:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	armedFor := func(what string, ok func(time.Duration) bool) {
		t.Helper()
		for {
			select {
			case d := <-asleep:
				if ok(d) {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatal(what)
			}
		}
	}
	armedFor("the loop never armed its timer for the next run", func(d time.Duration) bool { return d >= time.Hour })
	b.clock.Set(kit.Start) // put right
	kit.Until(t, 10*time.Second, "the next run reckoned from the right time", func() bool {
		for _, h := range b.workflow("wrong").Handlers {
			if h.Name == "p" {
				return h.NextRunAt != nil && !h.NextRunAt.After(kit.Start.Add(time.Hour))
			}
		}
		return false
	})
	b.clock.Advance(b.e.pol.MaxWake + time.Hour)
	kit.Until(t, 10*time.Second, "a producer and a consumer run after the clock was put right", func() bool {
		p, c := count()
		return p >= 2 && c >= 2
	})
	if err := b.e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, c := count(); p != 2 || c != 2 {
		t.Fatalf("%d producer and %d consumer runs, want 2 and 2", p, c)
	}
}

// TestAClockPutRightDoesNotPostponeABackOff: a transient failure's back-off
// reckoned on a clock a year ahead waits, once the clock is put right and
// keep restarts, no longer than the longest wait keep sets, not the year,
// with no card: the engine is its owner and must come back to it.
func TestAClockPutRightDoesNotPostponeABackOff(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	b := setup(t)
	b.clock.Set(kit.Start.AddDate(1, 0, 0))
	b.deploy("flaky", strings.Replace(`export default Keep.workflow({ name: "flaky", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "1h" }, handler: async (ctx) => { await ctx.http.get({ url: URL }); } } },
  consumers: {} });`, "URL", `"`+srv.URL+`"`, 1))
	b.drain()
	w, err := b.db.Read().WorkflowByName(context.Background(), "flaky")
	if err != nil || w.BlockKind != BlockTransient || w.RetryAt == nil {
		t.Fatalf("workflow %+v (%v), want a transient block with its back-off", w, err)
	}
	down.Store(false)
	b.clock.Set(kit.Start) // put right
	b.reopen()
	b.clock.Advance(max(b.e.pol.BackoffMax*2, connectors.MaxRetryAfter) + time.Hour)
	b.drain()
	if w := b.workflow("flaky"); w.Block != nil {
		t.Fatalf("block %+v a day after the clock was put right: the back-off waits the year", w.Block)
	}
}

// TestAClockPutRightWhileRunningWakesTheBus: the bus brings back the
// reminders made under a clock ahead once it sees the clock go back
// (bus.clampIfSetBack), at its next pass; the engine, told of the jump,
// wakes it for that pass, which else would wait for the bus's poll.
func TestAClockPutRightWhileRunningWakesTheBus(t *testing.T) {
	t.Parallel()
	b := setupWithBus(t)
	bus := &wakeCounter{EventSink: b.e.events}
	b.e.events = bus
	b.e.clockCheck = 5 * time.Millisecond
	b.clock.Set(kit.Start.AddDate(1, 0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b.clock.Set(kit.Start) // put right
	kit.Until(t, 10*time.Second, "the bus woken after the clock was put right", func() bool { return bus.woken.Load() > 0 })
	if err := b.e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// wakeCounter counts the engine's wake-ups of its bus.
type wakeCounter struct {
	EventSink
	woken atomic.Int32
}

func (w *wakeCounter) Wake() {
	w.woken.Add(1)
	w.EventSink.Wake()
}
