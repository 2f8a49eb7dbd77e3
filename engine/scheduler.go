package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"keep/sandbox"
	"keep/storage"
)

// Start launches one scheduler goroutine per workflow. Each sleeps on its
// own timer (the earliest next_run_at, wakeAt, back-off or reconciliation
// deadline) and on a wake channel; nothing polls (watchClock waits for
// the kernel's notice that the clock was set).
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("engine: already started")
	}
	e.started = true
	e.runCtx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	e.folders = newFolders(e)
	e.mu.Unlock()
	wfs, err := e.db.Read().Workflows(ctx)
	if err != nil {
		return err
	}
	for _, w := range wfs {
		e.launch(w.ID)
	}
	e.wg.Add(1)
	mono, wall := time.Now(), e.now().Round(0) // Round(0): the wall reading alone
	go func() {
		defer e.wg.Done()
		e.watchClock(e.runCtx, mono, wall)
	}()
	return nil
}

// clockCheck is how often watchClock compares the wall clock with the
// monotonic one where the system gives no notice of the clock being set
// (clockSets), and clockSlack how far they may drift apart meanwhile.
const (
	clockCheck = time.Minute
	clockSlack = 5 * time.Second
)

// watchClock wakes every workflow's loop when the wall clock jumps: a
// machine suspended and resumed, or its clock set by hand. A loop's timer
// runs on the monotonic clock, which on Linux stops while the machine is
// suspended, so after a week asleep a timer armed for a day's cron tick
// would fire a day after the resume, not at once; a clock set back would
// leave it armed for a time that is now later, and the times it stored
// reckoned from a clock now behind (clampSchedules brings them back).
// Woken, each loop reads its deadlines against e.now() again: what came
// due meanwhile runs (once: a producer's next run is reckoned from the
// time it ran) and the timer is armed anew. It waits for the kernel's
// notice that the clock was set (clockSets, Linux: nothing polls), or
// elsewhere looks once a clockCheck, and reads nothing else unless the
// clock jumped. mono and wall are the two clocks as Start read them.
func (e *Engine) watchClock(ctx context.Context, mono, wall time.Time) {
	var tick <-chan time.Time
	sets, err := clockSets(ctx)
	if every := e.clockCheck; every > 0 || err != nil {
		if every <= 0 {
			every = clockCheck
		}
		t := time.NewTicker(every) // tests, whose clock the kernel does not see set; or no notice here
		defer t.Stop()
		tick, sets = t.C, nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case _, ok := <-sets:
			if !ok { // ended with ctx, or its timer could not be armed again
				if ctx.Err() != nil {
					return
				}
				t := time.NewTicker(clockCheck)
				defer t.Stop()
				tick, sets = t.C, nil
				continue
			}
		}
		nowMono, nowWall := time.Now(), e.now().Round(0)
		if d := nowWall.Sub(wall) - nowMono.Sub(mono); d > clockSlack || d < -clockSlack {
			e.log.Info("the wall clock jumped; every workflow looks at its timers again", "by", d)
			e.clampAll(ctx)
			if e.events != nil {
				// the bus brings back reminders made under the clock before
				// (bus.clampIfSetBack) at its next pass: now, not at its poll
				e.events.Wake()
			}
			e.mu.Lock()
			for _, ws := range e.wfs {
				ws.poke()
			}
			e.mu.Unlock()
		}
		mono, wall = nowMono, nowWall
	}
}

// Stop lets every workflow finish or park the run in hand, then returns.
// A mutation in flight is never interrupted (perform ignores cancellation).
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	if !e.started {
		e.mu.Unlock()
		return nil
	}
	e.cancel()
	f := e.folders
	e.folders = nil
	e.mu.Unlock()
	f.close()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Engine) launch(id int64) {
	ws := e.state(id)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_ = e.loop(e.runCtx, ws, false)
	}()
}

// clampAll is clampSchedules for every workflow (its failures logged: the
// next jump, or the next start, tries again).
func (e *Engine) clampAll(ctx context.Context) {
	wfs, err := e.db.Read().Workflows(ctx)
	if err != nil {
		e.log.Error("reading workflows after a clock jump", "err", err)
		return
	}
	for _, w := range wfs {
		if w.Version == 0 {
			continue
		}
		sc, err := e.script(ctx, w.ID, w.Version)
		if err == nil {
			err = e.clampSchedules(ctx, w, sc)
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("bringing schedules back after a clock jump", "workflow", w.Name, "err", err)
		}
	}
}

