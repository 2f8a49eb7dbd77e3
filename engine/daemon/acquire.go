package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/authoring/model"
)

// Want says what a process needs of the engine on its database.
type Want int

const (
	// ForCommand: the daemon's client when a daemon holds the database, else
	// an engine opened here and not started, for a command's few calls
	// (what they change waits for an engine to run it). A daemon found
	// starting is waited for.
	ForCommand Want = iota
	// OpenHere: an engine opened here and not started, whoever else runs;
	// the database lock refuses it beside a daemon (drain, a sign-in, gc).
	OpenHere
	// ForFrontEnd: the daemon's client when a daemon holds the database (or
	// once one starting answers), else an engine claimed, opened and started
	// here for as long as the front end runs (the TUI).
	ForFrontEnd
	// ForDaemon: an engine claimed, opened and started here, to be served
	// on the socket (Site.RunDaemon). Ended while it waits for the
	// database, it fails with errStoppedWaiting: nothing began.
	ForDaemon
)

var errStoppedWaiting = errors.New("daemon: stopped while waiting for the database")

// Got is the engine a process got hold of.
type Got struct {
	API api.API
	// Engine is the engine opened here; nil when attached to a daemon.
	Engine *engine.Engine
	// claim is a long-lived engine's hold on the database; nil for commands.
	claim  *Claim
	stopGC func()
	srv    *Server // the socket a front end's engine is served on
}

// Stop stops an engine started here (ForFrontEnd, ForDaemon), waiting up to
// within for what it runs; nil when attached or not started. What the site
// opened for it is released by Site.Close.
func (g *Got) Stop(ctx context.Context, within time.Duration) error {
	if g.claim == nil || g.Engine == nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), within)
	defer cancel()
	var err error
	if g.srv != nil {
		err = g.srv.Close(sctx) // the attached first, then the engine
	}
	err = errors.Join(err, g.Engine.Stop(sctx))
	if g.stopGC != nil {
		g.stopGC()
	}
	return err
}

