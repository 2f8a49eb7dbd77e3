package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Outside a worker, a script's code runs only in worker processes: Load and
// Run hand the work to one from the pool (workers.go) and serve its host
// calls here. A worker that dies or outlives its time is killed and the run
// fails with a resource or time error; this process goes on.

// scriptKey names a file's source and load options, so a worker compiles a
// script once however many runs it serves.
func scriptKey(fileName string, src []byte, opts LoadOptions) string {
	h := sha256.New()
	o, _ := json.Marshal(opts)
	fmt.Fprintf(h, "%d:%s\x00%d:", len(fileName), fileName, len(src))
	h.Write(src)
	h.Write(o)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// loadMemory is the memory bound of the workers that load files. A file's
// top level only builds its declaration, but a load worker keeps the
// scripts it compiled, so the bound is a phase's less a margin, not a
// fraction of it: at 256 MB a worker that had loaded every connector's
// example ran out under a busy machine.
const loadMemory = 512 << 20

// loadSlots bounds the loads at once, whoever asks: each is a worker process
// that may grow to loadMemory, and loads come from outside the engine's own
// pace (deploys, proposals, mcp serve's validate, which a client may call
// forty times at once). A load waits for a slot at most as long as the
// loads before it take, each bounded by its time limit.
var loadSlots = make(chan struct{}, max(2, runtime.NumCPU()))

// loadRemote runs Load in a worker and builds the host's copy of the
// Script from what it found. The host's copy has no program: it runs
// nowhere but in workers.
func loadRemote(fileName string, src []byte, opts LoadOptions) (*Script, error) {
	loadSlots <- struct{}{}
	defer func() { <-loadSlots }()
	key := scriptKey(fileName, src, opts)
	f := &frame{Op: opLoad, Key: key, Script: &wireLoad{File: fileName, Source: src, Opts: opts}}
	// the hard bound of a load is startAllowance plus this
	lim := withDefaults(Limits{WallTime: loadWallTime})
	done, w, err := converse(context.Background(), f, nil, lim, loadMemory)
	if err != nil {
		if e, ok := err.(*Error); ok {
			if errors.Is(e, errTooDeep) {
				// nestingDiagnostic finds brackets nested too deep, with
				// their place; this is the rest (a run of operators, say)
				return nil, &ValidationError{Diagnostics: []Diagnostic{{File: fileName, Message: fmt.Sprintf(
					"nesting too deep: loading the file (parsing it, or its top level) grew the stack past %d MB", maxWorkerStack(loadMemory)>>20)}}}
			}
			// the file's top level broke a bound: say so as a diagnostic
			return nil, &ValidationError{Diagnostics: []Diagnostic{{File: fileName, Message: "the top level " + e.Message}}}
		}
		return nil, err
	}
	w.knows(key)
	procs.put(w)
	if done.Err != nil {
		return nil, done.Err.error(nil)
	}
	if done.Loaded == nil {
		return nil, fmt.Errorf("sandbox: the worker loaded %s but sent nothing back", fileName)
	}
	s := &Script{FileName: fileName, Source: src, Workflow: done.Loaded.Workflow, Capabilities: done.Loaded.Capabilities,
		Manifest: done.Loaded.Manifest, methods: methodTable(opts.Methods), handlers: map[string]handlerDecl{}, opts: opts, key: key}
	for name, d := range done.Loaded.Handlers {
		s.handlers[name] = handlerDecl{consumer: d.Consumer, publishes: d.Publishes, subscribe: d.Subscribe, at: d.At}
	}
	return s, nil
}

// runRemote runs one phase in a worker and gives its outcome to first. With
// then (RunThen), the worker runs that mutate phase after a prepare that
// reserved something, in the same job, and runRemote returns its outcome
// with ran true.
func (s *Script) runRemote(ctx context.Context, inv Invocation, then *Invocation, first func(out *Outcome, err error, then bool)) (out *Outcome, ran bool, err error) {
	r, err := s.newRun(inv)
	if err != nil {
		first(nil, err, false)
		return nil, false, nil
	}
	if err := ctx.Err(); err != nil {
		first(nil, r.finish(&Error{Kind: ErrCancelled, Message: "cancelled before it started", cause: err}), false)
		return nil, false, nil
	}
	f := &frame{Op: opRun, Key: s.key, Inv: &wireInv{Handler: inv.Handler, Phase: inv.Phase, State: inv.State,
		Prepared: inv.Prepared, MutationResult: inv.MutationResult, Limits: r.lim}}
	if pf, ok := inv.Host.(Prefetcher); ok && inv.Phase == PhasePrepare {
		// a failed read prefetches nothing: the phase's peeks ask the host
		f.Inv.Prefetched, _ = pf.Prefetch(ctx, PrefetchDepth)
	}
	var hostErrs hostErrors
	sides := []hostSide{{h: inv.Host, hostErrs: &hostErrs, wall: r.lim.WallTime, where: r.where()}}
	var r2 *run
	var thenErrs hostErrors
	if then != nil {
		if r2, err = s.newRun(*then); err != nil {
			first(nil, err, false) // nothing ran: the caller's invocation is wrong
			return nil, false, nil
		}
		f.Inv.Then = &wireInv{Handler: then.Handler, Phase: then.Phase, Limits: r2.lim}
		sides = append(sides, hostSide{h: then.Host, hostErrs: &thenErrs, wall: r2.lim.WallTime, where: r2.where()})
	}
	// the first phase's outcome, when the worker went on to the next
	var moved bool
	sides[0].ended = func(in *frame) {
		moved = true
		first(in.Outcome.outcome(), nil, true)
	}
	var done *frame
	var w *worker
	for resend := false; ; resend = true {
		done, w, err = converse(ctx, f, func(w *worker) {
			if resend || !w.known[s.key] {
				f.Script = &wireLoad{File: s.FileName, Source: s.Source, Opts: s.opts}
			} else {
				f.Script = nil
			}
		}, r.lim, r.lim.MaxMemory, sides...)
		if err != nil || !done.Missing || resend {
			break
		}
		delete(w.known, s.key)
		procs.put(w)
	}
	if err == nil {
		w.knows(s.key)
		procs.put(w)
	}
	at, errs := r, &hostErrs
	if moved {
		at, errs = r2, &thenErrs
	}
	switch {
	case err != nil:
		err = at.finish(err)
	case done.Err != nil:
		err = at.finish(done.Err.error(errs.all()))
	case done.Outcome == nil:
		err = fmt.Errorf("sandbox: the worker ended %s without an outcome", at.where())
	default:
		out = done.Outcome.outcome()
	}
	if !moved {
		first(out, err, false)
		return nil, false, nil
	}
	return out, true, err
}

// hostSide serves a worker's calls during one phase of a conversation.
type hostSide struct {
	h        Host
	hostErrs *hostErrors
	// wall is the phase's WallTime: a phase that follows another in the
	// same job ("prepared") is bounded from its start.
	wall time.Duration
	// ended takes the phase's "prepared" frame, when another phase follows.
	ended func(*frame)
	// where names the phase in its errors (run.where)
	where string
}

// hostErrors are a run's host errors, by index: a call's goroutine adds to
// them while the conversation goes on.
type hostErrors struct {
	mu   sync.Mutex
	errs []error
}

func (e *hostErrors) add(err error) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
	return len(e.errs)
}