// loop is one workflow's scheduler: it does what is due, one step at a
// time. Started (drain false), it then sleeps on its timer and wake channel
// until ctx ends; draining, it returns as soon as nothing is due now
// (future timers don't count). A failed step blocks the workflow as an
// internal error instead of spinning on it; drain also returns it.
func (e *Engine) loop(ctx context.Context, ws *wfState, drain bool) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	// runs handed off (concurrent.go) finish or park before the loop returns
	defer ws.hand.wait()
	var errs []error
	for {
		// taken before the step's snapshot (as step takes hand.now): a run
		// in hand that ends after the snapshot and before the count below
		// would otherwise leave a consumer the snapshot saw as full, and a
		// drain would stop with work due; its end pokes the loop
		busy := ws.hand.count() > 0
		did, next, err := e.step(ctx, ws)
		if err != nil && ctx.Err() == nil {
			e.log.Error("scheduler step failed", "workflow", ws.id, "err", err)
			e.internalBlock(ctx, ws.id, err)
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, ctx.Err())...)
		}
		if did {
			continue
		}
		if e.idleStep != nil {
			e.idleStep(ws)
		}
		// runs in hand: the end of each wakes the loop, which may start
		// another; nothing is idle yet
		inHand := busy || ws.hand.count() > 0
		if !inHand {
			// nothing more to do now: what the last runs committed unsynced
			// goes to the disk before the loop waits
			if err := e.db.Sync(ctx); err != nil {
				e.log.Error("sync failed", "workflow", ws.id, "err", err)
				errs = append(errs, err)
			}
			if drain {
				return errors.Join(errs...)
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if next != nil && !(drain && inHand) {
			d := max(next.Sub(e.now()), time.Millisecond)
			timer.Reset(d)
			if e.armed != nil {
				e.armed(ws, d)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ws.wake:
		case <-timer.C:
		}
	}
}

// Drain runs every workflow until nothing is due now (future timers don't
// count), then returns. It is the daemon's scheduler — one loop per
// workflow, all at once (DESIGN.md §4) — that stops when idle instead of
// sleeping: `keep drain`, and the way tests step the engine under an
// injected clock.
func (e *Engine) Drain(ctx context.Context) error {
	wfs, err := e.db.Read().Workflows(ctx)
	if err != nil {
		return err
	}
	errs := make([]error, len(wfs))
	var wg sync.WaitGroup
	for i, w := range wfs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.loop(ctx, e.state(w.ID), true); err != nil {
				errs[i] = fmt.Errorf("workflow %s: %w", w.Name, err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		// a drain that ran out of time names what was still running, so
		// the person can look at it (keep runs, keep logs) and not guess
		var busy []string
		for i, err := range errs {
			if errors.Is(err, ctx.Err()) {
				busy = append(busy, wfs[i].Name)
			}
		}
		if len(busy) > 0 {
			return &StillRunningError{Workflows: busy, Err: ctx.Err()}
		}
	}
	return errors.Join(errs...)
}

// StillRunningError is a Drain that ran out of time: the workflows whose
// runs were still going. It wraps the context's error.
type StillRunningError struct {
	Workflows []string
	Err       error
}

func (e *StillRunningError) Error() string {
	return "still running: " + strings.Join(e.Workflows, ", ")
}

func (e *StillRunningError) Unwrap() error { return e.Err }

// carryOn follows an answer that may have left a run active (retry,
// resume, approve, reject, resolve). With the scheduler running it wakes
// the workflow; without one (a command and no daemon) it runs the active
// run to its end — committed, failed or paused — in this engine, so the
// answer never leaves a run active for the next start to find crashed.
func (e *Engine) carryOn(ctx context.Context, ws *wfState) error {
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	if started {
		ws.poke()
		return nil
	}
	// several runs may be active (a concurrent consumer): each is carried
	// on, those handed off are waited for; nothing new is started
	defer ws.hand.wait()
	for {
		runs, err := e.db.Read().ActiveRunRefs(ctx, ws.id)
		if err != nil {
			return err
		}
		runs = slices.DeleteFunc(runs, func(r storage.ActiveRunRef) bool { return ws.hand.inHand(r.ID) })
		if len(runs) == 0 {
			if ws.hand.count() == 0 {
				return nil
			}
			ws.hand.wait()
			continue
		}
		did, _, err := e.step(ctx, ws)
		if err != nil || !did {
			return err
		}
	}
}

// NextDue reports the earliest time anything of any workflow becomes due,
// nil when nothing is scheduled (tests advance their clock to it).
func (e *Engine) NextDue(ctx context.Context) (*time.Time, error) {
	wfs, err := e.db.Read().Workflows(ctx)
	if err != nil {
		return nil, err
	}
	var best *time.Time
	for _, w := range wfs {
		ws := e.state(w.ID)
		inHand, starting := ws.hand.now(), ws.hand.withStarting()
		sr, err := e.db.Read().StepReads(ctx, w.ID)
		if errors.Is(err, storage.ErrNotFound) {
			continue // removed since the list was read
		}
		if err != nil {
			return nil, err
		}
		sr.Active = starting(sr.Active)
		_, next, err := e.due(ctx, e.db.Read(), ws, sr, inHand)
		if err != nil {
			return nil, err
		}
		best = earliest(best, next)
	}
	return best, nil
}

func earliest(a, b *time.Time) *time.Time {
	if a == nil {
		return b
	}
	if b == nil || a.Before(*b) {
		return a
	}
	return b
}

// work is the one thing a workflow should do next.
type work struct {
	kind     workKind
	run      *storage.Run
	mutation *storage.Mutation
	handler  string
	trigger  string
	// state: a consumer's handler state, read with the rest of the step
	state *knownState
}

// step does the one thing due now for a workflow, if any. It reports
// whether it did something and, if not, when something next becomes due.
func (e *Engine) step(ctx context.Context, ws *wfState) (bool, *time.Time, error) {
	// one step at a time per workflow, whoever steps it (a loop, an answer)
	ws.stepMu.Lock()
	defer ws.stepMu.Unlock()
	w, wk, next, err := e.snapshot(ctx, ws)
	if err != nil {
		return false, nil, err
	}
	if f := e.watching(); f != nil && w != nil {
		// a deploy's new folders are watched from its first step; one that
		// could not be, or is no longer the folder named, is tried again
		// at the producer's next run not woken by a watch (its schedule,
		// or run-now)
		f.update(ctx, ws, w, wk != nil && wk.kind == workProducer && wk.trigger != "watch")
	}
	if wk == nil {
		return false, next, nil
	}
	ws.setRunning(true)
	defer ws.setRunning(false)
	return true, nil, e.do(ctx, ws, w, wk)
}

// snapshot reads what the step does: the workflow, the work due (nil when
// nothing is, and then when something next becomes due) and, for a
// consumer's run, what its prepare starts with.
func (e *Engine) snapshot(ctx context.Context, ws *wfState) (w *storage.Workflow, wk *work, next *time.Time, err error) {
	w, wk, next, err = e.snapshotOnce(ctx, ws)
	var load scriptNotLoaded
	if errors.As(err, &load) {
		// compiled outside the writer lock, which the snapshot holds
		if _, err := e.script(ctx, ws.id, load.version); err != nil {
			return nil, nil, nil, err
		}
		w, wk, next, err = e.snapshotOnce(ctx, ws)
	}
	return w, wk, next, err
}

// scriptNotLoaded: the snapshot found the workflow at a version whose
// script is not loaded yet.
type scriptNotLoaded struct{ version int }

func (s scriptNotLoaded) Error() string {
	return fmt.Sprintf("script version %d is not loaded", s.version)
}

func (e *Engine) snapshotOnce(ctx context.Context, ws *wfState) (w *storage.Workflow, wk *work, next *time.Time, err error) {
	// Every read that decides the step, and the picked consumer's state,
	// in one state of the database: read on the writer connection, with
	// no commit in between (storage.ReadLatest), whose page cache holds
	// what the runs' writes just touched, where a read connection's is
	// emptied by every commit. The engine is the one writer of its
	// workflow, so the state, and what the consumer's peeks find, are what
	// prepare would read when it starts.
	inHand := ws.hand.now()            // before the snapshot: see hand.now
	claimed := ws.hand.claimed()       // and hand.claimed
	starting := ws.hand.withStarting() // and hand.withStarting
	err = e.db.ReadLatest(ctx, func(q storage.Q) error {
		// the workflow, its schedules and its active runs: one statement
		sr, err := q.StepReads(ctx, ws.id)
		if err != nil {
			return err
		}
		sr.Active = starting(sr.Active)
		if w = sr.Workflow; w.Status != WorkflowActive {
			return nil
		}
		if !e.scriptLoaded(w.ID, w.Version) {
			// loading compiles the script: not while every write waits
			return scriptNotLoaded{w.Version}
		}
		if wk, next, err = e.due(ctx, q, ws, sr, inHand); err != nil || wk == nil || wk.kind != workConsumer {
			return err
		}
		sc, err := e.scriptIn(ctx, q, w.ID, w.Version)
		if err != nil {
			return err
		}
		c, ok := consumerNamed(sc, wk.handler)
		if !ok || len(c.Subscribe) == 0 {
			state, err := q.HandlerState(ctx, w.ID, wk.handler)
			if err != nil {
				return fmt.Errorf("%w: %w", errReadState, err)
			}
			wk.state = &knownState{state: state}
			return nil
		}
		var skip map[int64]int64
		if c.Concurrency > 1 { // claimsOf: only a concurrent consumer's prepare skips them
			skip = claimed
		}
		// the state with the first topic's peek, in one statement; for a
		// concurrent consumer of one topic, with the events the next run's
		// prepare, started ahead, is offered (ahead.go)
		depth := sandbox.PrefetchDepth
		if c.Concurrency > 1 && len(c.Subscribe) == 1 {
			depth *= 2
		}
		state, first, err := q.StateAndPeek(ctx, w.ID, wk.handler, c.Subscribe[0], depth, len(skip), skipping(skip))
		if err != nil {
			return fmt.Errorf("%w: %w", errReadState, err)
		}
		wk.state = &knownState{state: state}
		if len(first) > sandbox.PrefetchDepth {
			wk.state.following, wk.state.followingTopic = first[sandbox.PrefetchDepth:], c.Subscribe[0]
			first = first[:sandbox.PrefetchDepth]
		}
		// a failed read prefetches nothing: prepare reads for itself
		if pre, ids, err := prefetchFrom(ctx, q, w.ID, c.Subscribe, first, sandbox.PrefetchDepth, skip); err == nil {
			wk.state.prefetch, wk.state.pending = pre, ids
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return w, wk, next, nil
}

// due decides what, if anything, is due now (chapter 16 "Scheduler Logic"):
// a run to continue first, then whatever ends a block, then consumers
// (oldest pending event first), then producers.
// It decides on sr, the workflow, its schedules and active runs read in
// q's snapshot, and reads anything more through q; inHand is the runs
// under way in goroutines of their own (concurrent.go), taken before q's
// snapshot.
func (e *Engine) due(ctx context.Context, q storage.Q, ws *wfState, sr storage.StepReads, inHand map[int64]bool) (*work, *time.Time, error) {
	now := e.now()
	w, active := sr.Workflow, sr.Active
	for _, ref := range active {
		if inHand[ref.ID] {
			continue // concurrent.go: under way in its own goroutine
		}
		run, err := q.RunByID(ctx, ref.ID)
		if err != nil {
			return nil, nil, err
		}
		if w.BlockKind != BlockNone && run.HandlerType == "consumer" {
			// a concurrent consumer's run parked at its checkpoint while
			// another run's block stands goes on when the block lifts
			sc, err := e.scriptIn(ctx, q, w.ID, w.Version)
			if err != nil {
				return nil, nil, err
			}
			if concurrencyOf(sc, run.Handler) > 1 {
				continue
			}
		}
		return &work{kind: workContinue, run: run}, nil, nil
	}
	switch w.BlockKind {
	case "":
	case BlockTransient, BlockReconciliation:
		if w.BlockRunID != 0 {
			run, err := q.RunByID(ctx, w.BlockRunID)
			if err != nil {
				return nil, nil, err
			}
			if run.MutationID != 0 {
				m, err := q.MutationByID(ctx, run.MutationID)
				if err != nil {
					return nil, nil, err
				}
				if (m.Status == MutationInFlight || m.Status == MutationNeedsReconcile) && m.NextAttemptAt != nil {
					if m.NextAttemptAt.After(now) {
						return nil, m.NextAttemptAt, nil
					}
					kind := workReconcile
					if m.Status == MutationInFlight {
						kind = workResend
					}
					return &work{kind: kind, run: run, mutation: m}, nil, nil
				}
			}
		}
		if w.BlockKind == BlockTransient && w.RetryAt != nil {
			if w.RetryAt.After(now) {
				return nil, w.RetryAt, nil
			}
			return &work{kind: workUnblock}, nil, nil
		}
		return nil, nil, nil
	default:
		return nil, nil, nil // waits on the user
	}
	sc, err := e.scriptIn(ctx, q, w.ID, w.Version)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]storage.Schedule{}
	for _, s := range sr.Schedules {
		byName[s.Handler] = s
	}
	var next *time.Time
	type candidate struct {
		wk        *work
		subscribe []string
	}
	var ready []candidate
	for _, c := range sc.Workflow.Consumers {
		if activeOf(active, c.Name) >= max(c.Concurrency, 1) {
			continue // its runs under way end by waking the loop
		}
		s := byName[c.Name]
		woke := s.WakeAt != nil && !s.WakeAt.After(now)
		if !ws.isDirty(c.Name) && !woke {
			next = earliest(next, s.WakeAt)
			continue
		}
		trigger := "event"
		if woke {
			trigger = "wakeAt"
		}
		trigger = ws.triggerOf(c.Name, trigger)
		ready = append(ready, candidate{&work{kind: workConsumer, handler: c.Name, trigger: trigger}, c.Subscribe})
	}
	if len(ready) == 1 {
		return ready[0].wk, nil, nil // nothing to rank it against
	}
	var pick *work
	var pickOldest int64
	for _, c := range ready {
		oldest, err := q.OldestPending(ctx, w.ID, c.subscribe)
		if err != nil {
			return nil, nil, err
		}
		// among due consumers, the one with the oldest pending event first;
		// one woken by its clock with nothing pending comes after those
		rank := oldest
		if rank == 0 {
			rank = 1<<62 - 1
		}
		if pick == nil || rank < pickOldest {
			pick, pickOldest = c.wk, rank
		}
	}
	if pick != nil {
		return pick, nil, nil
	}
	for _, p := range sc.Workflow.Producers {
		s := byName[p.Name]
		if ws.isQueued(p.Name) {
			return &work{kind: workProducer, handler: p.Name, trigger: "run-now"}, nil, nil
		}
		if e.watching().isWoken(w.ID, p.Name) {
			return &work{kind: workProducer, handler: p.Name, trigger: "watch"}, nil, nil
		}
		if s.NextRunAt != nil && !s.NextRunAt.After(now) {
			return &work{kind: workProducer, handler: p.Name, trigger: ws.triggerOf(p.Name, "schedule")}, nil, nil
		}
		next = earliest(next, s.NextRunAt)
	}
	return nil, next, nil
}

func (e *Engine) do(ctx context.Context, ws *wfState, w *storage.Workflow, wk *work) error {
	switch wk.kind {
	case workContinue:
		if run := wk.run; run.HandlerType == "consumer" && run.Phase != PhasePreparing {
			sc, err := e.script(ctx, w.ID, run.ScriptVersion)
			if err == nil && concurrencyOf(sc, run.Handler) > 1 {
				// concurrent.go: it goes on beside the others
				e.handOff(ctx, ws, w, run, nil, func(ctx context.Context, w *storage.Workflow) error {
					return e.continueRun(ctx, ws, w, run)
				})
				return nil
			}
		}
		return e.continueRun(ctx, ws, w, wk.run)
	case workUnblock:
		return e.tUnblock(ctx, w, "retry", false) // the consumers marked (ledger.Unblock)
	case workReconcile:
		return e.reconcile(ctx, ws, w, wk.mutation)
	case workResend:
		tr := e.newTrace()
		if err := e.tInFlight(ctx, w, wk.run, wk.mutation, tr, nil, nil); err != nil {
			return err
		}
		if err := e.tSetBlockCleared(ctx, w); err != nil {
			return err
		}
		return e.perform(ctx, ws, w, wk.run, wk.mutation, tr)
	}
	sc, err := e.script(ctx, w.ID, w.Version)
	if err != nil {
		return err
	}
	switch wk.kind {
	case workConsumer:
		if c, ok := consumerNamed(sc, wk.handler); ok {
			return e.runConsumer(ctx, ws, w, sc, c, wk.trigger, wk.state)
		}
	case workProducer:
		for _, p := range sc.Workflow.Producers {
			if p.Name == wk.handler {
				return e.runProducer(ctx, ws, w, sc, p, wk.trigger)
			}
		}
	}
	return fmt.Errorf("no handler %q in version %d", wk.handler, w.Version)
}
