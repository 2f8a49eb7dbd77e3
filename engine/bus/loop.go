package bus

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"keep/storage"
)

// promoteLimit bounds the deferred events one pass promotes, so that a
// backlog (a machine asleep for a week) is worked off in several short
// transactions rather than one long one that holds the writer.
const promoteLimit = 100

// retryMin is the first wait after a pass failed on the database; it
// doubles up to PollInterval so that a broken database is not hammered.
const retryMin = 100 * time.Millisecond

// Start runs the dispatch loop in one goroutine until Stop is called or ctx
// is done. Call Recover first. Starting a running bus is an error.
func (b *Bus) Start(ctx context.Context) error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.running {
		return errors.New("bus: already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	b.running, b.cancel, b.done = true, cancel, make(chan struct{})
	go b.loop(ctx, b.done)
	return nil
}

// Stop ends the dispatch loop and waits for it, or for ctx: a handler that
// ignores its context can hold the loop, and Stop then returns ctx's error.
// The delivery in hand is finished and recorded; events claimed but not yet
// delivered go back to pending. Stopping a stopped bus does nothing.
func (b *Bus) Stop(ctx context.Context) error {
	b.life.Lock()
	defer b.life.Unlock()
	if !b.running {
		return nil
	}
	b.cancel()
	select {
	case <-b.done:
		b.running = false
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bus: stop: %w", ctx.Err())
	}
}

// Recover prepares the journal for a new dispatch loop, before Start:
// deliveries a crash interrupted (processing) go back to pending, and
// deferred events that came due while the host was down are promoted. It
// returns how many events it recovered.
func (b *Bus) Recover(ctx context.Context) (int, error) {
	b.life.Lock()
	defer b.life.Unlock()
	// A running loop's processing events are deliveries in progress, not
	// interrupted ones; resetting them would deliver them twice at once.
	if b.running {
		return 0, errors.New("bus: recover while the dispatch loop runs")
	}
	var reset, promoted int
	err := b.db.Write(ctx, func(tx *storage.Tx) error {
		var err error
		if reset, err = tx.ResetProcessing(ctx); err != nil {
			return err
		}
		now := b.now()
		if _, err := tx.ClampDeferred(ctx, now); err != nil {
			return err
		}
		for {
			ids, err := tx.PromoteDueDeferred(ctx, now, promoteLimit)
			if err != nil {
				return err
			}
			promoted += len(ids)
			if len(ids) < promoteLimit {
				return nil
			}
		}
	})
	if err != nil {
		return 0, fmt.Errorf("bus: recover: %w", err)
	}
	n := reset + promoted
	b.log.Info(fmt.Sprintf("recovered %d events", n), "interrupted", reset, "overdue_deferred", promoted)
	b.Wake()
	return n, nil
}

// loop is the dispatch loop: it sleeps until woken, until the earliest
// deferred event is due, or until the fallback poll, then works off
// everything that is due. An idle bus costs one wake-up per PollInterval.
func (b *Bus) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(0) // a first pass at once: work may be waiting
	defer timer.Stop()
	backoff := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		case <-timer.C:
		}
		wait, err := b.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			backoff = min(max(2*backoff, retryMin), b.poll)
			b.log.Error("dispatch pass failed", "err", err, "retry_in", backoff)
			wait = backoff
		} else {
			backoff = 0
		}
		timer.Reset(wait)
	}
}

// pass promotes due deferred events and delivers pending ones, batch after
// batch while batches come back full, and returns how long the loop may
// sleep: until the next deferred event is due, at most PollInterval.
func (b *Bus) pass(ctx context.Context) (time.Duration, error) {
	if err := b.clampIfSetBack(ctx); err != nil {
		return 0, err
	}
	for ctx.Err() == nil {
		promoted, err := b.promote(ctx)
		if err != nil {
			return 0, err
		}
		var evs []storage.JournalEvent
		if err := b.db.Write(ctx, func(tx *storage.Tx) (err error) {
			evs, err = tx.ClaimPending(ctx, b.batch)
			return err
		}); err != nil {
			return 0, err
		}
		if err := b.deliverBatch(ctx, evs); err != nil {
			return 0, err
		}
		if len(evs) < b.batch && promoted < promoteLimit {
			break
		}
	}
	next, ok, err := b.db.Read().NextFireAt(ctx)
	if err != nil {
		return 0, err
	}
	wait := b.poll
	if ok {
		wait = min(max(next.Sub(b.now()), 0), b.poll)
	}
	return wait, nil
}