func (e *hostErrors) all() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.errs
}

// There is no cap on the workers running at once: a phase's host call may
// wait on another phase (the engine's commits), and a phase that waited for
// a worker held by such a call would wait forever.

// jobs counts the conversations started with workers (Jobs); calls, the
// host calls they made, for the tests of what costs one.
var jobs, calls atomic.Int64

// Jobs is how many conversations this process has started with workers: a
// load, a phase, or a prepare with the mutate it went on to (RunThen). Each
// costs a frame each way and a wake-up of a worker and of the host.
func Jobs() int64 { return jobs.Load() }

// busy counts the workers in a conversation now; busyPeak, the most at once
// since BusyPeak last read it.
var busy, busyPeak atomic.Int64

// BusyPeak is the most workers this process had in a conversation at once
// since the last call (for the tests of how many run at once); it starts
// counting again from those busy now.
func BusyPeak() int64 { return busyPeak.Swap(busy.Load()) }

func busyAdd(d int64) {
	n := busy.Add(d)
	for p := busyPeak.Load(); n > p && !busyPeak.CompareAndSwap(p, n); p = busyPeak.Load() {
	}
}

// startAllowance bounds what a worker takes to start and compile a script
// before a run starts: the load's own wall time and a margin.
const startAllowance = loadWallTime + 5*time.Second