// Get is the one way a keep process gets hold of the engine on the site's
// database (want says how), the daemon's client or an engine of its own.
func (s *Site) Get(ctx context.Context, want Want) (*Got, error) {
	switch want {
	case ForCommand:
		return s.forCommand(ctx)
	case OpenHere:
		e, err := s.open(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &Got{API: wholeOf(e), Engine: e}, nil
	case ForFrontEnd:
		// serving: the front end's engine answers on the socket as a
		// daemon's does, so commands and `keep mcp serve` run beside the
		// TUI attach to it
		var claim *Claim
		c, err := s.orAttach(ctx, func() (err error) { claim, err = s.claim(ctx, true); return err })
		if c != nil {
			return &Got{API: c}, nil
		}
		if err != nil {
			return nil, err
		}
		e, bus, err := s.openWithBus(ctx, claim)
		if err != nil {
			return nil, err
		}
		g, err := s.start(ctx, claim, e, bus, true)
		if err != nil {
			return nil, err
		}
		s.serveFrontEnd(ctx, g)
		return g, nil
	case ForDaemon:
		claim, err := s.claim(ctx, true)
		var e *engine.Engine
		var bus *engine.Bus
		if err == nil {
			e, bus, err = s.openWithBus(ctx, claim)
		}
		if err != nil && ctx.Err() != nil {
			return nil, errStoppedWaiting
		}
		if err != nil {
			return nil, err
		}
		return s.start(ctx, claim, e, bus, false)
	}
	panic(fmt.Sprintf("daemon: Get with an unknown want %d", want))
}

func (s *Site) forCommand(ctx context.Context) (*Got, error) {
	var e *engine.Engine
	c, err := s.orAttach(ctx, func() (err error) { e, err = s.open(ctx, nil); return err })
	if c != nil {
		return &Got{API: c}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Got{API: wholeOf(e), Engine: e}, nil
}

// orAttach is the daemon's client when a daemon holds the database, else
// take's doing; when take finds the database locked (a daemon started
// between the two looks, or is starting), the client once it answers.
func (s *Site) orAttach(ctx context.Context, take func() error) (*Client, error) {
	if c, ok := s.Attach(); ok {
		return c, nil
	}
	err := take()
	var le *engine.LockedError
	if errors.As(err, &le) {
		if err := s.awaitDaemon(ctx); err != nil {
			return nil, err
		}
		if c, ok := s.Attach(); ok {
			return c, nil
		}
	}
	return nil, err
}

// Attach returns a client of the daemon that holds the database, if one
// answers; the site closes it.
func (s *Site) Attach() (*Client, bool) {
	c, ok := Attach(s.o.DBPath)
	if !ok || c == nil {
		return nil, false
	}
	s.onClose(func() { c.Close() })
	return c, true
}

// awaitDaemon returns once no daemon is starting on the database.
func (s *Site) awaitDaemon(ctx context.Context) error {
	return AwaitStart(ctx, s.o.DBPath, func(pid int) {
		fmt.Fprintf(s.o.Stderr, "keep: waiting for the keep daemon (pid %d) starting on %s\n", pid, s.o.DBPath)
	})
}

// claim takes the database for a long-lived engine (startup.go), saying on
// stderr whom it waits for.
func (s *Site) claim(ctx context.Context, serving bool) (*Claim, error) {
	claim, err := ClaimEngine(ctx, s.o.DBPath, ClaimOpts{Serving: serving, Waiting: func(pid int, who string) {
		fmt.Fprintf(s.o.Stderr, "keep: waiting for %s (pid %d) to let go of %s\n", who, pid, s.o.DBPath)
		s.Logger().Info("waiting for the database", "db", s.o.DBPath, "holder", who, "holder_pid", pid)
	}})
	if err != nil {
		return nil, err
	}
	s.onClose(claim.Release)
	return claim, nil
}

// openDB opens the database; under a claim, a command holding it is waited
// for (and another that takes it in between, again) instead of refused.
func (s *Site) openDB(ctx context.Context, claim *Claim) (*engine.DB, error) {
	for {
		db, err := engine.OpenDB(ctx, engine.DBOpts{Path: s.o.DBPath, Logger: s.Logger()})
		var le *engine.LockedError
		if claim == nil || !errors.As(err, &le) {
			return db, err
		}
		if err := claim.WaitDB(ctx); err != nil {
			return nil, err
		}
	}
}

// open opens the database (taking its lock), builds the connectors from
// the config and returns an engine that is not started.
func (s *Site) open(ctx context.Context, claim *Claim) (*engine.Engine, error) {
	e, _, err := s.openWithBus(ctx, claim)
	return e, err
}

// openWithBus is open, with the engine's event bus for a long-lived engine
// to start.
func (s *Site) openWithBus(ctx context.Context, claim *Claim) (*engine.Engine, *engine.Bus, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, nil, err
	}
	logger := s.Logger()
	digest := engine.ConfigDigest(cfg) // the file's, before the demo's root is added
	cfg.Connectors.Files.Roots = append(cfg.Connectors.Files.Roots, s.DemoDir())
	accts, err := s.Accounts()
	if err != nil {
		return nil, nil, err
	}
	// The front ends the engine will tell, made first: notify.send and
	// notify_user, built before the engine, reach the same screens.
	front := engine.NewSubscribers()
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{DBPath: s.o.DBPath, ConfigPath: s.o.ConfigPath, Accounts: accts, Logger: logger, Notify: front.NotifySend})
	if err != nil {
		return nil, nil, err
	}
	s.onClose(func() { reg.Close() }) // MCP servers stop with keep
	db, err := s.openDB(ctx, claim)
	if err != nil {
		return nil, nil, err
	}
	s.onClose(func() { db.Close() })
	// The bus journals what a person may care about in the same transaction
	// as the change; its dispatch loop runs only in long-lived modes
	// (startBus), and recover() redelivers what a short command journaled.
	bus := engine.NewBus(db, engine.BusOpts{Logger: logger})
	subs := make([]engine.BusSubscription, len(cfg.Events.Subscribes))
	for i, sub := range cfg.Events.Subscribes {
		subs[i] = engine.BusSubscription{Topic: sub.Topic, Handler: sub.Handler}
	}
	if err := bus.Wire(subs, map[string]engine.BusHandler{engine.NotifyUserHandler: engine.NotifyUser(func(title, text string) {
		desktopNotify(title, text)
		front.NotifyUser(title, text)
	})}); err != nil {
		return nil, nil, fmt.Errorf("config %s: events.subscribes: %w", cfg.Path, err)
	}
	e, err := engine.New(ctx, engine.Opts{DB: db, Connectors: reg, Policy: engine.PolicyFrom(cfg.Policy), Logger: logger,
		Events: bus, Repairer: authoring.RepairsFrom(model.RepairerFrom(cfg.Repair, cfg.LLM)), Accounts: accts, ConfigDigest: digest, Subscribers: front})
	if err != nil {
		return nil, nil, err
	}
	return e, bus, nil
}

