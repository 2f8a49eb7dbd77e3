package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"keep/engine/config"
	"keep/storage"
)

// Retention is how long finished work is kept (DESIGN.md §14 [retention]).
// Zero keeps that kind forever.
type Retention struct {
	Traces               time.Duration
	Runs                 time.Duration
	CompactPayloadsAfter time.Duration
}

// RetentionFrom turns the config file's [retention] into a Retention.
func RetentionFrom(r config.Retention) Retention {
	return Retention{Traces: r.Traces.Duration, Runs: r.Runs.Duration, CompactPayloadsAfter: r.CompactPayloadsAfter.Duration}
}

// GCReport says what one gc removed and how much space it gave back.
type GCReport = storage.GCReport

// GC applies r now: traces and run records of finished runs older than
// its durations, and (opt-in) old done events' payloads. It runs beside
// the scheduler: each batch is one short write transaction.
func (e *Engine) GC(ctx context.Context, r Retention) (GCReport, error) {
	now := e.now()
	before := func(d time.Duration) time.Time {
		if d <= 0 {
			return time.Time{}
		}
		return now.Add(-d)
	}
	rep, err := e.db.GC(ctx, storage.Retention{TracesBefore: before(r.Traces), RunsBefore: before(r.Runs),
		CompactBefore: before(r.CompactPayloadsAfter)})
	if err != nil {
		return rep, fmt.Errorf("gc: %w", err)
	}
	e.log.Info("gc", "traces", rep.Traces, "runs", rep.Runs, "prepare_results", rep.PrepareResults, "payloads", rep.Payloads,
		"pages_freed", rep.PagesFreed, "bytes_before", rep.BytesBefore, "bytes_after", rep.BytesAfter,
		"transactions", rep.Transactions, "largest_tx_rows", rep.LargestTx, "longest_tx_ms", rep.LongestTxMS)
	return rep, nil
}

// Backup writes a consistent copy of the database to path (which must not
// exist) while the engine keeps running.
func (e *Engine) Backup(ctx context.Context, path string) error {
	return e.db.Backup(ctx, path)
}

// GCDaily runs gc every interval (default a day) until ctx ends or stop is
// called: one timer, re-armed after each gc, never a polling loop. A failed
// gc is logged and tried again next time. stop waits for a gc in progress.
func (e *Engine) GCDaily(ctx context.Context, r Retention, every time.Duration) (stop func()) {
	if every <= 0 {
		every = 24 * time.Hour
	}
	var mu sync.Mutex
	var running sync.WaitGroup // a gc in progress, so stop can wait for it
	stopped := false
	var t *time.Timer
	var fire func()
	fire = func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		running.Add(1)
		mu.Unlock()
		defer running.Done()
		if _, err := e.GC(ctx, r); err != nil && ctx.Err() == nil {
			e.log.Error("daily gc failed", "err", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t = time.AfterFunc(every, fire)
		}
	}
	mu.Lock()
	t = time.AfterFunc(every, fire)
	mu.Unlock()
	cancel := context.AfterFunc(ctx, func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	})
	return func() {
		cancel()
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
		running.Wait()
	}
}
