package bus

import (
	"context"
	"time"

	"keep/storage"
)

// Context is all of the bus an engine part or a connector gets: it can
// emit, schedule, cancel what it scheduled, and subscribe, but never sees
// the tables (event-bus.md, "ExtensionContext API").
type Context interface {
	// Emit journals an event and returns its id once it is durable.
	Emit(ctx context.Context, topic string, payload any, correlationID string) (int64, error)
	// ScheduleAt stores an event to be emitted after delay and returns its
	// deferred id.
	ScheduleAt(ctx context.Context, delay time.Duration, topic string, payload any, correlationID string) (int64, error)
	// Cancel cancels a deferred event this context scheduled and says
	// whether it had not fired yet.
	Cancel(ctx context.Context, id int64) (bool, error)
	// Subscribe adds a handler for topic, after those already added.
	Subscribe(topic string, h Handler)
}

// Context returns the bus as source sees it: the events it emits and
// schedules record source, its handlers are named source in logs and
// errors, and it can cancel only deferred events it scheduled.
func (b *Bus) Context(source string) Context {
	return sourceContext{b: b, source: source}
}

type sourceContext struct {
	b      *Bus
	source string
}

var _ Context = sourceContext{}

func (c sourceContext) Emit(ctx context.Context, topic string, payload any, correlationID string) (int64, error) {
	return c.b.emit(ctx, topic, c.source, payload, correlationID)
}

func (c sourceContext) ScheduleAt(ctx context.Context, delay time.Duration, topic string, payload any, correlationID string) (int64, error) {
	return c.b.scheduleAt(ctx, delay, topic, c.source, payload, correlationID)
}

func (c sourceContext) Cancel(ctx context.Context, id int64) (bool, error) {
	var ok bool
	err := c.b.db.Write(ctx, func(tx *storage.Tx) (err error) {
		ok, err = c.b.cancelTx(ctx, tx, id, c.source, true)
		return err
	})
	return ok, err
}

func (c sourceContext) Subscribe(topic string, h Handler) {
	c.b.subscribe(topic, c.source, h)
}