// converse sends f to a worker of the pool and serves it until it is done.
// prepare adjusts f for the worker taken. A worker that dies, or runs past
// lim.WallTime and the grace after it, is killed, and the error says why;
// the worker of a "done" frame is returned for the caller to put back.
//
// The conversation reads the worker's frames itself, and a call's reply is
// written by the goroutine that served it: a frame wakes one goroutine, not
// a reader that hands it on. The bounds are timers that kill the worker,
// which ends its pipe and so the read.
func converse(ctx context.Context, f *frame, prepare func(*worker), lim Limits, memLimit uint64, host ...hostSide) (*frame, *worker, error) {
	w, err := sendJob(f, prepare, memLimit)
	if err != nil {
		return nil, nil, err
	}
	busyAdd(1)
	defer busyAdd(-1)
	cv := &conversation{ctx: ctx, w: w, lim: lim, host: host}
	defer cv.bound(f.Script != nil)()
	defer cv.endCalls()
	for {
		in, err := readFrame(w.r)
		var bad *malformedFrame
		if errors.As(err, &bad) && cv.why.Load() == nil {
			// a worker that writes what is not a frame is out of step, or
			// not the worker this process started: it goes
			return nil, nil, cv.fail(&Error{Kind: ErrResource, Message: "the script's worker sent a frame that could not be read: " + bad.Error(), cause: bad})
		}
		if err != nil {
			return nil, nil, cv.broke()
		}
		done, err := cv.serve(in)
		if err != nil {
			return nil, nil, err
		}
		if done {
			return in, w, nil
		}
	}
}

// sendJob gives f to a worker of the pool, prepared for it; a worker that
// died while idle is replaced once.
func sendJob(f *frame, prepare func(*worker), memLimit uint64) (*worker, error) {
	w, err := procs.take(memLimit)
	if err != nil {
		return nil, err
	}
	jobs.Add(1)
	if prepare != nil {
		prepare(w)
	}
	if err := w.send(f); err != nil {
		// a worker that died while idle: one more try with a new one
		w.kill()
		if w, err = startWorker(memLimit); err != nil {
			return nil, err
		}
		if prepare != nil {
			prepare(w)
		}
		if err := w.send(f); err != nil {
			return nil, w.death()
		}
	}
	return w, nil
}

// conversation is one job's exchange with a worker, as converse serves it.
type conversation struct {
	ctx  context.Context
	w    *worker
	lim  Limits
	host []hostSide
	cur  int // the phase under way: its host serves the calls

	hard *time.Timer           // the job's hard bound: it kills the worker
	why  atomic.Pointer[Error] // set when a bound, not the worker, ended it
	// pending counts the calls not yet answered. A call's goroutine counts
	// itself out before it writes the reply: the worker goes on only once it
	// has the reply, so by its "done" nothing is pending unless it gave up.
	pending atomic.Int32
	// calls is the context of the phase's calls, with the worker's
	// deadline for the phase (callsAt); only the conversation's goroutine
	// sets it
	calls       context.Context
	callsAt     int64
	callsCancel context.CancelFunc
}

// callsCtx is the context a call with the worker's deadline runs in: the
// worker's phase deadline, so both sides see the same timeout. It is made
// once for the calls of a phase, not for each: a deadline is a timer, and
// adding one wakes the runtime's poller and a thread to look at it.
func (cv *conversation) callsCtx(deadline int64) context.Context {
	if deadline <= 0 {
		return cv.ctx
	}
	if cv.calls == nil || cv.callsAt != deadline {
		cv.endCalls() // a phase ends with none of its calls pending
		cv.calls, cv.callsCancel = context.WithDeadline(cv.ctx, time.Unix(0, deadline))
		cv.callsAt = deadline
	}
	return cv.calls
}

// endCalls ends the context of the last phase's calls.
func (cv *conversation) endCalls() {
	if cv.callsCancel != nil {
		cv.callsCancel()
		cv.calls, cv.callsCancel = nil, nil
	}
}

// bound starts the job's bounds and returns what stops them. A worker that
// gets the script with the job compiles it first (and may be starting): the
// hard bound then counts from its "started", and the load-time bounds cover
// what comes before. A worker that has the script sends no "started", so a
// phase costs one frame less each way.
func (cv *conversation) bound(compiles bool) (stop func()) {
	bound := cv.lim.WallTime + abandonGrace
	if compiles {
		bound += startAllowance
	}
	cv.hard = time.AfterFunc(bound, func() {
		cv.killFor(&Error{Kind: ErrTimeout, Message: fmt.Sprintf("script exceeded its time limit (%s) and did not stop inside a built-in call; abandoned (its worker was killed)", cv.lim.WallTime), cause: context.DeadlineExceeded})
	})
	var abandon atomic.Pointer[time.Timer]
	stopWatch := context.AfterFunc(cv.ctx, func() {
		cv.w.cancel()
		abandon.Store(time.AfterFunc(abandonGrace, func() {
			cv.killFor(&Error{Kind: ErrCancelled, Message: "cancelled; the script did not stop inside a built-in call and was abandoned (its worker was killed)", cause: cv.ctx.Err()})
		}))
	})
	return func() {
		if !stopWatch() {
			// the cancel ran, or runs now: wait for its timer, then stop it
			for abandon.Load() == nil {
				runtime.Gosched()
			}
			abandon.Load().Stop()
		}
		cv.hard.Stop()
	}
}

