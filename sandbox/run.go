package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/dop251/goja"
)

// abandonGrace is how long Run waits, after interrupting a runtime at its
// deadline, before giving up on it. An interrupt only takes effect between
// JS instructions; a script stuck inside one native call (a pathological
// regular expression) would otherwise hold the engine forever.
const abandonGrace = 2 * time.Second

// errTerminal marks the terminal mutation call: the run stopped on purpose.
var errTerminal = errors.New("terminal mutation call")

// run is one handler phase in its own runtime.
type run struct {
	s    *Script
	inv  Invocation
	lim  Limits
	decl handlerDecl
	hctx context.Context // host calls: the phase deadline (goja.md fact 7)

	*fresh   // the runtime, its supervisor, its encodings and what Keep.workflow got (pool.go)
	mutation *MutationCall
	trace    traceBudget
}

// Run runs one handler phase in a fresh runtime. See api.go for the
// contract. A Script holds its compiled program only where it was loaded in
// this process, which outside tests is a worker; the host's copies hold
// none and run in a worker (remote.go).
func (s *Script) Run(ctx context.Context, inv Invocation) (*Outcome, error) {
	if s.program == nil {
		var out *Outcome
		var err error
		s.runRemote(ctx, inv, nil, func(o *Outcome, e error, _ bool) { out, err = o, e })
		return out, err
	}
	return s.runHere(ctx, inv)
}

// runHere runs one handler phase in this process: the worker's side of Run.
func (s *Script) runHere(ctx context.Context, inv Invocation) (*Outcome, error) {
	r, err := s.newRun(inv)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, r.finish(&Error{Kind: ErrCancelled, Message: "cancelled before it started", cause: err})
	}
	return r.start(ctx, runtimes.take(keyOf(r.lim)))
}

// newRun checks inv and makes the run of it, without a runtime yet.
func (s *Script) newRun(inv Invocation) (*run, error) {
	decl, ok := s.handlers[inv.Handler]
	switch {
	case !ok:
		return nil, fmt.Errorf("sandbox: %s declares no handler %q", s.FileName, inv.Handler)
	case inv.Host == nil:
		return nil, errors.New("sandbox: Invocation.Host is nil")
	case inv.Phase == PhaseProducer && decl.consumer,
		inv.Phase != PhaseProducer && !decl.consumer:
		return nil, fmt.Errorf("sandbox: %q has no %s phase", inv.Handler, inv.Phase)
	case inv.Phase != PhaseProducer && inv.Phase != PhasePrepare && inv.Phase != PhaseMutate && inv.Phase != PhaseNext:
		return nil, fmt.Errorf("sandbox: unknown phase %q", inv.Phase)
	}
	return &run{s: s, inv: inv, lim: withDefaults(inv.Limits), decl: decl}, nil
}

// start runs r in f, a runtime nobody used, on a goroutine of its own, and
// gives up on it when it outlives its wall time.
func (r *run) start(ctx context.Context, f *fresh) (*Outcome, error) {
	if err := f.bind(r); err != nil {
		return nil, err
	}
	r.fresh = f
	type result struct {
		out *Outcome
		err error
	}
	done := make(chan result, 1)
	Go(func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{nil, fmt.Errorf("sandbox: panic in host code: %v", p)}
			}
		}()
		out, err := r.execute(ctx)
		done <- result{out, err}
	})

	hard := time.NewTimer(r.lim.WallTime + abandonGrace)
	defer hard.Stop()
	var afterCancel <-chan time.Time
	ctxDone := ctx.Done()
	for {
		select {
		case res := <-done:
			return res.out, res.err
		case <-ctxDone:
			ctxDone, afterCancel = nil, time.After(abandonGrace)
		case <-afterCancel:
			r.sup.close()
			return nil, r.finish(&Error{Kind: ErrCancelled, Message: "cancelled; the script did not stop inside a built-in call and was abandoned", cause: ctx.Err(), abandoned: true})
		case <-hard.C:
			r.sup.close()
			return nil, r.finish(&Error{Kind: ErrTimeout, Message: fmt.Sprintf("script exceeded its time limit (%s) and did not stop inside a built-in call; abandoned", r.lim.WallTime), cause: context.DeadlineExceeded, abandoned: true})
		}
	}
}

// withDefaults fills the zero fields of l from DefaultLimits, so a zero
// Limits never means "unlimited".
func withDefaults(l Limits) Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	if l.WallTime <= 0 {
		l.WallTime = d.WallTime
	}
	if l.MaxHeapGrowth == 0 {
		l.MaxHeapGrowth = d.MaxHeapGrowth
	}
	if l.MaxMemory == 0 {
		l.MaxMemory = d.MaxMemory
	}
	fill(&l.MaxStackDepth, d.MaxStackDepth)
	fill(&l.MaxState, d.MaxState)
	fill(&l.MaxPayload, d.MaxPayload)
	fill(&l.MaxData, d.MaxData)
	fill(&l.MaxResult, d.MaxResult)
	fill(&l.MaxParams, d.MaxParams)
	fill(&l.MaxField, d.MaxField)
	fill(&l.MaxLogLine, d.MaxLogLine)
	fill(&l.MaxLogLines, d.MaxLogLines)
	fill(&l.MaxLogBytes, d.MaxLogBytes)
	fill(&l.MaxPeek, d.MaxPeek)
	fill(&l.DefaultPeek, d.DefaultPeek)
	return l
}