// start starts an engine opened under claim, with its bus and the watch on
// the credentials file; gcIfConfig starts the daily gc when the config
// loads (the TUI; the daemon starts its own with the retention it serves).
func (s *Site) start(ctx context.Context, claim *Claim, e *engine.Engine, bus *engine.Bus, gcIfConfig bool) (*Got, error) {
	if err := e.Start(ctx); err != nil {
		return nil, err
	}
	if err := s.startBus(ctx, bus); err != nil {
		return nil, err
	}
	s.watchAccounts(ctx, e)
	g := &Got{API: wholeOf(e), Engine: e, claim: claim}
	if gcIfConfig {
		if cfg, err := s.Config(); err == nil {
			// the in-process engine may run for days too
			g.stopGC = e.GCDaily(ctx, engine.RetentionFrom(cfg.Retention), 24*time.Hour)
		}
	}
	return g, nil
}

// serveFrontEnd serves a front end's engine on the socket next to the
// database, as the daemon serves its own; a socket that cannot be served
// leaves the front end running, alone.
func (s *Site) serveFrontEnd(ctx context.Context, g *Got) {
	var retention engine.Retention
	if cfg, err := s.Config(); err == nil {
		retention = engine.RetentionFrom(cfg.Retention)
	}
	srv, err := Serve(ctx, maintainedOf(g.Engine, retention), SocketPath(s.o.DBPath), s.Logger())
	g.claim.Ready()
	if err != nil {
		s.Logger().Warn("other keep commands cannot reach this engine", "err", err)
		return
	}
	g.srv = srv
}

// startBus recovers and starts the event bus's dispatch loop for a
// long-running engine (the daemon, the TUI in-process).
func (s *Site) startBus(ctx context.Context, bus *engine.Bus) error {
	if _, err := bus.Recover(ctx); err != nil {
		return err
	}
	if err := bus.Start(ctx); err != nil {
		return err
	}
	s.onClose(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = bus.Stop(sctx)
	})
	return nil
}

// RunDaemon runs the engine without a UI, serving other keep processes on
// the socket next to the database, until ctx is done (SIGINT, SIGTERM).
func (s *Site) RunDaemon(ctx context.Context) error {
	g, err := s.Get(ctx, ForDaemon)
	if errors.Is(err, errStoppedWaiting) {
		return nil // stopped while waiting for the database: nothing to finish
	}
	if err != nil {
		return err
	}
	e, logger := g.Engine, s.Logger()
	// a config that changes (or SIGHUP) ends this daemon cleanly; main
	// starts it again on the new config (ReexecNote)
	ctx, reload := context.WithCancel(ctx)
	defer reload()
	s.WatchConfig(ctx, e, reload, true)
	stopCtx := context.WithoutCancel(ctx)
	stopEngine := func() error {
		sctx, cancel := context.WithTimeout(stopCtx, 5*time.Minute)
		defer cancel()
		return e.Stop(sctx)
	}
	cfg, err := s.Config()
	if err != nil {
		return errors.Join(err, stopEngine())
	}
	retention := engine.RetentionFrom(cfg.Retention)
	stopGC := e.GCDaily(ctx, retention, 24*time.Hour)
	defer stopGC()
	sock := SocketPath(s.o.DBPath)
	srv, err := Serve(ctx, maintainedOf(e, retention), sock, logger)
	if err != nil {
		return errors.Join(err, stopEngine())
	}
	g.claim.Ready()
	logger.Info("daemon started", "db", s.o.DBPath, "socket", sock)
	if note := ReloadedNote(); note != "" {
		logger.Info(note, "config", s.o.ConfigPath)
	}
	<-ctx.Done()
	logger.Info("daemon stopping")
	sctx, cancel := context.WithTimeout(stopCtx, 30*time.Second)
	defer cancel()
	err = errors.Join(srv.Close(sctx), stopEngine())
	if err != nil {
		logger.Error("daemon stopped with an error", "err", err)
		return err
	}
	logger.Info("daemon stopped")
	return nil
}