func (b *Bus) promote(ctx context.Context) (int, error) {
	var ids []int64
	err := b.db.Write(ctx, func(tx *storage.Tx) (err error) {
		ids, err = tx.PromoteDueDeferred(ctx, b.now(), promoteLimit)
		return err
	})
	if len(ids) > 0 {
		b.log.Debug("promoted deferred events", "count", len(ids))
	}
	return len(ids), err
}

// deliverBatch delivers claimed events oldest first. When the loop is told
// to stop, what is not yet delivered goes back to pending for the next
// loop; the records are written without the loop's context, which is
// already cancelled by then.
func (b *Bus) deliverBatch(ctx context.Context, evs []storage.JournalEvent) error {
	record := context.WithoutCancel(ctx)
	for i, ev := range evs {
		if ctx.Err() != nil {
			return b.release(record, evs[i:])
		}
		if err := b.deliver(ctx, record, ev); err != nil {
			// The outcome could not be recorded: deliver this one and the
			// rest again rather than leave them processing until a restart.
			return errors.Join(err, b.release(record, evs[i:]))
		}
	}
	return nil
}

func (b *Bus) release(ctx context.Context, evs []storage.JournalEvent) error {
	return b.db.Write(ctx, func(tx *storage.Tx) error {
		for _, ev := range evs {
			if err := tx.ReleaseJournalEvent(ctx, ev.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// deliver runs every subscriber of ev's topic in order and records the
// outcome: done only if all succeeded (an event nobody subscribes to is
// done), else failed with every error. A delivery cut short by Stop is
// neither: it goes back to pending and is delivered again from the start.
func (b *Bus) deliver(ctx, record context.Context, ev storage.JournalEvent) error {
	e := Event{ID: ev.ID, Topic: ev.Topic, Source: ev.Source, Payload: ev.Payload,
		CorrelationID: ev.CorrelationID, CreatedAt: ev.CreatedAt, Status: ev.Status}
	var errs []error
	for _, s := range b.subscribers(ev.Topic) {
		if err := b.call(ctx, s, e); err != nil {
			b.log.Warn("event handler failed", "subscriber", s.name, "event_id", ev.ID, "topic", ev.Topic, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	return b.db.Write(record, func(tx *storage.Tx) error {
		if len(errs) > 0 && ctx.Err() != nil {
			b.log.Info("delivery interrupted by stop; it will be delivered again", "event_id", ev.ID)
			return tx.ReleaseJournalEvent(record, ev.ID)
		}
		if len(errs) > 0 {
			return tx.MarkJournalFailed(record, ev.ID, errors.Join(errs...).Error(), b.now())
		}
		return tx.MarkJournalDone(record, ev.ID, b.now())
	})
}

// call runs one handler; a panic is that handler failing, not the host.
func (b *Bus) call(ctx context.Context, s subscriber, ev Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("event handler panicked", "subscriber", s.name, "event_id", ev.ID, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return s.h(ctx, ev)
}

// clampIfSetBack brings back the deferred events made under a clock ahead
// (storage.ClampDeferred) once the wall clock is seen to have gone back
// since the last pass: the loop passes at least once a PollInterval, so a
// reminder is late by that at most. It writes only then.
func (b *Bus) clampIfSetBack(ctx context.Context) error {
	now := b.now()
	last := b.lastPass
	b.lastPass = now
	if last.IsZero() || !now.Before(last) {
		return nil
	}
	return b.db.Write(ctx, func(tx *storage.Tx) error {
		n, err := tx.ClampDeferred(ctx, now)
		if n > 0 {
			b.log.Info("deferred events brought back to the clock, which was set back", "events", n, "was", last, "now", now)
		}
		return err
	})
}