func (cv *conversation) killFor(e *Error) {
	cv.why.CompareAndSwap(nil, e)
	cv.w.kill()
}

// fail ends the conversation on err, with the worker gone.
func (cv *conversation) fail(err error) error {
	cv.w.kill()
	<-cv.w.exited
	return err
}

// broke says why the worker's pipe ended: a bound killed it, a cancel
// ended it (it may have been starting, before it listened for the signal),
// or it died.
func (cv *conversation) broke() error {
	if e := cv.why.Load(); e != nil {
		<-cv.w.exited
		return e
	}
	if err := cv.ctx.Err(); err != nil {
		return cv.fail(&Error{Kind: ErrCancelled, Message: "cancelled", cause: err})
	}
	return cv.w.death()
}

// serve takes one frame from the worker; done says it ended the job.
func (cv *conversation) serve(in *frame) (done bool, err error) {
	switch in.Op {
	case opDone:
		cv.done(in)
		return true, nil
	case opStarted:
		cv.hard.Reset(cv.lim.WallTime + abandonGrace)
	case opPrepared:
		return false, cv.prepared(in)
	case opLog:
		if len(cv.host) > 0 {
			var a logArgs
			if json.Unmarshal(in.Args, &a) == nil {
				cv.host[cv.cur].h.Log(a.Level, a.Line)
			}
		}
	case opCall:
		cv.call(in)
	default:
		return false, cv.fail(fmt.Errorf("sandbox: the worker sent an unknown frame %q", in.Op))
	}
	return false, nil
}

// done takes the publishes the worker told with its end (a refusal fails
// the phase) and settles what becomes of the worker.
func (cv *conversation) done(in *frame) {
	if len(in.Told) > 0 && in.Err == nil && cv.cur < len(cv.host) {
		side := cv.host[cv.cur]
		if in.Err = takeTold(cv.ctx, side.h, in.Told, side.hostErrs, side.where+": "); in.Err != nil {
			in.Outcome = nil
		}
	}
	if in.Retire {
		cv.w.kill()
		<-cv.w.exited
	}
	if cv.pending.Load() > 0 {
		// a call still unanswered: the worker gave up on it, and its reply
		// must not reach the worker's next run
		cv.w.broken.Store(true)
	}
}

// prepared: the worker ended one phase and runs the next. Calls and log
// lines from now on are the next's, and so is the bound.
func (cv *conversation) prepared(in *frame) error {
	if cv.cur+1 >= len(cv.host) || cv.host[cv.cur].ended == nil || in.Outcome == nil {
		return cv.fail(errors.New("sandbox: the worker went on to a phase it was not given"))
	}
	if cv.pending.Load() > 0 {
		// a call of the phase still unanswered: its reply would reach the
		// next phase
		return cv.fail(errors.New("sandbox: the worker ended a phase with a call unanswered"))
	}
	cv.hard.Reset(cv.host[cv.cur+1].wall + abandonGrace)
	cv.host[cv.cur].ended(in)
	cv.cur++
	return nil
}

// call serves one host call. A call of keep's own state (hostCall.own) is
// served here, on the goroutine that read its frame: the worker sends
// nothing more until it has the reply, and handing the call on would wake
// another thread to run it, every call (a producer's registerInput, one a
// file). Any other, which may wait outside keep, runs on a goroutine of its
// own (Go), so it cannot hold the run past its time.
func (cv *conversation) call(in *frame) {
	if len(cv.host) == 0 {
		_ = cv.w.send(&frame{Op: opReply, Err: &wireErr{Text: "sandbox: a host call during a load"}})
		return
	}
	calls.Add(1)
	cv.pending.Add(1)
	side := cv.host[cv.cur]
	cctx := cv.callsCtx(in.Deadline)
	serve := func() {
		rep := serveCall(cctx, side.h, in, side.hostErrs)
		cv.pending.Add(-1)
		if err := cv.w.send(rep); err != nil {
			cv.w.kill() // the read then ends, and says why
		}
	}
	if c, ok := hostCalls[in.Name]; ok && c.own {
		serve()
		return
	}
	Go(serve)
}
