// Package bus is keep's durable event bus (DESIGN.md §9, event-bus.md):
// notifications a person may care about and deferred events such as
// approval reminders, journaled in the engine's SQLite file and delivered
// at least once to in-process subscribers by one dispatch loop.
//
// An event is written before anything is told of it, and marked done only
// after every subscriber of its topic succeeded; a crash mid-delivery
// leaves it processing, and Recover at the next start delivers it again.
// Subscribers must therefore tolerate seeing an event twice.
package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"keep/storage"
)

// Event is what a handler receives. Status is "processing" during delivery.
type Event struct {
	ID            int64
	Topic         string
	Source        string
	Payload       json.RawMessage
	CorrelationID string
	CreatedAt     time.Time
	Status        string
}

// Handler handles one event. An error (or a panic) marks the event failed;
// the topic's other handlers still run.
type Handler func(ctx context.Context, ev Event) error

// Opts configures New. Zero values take the documented defaults.
type Opts struct {
	// Logger defaults to slog.Default(); the bus adds component=bus.
	Logger *slog.Logger
	// Now is the clock deferred events are measured against; defaults to
	// time.Now. Tests inject a fake one so that scheduling never sleeps.
	Now func() time.Time
	// BatchSize is how many pending events one pass of the loop claims;
	// default 3, the chapter's number. The loop goes round again at once
	// while passes come back full.
	BatchSize int
	// PollInterval is the fallback wake-up of an idle loop; default one
	// minute. The loop is otherwise woken by Wake and by a timer set to the
	// earliest scheduled deferred event, so this bounds only how late a
	// wake-up missed by a bug (or a write from outside the bus) is noticed.
	PollInterval time.Duration
}

const (
	defaultBatchSize    = 3
	defaultPollInterval = time.Minute
)

// Bus is the event bus. Its methods are safe for concurrent use.
type Bus struct {
	db  *storage.DB
	log *slog.Logger
	now func() time.Time
	// lastPass is the wall clock at the loop's last pass, to see it set
	// back (clampIfSetBack); the loop's own.
	lastPass time.Time
	batch    int
	poll     time.Duration

	// wake has room for one signal: any number of Wake calls between two
	// passes of the loop collapse into one pass, and Wake never blocks.
	wake chan struct{}

	mu   sync.RWMutex
	subs map[string][]subscriber

	life    sync.Mutex
	running bool
	cancel  context.CancelFunc
	done    chan struct{}
}

type subscriber struct {
	// name identifies the subscriber in logs and in a failed event's error:
	// the source of a Context, the handler name of a manifest subscription.
	name string
	h    Handler
}

// New returns a bus on db. It does not start the dispatch loop (Start) and
// does not recover interrupted deliveries (Recover); a nil db is a
// programmer error and panics.
func New(db *storage.DB, opts Opts) *Bus {
	if db == nil {
		panic("bus: New with a nil database")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = defaultPollInterval
	}
	return &Bus{
		db:    db,
		log:   opts.Logger.With("component", "bus"),
		now:   opts.Now,
		batch: opts.BatchSize,
		poll:  opts.PollInterval,
		wake:  make(chan struct{}, 1),
		subs:  map[string][]subscriber{},
	}
}

// Subscribe adds h to the handlers of topic. Handlers of one topic run in
// the order they were added, one after another.
func (b *Bus) Subscribe(topic string, h Handler) {
	b.subscribe(topic, "", h)
}

