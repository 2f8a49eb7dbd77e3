package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRunNowAndIntervals: chapter 16's "Manual Trigger" and interval
// schedules. Run now queues every producer (they run one after another),
// recomputes each one's next run from when it ran, and is refused while a
// run is active; an interval missed while the machine slept is one run, not
// one per interval.
func TestRunNowAndIntervals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.deploy("two", `export default Keep.workflow({ name: "two", topics: { a: {}, b: {} },
  producers: {
    hourly: { publishes: ["a"], schedule: { interval: "1h" }, handler: async (ctx, state) => ({ n: (state?.n ?? 0) + 1 }) },
    daily: { publishes: ["b"], schedule: { cron: "0 9 * * *" }, handler: async (ctx, state) => ({ n: (state?.n ?? 0) + 1 }) },
  },
  consumers: {} });`)
	b.drain() // both run on deploy
	count := func(handler string) int {
		n := 0
		for _, r := range b.runs("two") {
			if r.Handler == handler && r.Status == "committed" {
				n++
			}
		}
		return n
	}
	if count("hourly") != 1 || count("daily") != 1 {
		t.Fatalf("runs %+v, want each producer once on deploy", b.runs("two"))
	}
	start := b.clock.Now()
	if next := b.handler("two", "hourly").NextRunAt; next == nil || !next.Equal(start.Add(time.Hour)) {
		t.Fatalf("hourly next run %v, want %v", next, start.Add(time.Hour))
	}

	// the machine sleeps five hours: one run, then every hour from it
	b.clock.Advance(5*time.Hour + 10*time.Minute)
	b.drain()
	if count("hourly") != 2 {
		t.Fatalf("hourly ran %d times, want 2: missed intervals are one run", count("hourly"))
	}
	woke := b.clock.Now()
	if next := b.handler("two", "hourly").NextRunAt; next == nil || !next.Equal(woke.Add(time.Hour)) {
		t.Fatalf("hourly next run %v, want an hour after it ran (%v)", next, woke.Add(time.Hour))
	}

	// run now: both producers, each next run recomputed from when it ran
	b.clock.Advance(10 * time.Minute)
	if err := b.e.RunNow(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if count("hourly") != 3 || count("daily") != 2 {
		t.Fatalf("after run now: hourly %d, daily %d runs, want 3 and 2", count("hourly"), count("daily"))
	}
	now := b.clock.Now()
	if next := b.handler("two", "hourly").NextRunAt; next == nil || !next.Equal(now.Add(time.Hour)) {
		t.Fatalf("hourly next run %v after run now, want %v", next, now.Add(time.Hour))
	}
	if next := b.handler("two", "daily").NextRunAt; next == nil || !next.After(now) || next.Hour() != 9 {
		t.Fatalf("daily next run %v after run now, want its next 09:00", next)
	}
	for _, r := range b.runs("two")[:2] {
		if r.Trigger != "run-now" {
			t.Fatalf("run %+v, want triggered by run-now", r)
		}
	}
	b.noRunFailed("two")

	// refused while a run is active
	b.e.state(b.workflowRow("two").ID).setRunning(true)
	err := b.e.RunNow(ctx, "two")
	b.e.state(b.workflowRow("two").ID).setRunning(false)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("run now during a run: %v, want refused", err)
	}
}