func (r *run) execute(ctx context.Context) (*Outcome, error) {
	r.installConsole()

	stopWatch, hctx := r.sup.watch(ctx, r.lim.WallTime, r.lim.MaxHeapGrowth)
	defer stopWatch() // also when host code panics
	r.hctx = hctx
	var out *Outcome
	var err error
	// Host code in invoke reads the script's values (the declaration, the
	// result): what a getter or a proxy trap on them throws is the
	// script's error, not a panic of keep's.
	if serr := scriptCall(r.vm, func() { out, err = r.invoke() }); serr != nil {
		out, err = nil, r.positioned(r.jsError(serr))
	}
	r.sup.close()
	r.traceCutNote()
	f := r.sup.failure()

	switch {
	case f == errTerminal:
		return &Outcome{Mutation: r.mutation}, nil
	case f != nil:
		return nil, r.finish(f)
	case err != nil:
		return nil, r.finish(err)
	}
	return out, nil
}

// invoke runs the program's top level, then the phase's handler, and reads
// its result. Everything that may run script code (a toJSON, a getter)
// happens here, while the limits hold.
func (r *run) invoke() (*Outcome, error) {
	prg := r.s.program
	if r.s.bare != nil {
		prg = r.s.bare
	}
	if _, err := r.vm.RunProgram(prg); err != nil {
		return nil, r.jsError(err)
	}
	fn, err := r.handler()
	if err != nil {
		return nil, err
	}
	args := []goja.Value{r.newCtx()}
	var raws []json.RawMessage
	switch r.inv.Phase {
	case PhaseProducer, PhasePrepare:
		raws = []json.RawMessage{r.inv.State}
	case PhaseMutate:
		raws = []json.RawMessage{r.inv.Prepared}
	case PhaseNext:
		raws = []json.RawMessage{r.inv.Prepared, r.inv.MutationResult}
	}
	for _, raw := range raws {
		v, err := r.fromJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("sandbox: invocation argument is not JSON: %w", err)
		}
		args = append(args, v)
	}

	v, err := fn(goja.Undefined(), args...)
	if err != nil {
		return nil, r.positioned(r.jsError(err))
	}
	if f := r.sup.failure(); f != nil {
		return nil, f
	}
	if p, ok := promise(v); ok {
		switch p.State() {
		case goja.PromiseStatePending:
			return nil, &Error{Kind: ErrLogic, Message: "handler awaited something that never settles"}
		case goja.PromiseStateRejected:
			return nil, r.positioned(thrown(p.Result(), nil))
		}
		v = p.Result()
	}

	switch r.inv.Phase {
	case PhasePrepare:
		pr, err := r.prepareResult(v)
		if err != nil {
			return nil, err
		}
		return &Outcome{Prepare: pr}, nil
	case PhaseMutate:
		return &Outcome{}, nil // mutate's return value is discarded (06b)
	default:
		if goja.IsUndefined(v) {
			return &Outcome{}, nil
		}
		state, err := r.toJSON(v, "the returned state", r.lim.MaxState)
		if err != nil {
			return nil, err
		}
		return &Outcome{State: state, StateReturned: true}, nil
	}
}

// handler finds the phase's function in the declaration this runtime built.
func (r *run) handler() (goja.Callable, error) {
	section, field := "producers", "handler"
	if r.decl.consumer {
		section, field = "consumers", string(r.inv.Phase)
	}
	var v goja.Value
	decl := r.workflow
	if r.s.bare == nil {
		decl = declaration(r.vm)
	}
	if decl != nil {
		if sec, ok := decl.Get(section).(*goja.Object); ok {
			if h, ok := sec.Get(r.inv.Handler).(*goja.Object); ok {
				v = h.Get(field)
			}
		}
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &Error{Kind: ErrLogic, Message: fmt.Sprintf("the declaration has no function %s.%s.%s at run time", section, r.inv.Handler, field)}
	}
	return fn, nil
}

// where names the handler phase for messages: `producer "p"`, `prepare of
// consumer "c"`.
func (r *run) where() string {
	if r.inv.Phase == PhaseProducer {
		return fmt.Sprintf("producer %q", r.inv.Handler)
	}
	return fmt.Sprintf("%s of consumer %q", r.inv.Phase, r.inv.Handler)
}

// finish fills in where an *Error happened; other errors (host errors,
// already wrapped with where, and bugs of ours) pass unchanged.
func (r *run) finish(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Handler == "" {
		e.Phase, e.Handler, e.File = r.inv.Phase, r.inv.Handler, r.s.FileName
	}
	return err
}

var promiseType = reflect.TypeOf((*goja.Promise)(nil))

// promise is v as a promise. It does not export other objects: exporting
// copies, and a sparse array of length 1e9 would export as 16 GB.
func promise(v goja.Value) (*goja.Promise, bool) {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() != promiseType {
		return nil, false
	}
	p, ok := o.Export().(*goja.Promise)
	return p, ok
}

// positioned gives an error the script threw without a position (a value
// that is not an Error, thrown in an async handler, carries no stack) the
// position of the handler's function, and says so.
func (r *run) positioned(err error) error {
	e, ok := err.(*Error)
	if !ok || e.Line > 0 || e.Kind != ErrLogic || e.Op != "" { // not a thrown value
		return err
	}
	field := "handler"
	if r.decl.consumer {
		field = string(r.inv.Phase)
	}
	if at, ok := r.decl.at[field]; ok {
		e.Line, e.Col = at[0], at[1]
		e.Message += " (thrown in this handler; throw an Error to get the line of the throw)"
	}
	return e
}