func (b *Bus) subscribe(topic, name string, h Handler) {
	if h == nil {
		panic("bus: Subscribe with a nil handler")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if name == "" {
		name = fmt.Sprintf("%s#%d", topic, len(b.subs[topic])+1)
	}
	// A fresh slice, so that a delivery holding the old one is unaffected.
	subs := make([]subscriber, 0, len(b.subs[topic])+1)
	subs = append(subs, b.subs[topic]...)
	b.subs[topic] = append(subs, subscriber{name: name, h: h})
}

func (b *Bus) subscribers(topic string) []subscriber {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.subs[topic]
}

// Wake makes the dispatch loop look for work now. Emit, ScheduleAt and
// Recover call it, and EmitTx and ScheduleAtTx have it called once their
// transaction commits: the loop wakes for a journaled event and for nothing
// else (each of its passes is two write transactions). It never blocks.
func (b *Bus) Wake() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Emit journals an event with no source and wakes the loop. It returns
// once the event is durable, before it is delivered.
func (b *Bus) Emit(ctx context.Context, topic string, payload any, correlationID string) (int64, error) {
	return b.emit(ctx, topic, "", payload, correlationID)
}

func (b *Bus) emit(ctx context.Context, topic, source string, payload any, correlationID string) (int64, error) {
	var id int64
	err := b.db.Write(ctx, func(tx *storage.Tx) (err error) {
		id, err = b.emitTx(ctx, tx, topic, source, payload, correlationID)
		return err
	})
	if err != nil {
		return 0, err
	}
	b.Wake()
	return id, nil
}

// EmitTx journals an event inside the caller's transaction, so that it
// exists if and only if the change it announces does; the loop is woken
// once the transaction commits.
func (b *Bus) EmitTx(tx *storage.Tx, topic, source string, payload any, correlationID string) (int64, error) {
	// The statement runs inside tx, which the context given to DB.Write
	// already bounds.
	return b.emitTx(context.Background(), tx, topic, source, payload, correlationID)
}

func (b *Bus) emitTx(ctx context.Context, tx *storage.Tx, topic, source string, payload any, correlationID string) (int64, error) {
	m, err := message(topic, source, payload, correlationID)
	if err != nil {
		return 0, err
	}
	id, err := tx.InsertJournalEvent(ctx, m, b.now())
	if err != nil {
		return 0, fmt.Errorf("bus: emit: %w", err)
	}
	tx.AfterCommit(b.Wake)
	return id, nil
}

// ScheduleAt stores an event to be emitted after delay (a delay <= 0 means
// at the loop's next pass) and returns its deferred id, for Cancel. The
// event survives restarts.
func (b *Bus) ScheduleAt(ctx context.Context, delay time.Duration, topic string, payload any, correlationID string) (int64, error) {
	return b.scheduleAt(ctx, delay, topic, "", payload, correlationID)
}

func (b *Bus) scheduleAt(ctx context.Context, delay time.Duration, topic, source string, payload any, correlationID string) (int64, error) {
	var id int64
	err := b.db.Write(ctx, func(tx *storage.Tx) (err error) {
		id, err = b.scheduleAtTx(ctx, tx, delay, topic, source, payload, correlationID)
		return err
	})
	if err != nil {
		return 0, err
	}
	// The loop recomputes its timer: this event may be due before the one
	// it was waiting for.
	b.Wake()
	return id, nil
}

// ScheduleAtTx is ScheduleAt inside the caller's transaction (the engine
// schedules an approval reminder in the transaction that asks for the
// approval); the loop is woken once the transaction commits.
func (b *Bus) ScheduleAtTx(tx *storage.Tx, delay time.Duration, topic, source string, payload any, correlationID string) (int64, error) {
	return b.scheduleAtTx(context.Background(), tx, delay, topic, source, payload, correlationID)
}

func (b *Bus) scheduleAtTx(ctx context.Context, tx *storage.Tx, delay time.Duration, topic, source string, payload any, correlationID string) (int64, error) {
	m, err := message(topic, source, payload, correlationID)
	if err != nil {
		return 0, err
	}
	now := b.now()
	id, err := tx.ScheduleDeferred(ctx, m, now.Add(max(delay, 0)), now)
	if err != nil {
		return 0, fmt.Errorf("bus: schedule: %w", err)
	}
	// the loop recomputes its timer: this event may be due before the one
	// it was waiting for
	tx.AfterCommit(b.Wake)
	return id, nil
}

// Cancel cancels a deferred event that has not fired yet and says whether
// it did; an event that already fired (or was cancelled) is left alone and
// reported false. An unknown id is an error wrapping storage.ErrNotFound.
func (b *Bus) Cancel(ctx context.Context, id int64) (bool, error) {
	var ok bool
	err := b.db.Write(ctx, func(tx *storage.Tx) (err error) {
		ok, err = b.cancelTx(ctx, tx, id, "", false)
		return err
	})
	return ok, err
}

// CancelTx is Cancel inside the caller's transaction (the engine cancels a
// reminder in the transaction that answers the approval).
func (b *Bus) CancelTx(tx *storage.Tx, id int64) (bool, error) {
	return b.cancelTx(context.Background(), tx, id, "", false)
}

// cancelTx cancels id; with scoped set, only if source scheduled it, so
// that one connector cannot cancel another's events.
func (b *Bus) cancelTx(ctx context.Context, tx *storage.Tx, id int64, source string, scoped bool) (bool, error) {
	if scoped {
		d, err := tx.DeferredEvent(ctx, id)
		if err != nil {
			return false, fmt.Errorf("bus: cancel: %w", err)
		}
		if d.Source != source {
			return false, fmt.Errorf("bus: cancel deferred event %d: it was scheduled by %q, not %q", id, d.Source, source)
		}
	}
	ok, err := tx.CancelDeferred(ctx, id)
	if err != nil {
		return false, fmt.Errorf("bus: cancel: %w", err)
	}
	return ok, nil
}

// message checks an emit's arguments and encodes its payload. A nil
// payload is an empty object, the chapter's payloads being dicts.
func message(topic, source string, payload any, correlationID string) (storage.BusMessage, error) {
	if topic == "" {
		return storage.BusMessage{}, errors.New("bus: empty topic")
	}
	var raw json.RawMessage
	if payload != nil {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return storage.BusMessage{}, fmt.Errorf("bus: payload of %q: %w", topic, err)
		}
	}
	return storage.BusMessage{Topic: topic, Source: source, Payload: raw, CorrelationID: correlationID}, nil
}
