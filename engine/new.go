package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

// Wiring: New builds an engine from its parts and brings it where the
// database says it was (recover). It stands above the run loop's files,
// which never call it: only a process that wants an engine does (engine/
// daemon's Site, a dry run's throw-away engine, the tests).

// New returns an engine on an open database. It does not start scheduling:
// call Start for a long-running host, or Drain to run what is due and stop.
func New(ctx context.Context, opts Opts) (*Engine, error) {
	if opts.DB == nil || opts.Connectors == nil {
		return nil, errors.New("engine: DB and Connectors are required")
	}
	if opts.Policy.HandlerTimeout == 0 {
		opts.Policy = DefaultPolicy()
	}
	if opts.Policy.Limits.WallTime == 0 {
		opts.Policy.Limits = sandbox.DefaultLimits()
		opts.Policy.Limits.WallTime = opts.Policy.HandlerTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	e := &Engine{
		db:      opts.DB,
		reg:     opts.Connectors,
		pol:     opts.Policy,
		now:     func() time.Time { return opts.Now().UTC() },
		log:     RedactLogs(opts.Logger, opts.Connectors.Held()).With("component", "engine"),
		repair:  opts.Repairer,
		events:  opts.Events,
		wfs:     map[int64]*wfState{},
		scripts: map[scriptKey]*sandbox.Script{},
		subs:    opts.Subscribers,
	}
	if e.subs == nil {
		e.subs = NewSubscribers()
	}
	e.accounts = opts.Accounts
	e.watchMCP()
	e.configDigest = opts.ConfigDigest
	maxInput, err := e.db.Read().MaxInputID(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.inputSeq.Store(maxInput)
	var secret []byte
	err = e.db.Write(ctx, func(tx *storage.Tx) error {
		id, err := tx.InstallID(ctx)
		if err != nil {
			return err
		}
		e.keyPrefix = "keep-" + id
		secret, err = tx.HostSecret(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.reg.Keyed(secret)
	e.led = ledger.New(ledger.Opts{Now: e.now, KeyPrefix: e.keyPrefix})
	if e.events != nil {
		e.events.Subscribe(topicReminder, e.onReminder)
	}
	if err := e.recover(ctx); err != nil {
		return nil, fmt.Errorf("engine: recovery: %w", err)
	}
	return e, nil
}
