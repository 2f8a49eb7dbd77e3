package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A worker is this same executable started again with workerEnv set: the
// init below sees it before any main runs, bounds the process's memory, and
// serves runs on the pipes the host handed it (fds 3 and 4) until the host
// closes them. Any binary that imports sandbox can be a worker, go test
// binaries included, without a TestMain.
//
// The guards of guards.go stop a script early with a precise message; the
// worker is what holds when they do not: a Go built-in that allocates
// gigabytes, or spins in one native call that ignores Interrupt, takes down
// a worker, never keep.

// workerEnv carries the worker's memory bound in bytes.
const workerEnv = "KEEP_SANDBOX_WORKER"

// inWorker is true in a worker process: Load and Run work here, in-process.
var inWorker bool

func init() {
	v := os.Getenv(workerEnv)
	if v == "" {
		return
	}
	inWorker = true
	smallThreadStacks()
	limit, err := strconv.ParseUint(v, 10, 64)
	if err != nil || limit == 0 {
		fmt.Fprintf(os.Stderr, "sandbox worker: %s=%q is not a byte count\n", workerEnv, v)
		os.Exit(2)
	}
	// RLIMIT_AS bounds the address space; the Go heap reserves it as it
	// grows, so an allocation past it fails and the runtime dies with "out
	// of memory", which the host reports as the script's. The bound is on
	// top of what the process has mapped at start (mostly the runtime's
	// reservations, about 1 GiB of address space and a few MiB of memory).
	// RLIMIT_DATA would be the natural limit but does not hold for Go: the
	// heap maps memory over address space it reserved earlier, which Linux
	// does not count against RLIMIT_DATA as new, so growth slips past it.
	base, err := mappedNow()
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox worker: read the address space: %v\n", err)
		os.Exit(2)
	}
	workerBase, workerLimit = base, limit
	lim := syscall.Rlimit{Cur: base + limit, Max: base + limit}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox worker: set the memory limit: %v\n", err)
		os.Exit(2)
	}
	// A job is one phase, or a prepare and the mutate it leads to (RunThen):
	// two runtimes back to back, and a prepare answered from its prefetch
	// never waits on the host, where the filler would build the second. Two
	// ready, built while the host commits between jobs, cover both.
	poolSize = 2
	collectWithin(limit)
	// One thread runs Go code: the phase, its host calls and the pool's
	// filler take turns, so the filler builds the next runtime while the
	// phase waits on the host instead of taking a second core from it, and
	// a frame that wakes the worker wakes one thread. Workers run side by
	// side as processes, one per run in hand.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// The pipes reach a worker in blocking mode (exec hands them over so).
	// Made non-blocking, they are read through the runtime's poller: a frame
	// read on one goroutine and handed to another then costs a wake-up, not
	// a thread parked in read(2) that must give its P back first.
	for _, fd := range []int{3, 4} {
		_ = syscall.SetNonblock(fd, true)
	}
	in, out := os.NewFile(3, "from-host"), os.NewFile(4, "to-host")
	if in == nil || out == nil {
		fmt.Fprintln(os.Stderr, "sandbox worker: started without its pipes (fds 3 and 4)")
		os.Exit(2)
	}
	// The worker serves on a goroutine of its own: init's goroutine stays
	// locked to the main thread until main runs, and a locked goroutine
	// that blocks on the host and wakes again has its P handed from thread
	// to thread each time, two context switches a frame.
	served := make(chan struct{})
	go func() {
		serveWorker(in, out)
		close(served)
	}()
	<-served
	os.Exit(0)
}

// collectWithin sets how the worker's runtime uses the memory it may grow
// by (limit).
func collectWithin(limit uint64) {
	// Each phase builds a fresh runtime, so a worker's garbage is mostly
	// short-lived runtime parts over a live heap of a few MiB: collect at
	// four times it (GOGC 800's floor, 32 MiB, had each busy worker hold 36
	// MB; 300 holds about 16 for a few more collections), and sooner near
	// the bound, where a collection is cheaper than running into it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		workerMemLimit = int64(limit / 2)
		debug.SetMemoryLimit(workerMemLimit)
	}
	// A goroutine's stack doubles as it grows, the old one held while it
	// is copied: past about a third of the bound a deep recursion (a
	// parser's, on a file nested deeper than nestingDiagnostic sees; a
	// built-in's, on a deeply nested value) would run into RLIMIT_AS and
	// be reported as memory. Capped at a quarter, it stops as a stack
	// overflow first, which the host reports as nesting too deep
	// (worker.death). The bound itself is unchanged.
	debug.SetMaxStack(int(maxWorkerStack(limit)))
}

// maxWorkerStack is the largest goroutine stack of a worker whose address
// space may grow by limit.
func maxWorkerStack(limit uint64) uint64 { return limit / 4 }

// workerBase and workerLimit are the worker's address space at start and
// the bound past it.
var workerBase, workerLimit uint64

// spent says whether this worker's address space has grown past half its
// bound. Go keeps address space it has reserved, so a worker that once ran
// near its bound stays near it: taking it back would fail the next run for
// memory the last one used. It retires instead.
func spent() bool {
	now, err := mappedNow()
	return err == nil && workerLimit > 0 && now > workerBase+workerLimit/2
}

// threadStackEnv marks a worker that already runs with small thread stacks.
const threadStackEnv = "KEEP_SANDBOX_WORKER_STACK"

// rlimInfinity is RLIM_INFINITY as Rlimit holds it.
const rlimInfinity = ^uint64(0)

// threadStack is the stack size a worker's threads reserve.
const threadStack = 1 << 20

// smallThreadStacks starts the worker again with RLIMIT_STACK lowered, once.
// A cgo build creates threads with pthread_create, which reserves the C
// library's default stack (RLIMIT_STACK at start, 8 MiB) for each: under a
// busy machine the runtime starts more threads, and their reservations
// alone ran into RLIMIT_AS, so a run that allocated nothing failed with
// "out of memory". The default is read when the program starts, hence the
// exec; the pipes (fds 3 and 4) are inherited across it.
func smallThreadStacks() {
	if os.Getenv(threadStackEnv) != "" {
		return
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &r); err != nil || (r.Cur != rlimInfinity && r.Cur <= threadStack) {
		return
	}
	r.Cur = threadStack
	if r.Max != rlimInfinity && r.Max < r.Cur {
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_STACK, &r); err != nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), threadStackEnv+"=1")
	err = syscall.Exec(exe, os.Args, env)
	fmt.Fprintf(os.Stderr, "sandbox worker: start again with small thread stacks: %v\n", err)
	os.Exit(2)
}

// statm is /proc/self/statm, kept open: spent reads it after every run, and
// one pread costs less than opening it again each time.
var statm = sync.OnceValues(func() (*os.File, error) { return os.Open("/proc/self/statm") })

// mappedNow is the size of this process's address space, in bytes.
func mappedNow() (uint64, error) {
	f, err := statm()
	if err != nil {
		return 0, err
	}
	var b [128]byte
	n, err := f.ReadAt(b[:], 0)
	if n == 0 && err != nil {
		return 0, err
	}
	var pages uint64
	if _, err := fmt.Sscan(string(b[:n]), &pages); err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %w", err)
	}
	return pages * uint64(os.Getpagesize()), nil
}

// cancelSignal asks a worker to stop the run in hand (worker.cancel).
const cancelSignal = syscall.SIGUSR1

// workerConn is the worker's side of the pipes. The worker reads its pipe
// only when it waits for the host: for the next job, or for a call's reply.
// A cancel comes as a signal, so it reaches a run that is busy.
type workerConn struct {
	wmu sync.Mutex
	w   *bufio.Writer
	r   *bufio.Reader

	cmu    sync.Mutex
	cancel context.CancelFunc // the current job's
}

// scriptCacheMax bounds the scripts a worker keeps compiled.
const scriptCacheMax = 64

func serveWorker(in, out *os.File) {
	c := &workerConn{w: bufio.NewWriterSize(out, 64<<10), r: bufio.NewReaderSize(in, 64<<10)}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, cancelSignal)
	go func() {
		for range sigs {
			c.cancelJob()
		}
	}()
	scripts := map[string]*Script{}
	for {
		f := c.read()
		if f.Op != opLoad && f.Op != opRun {
			fmt.Fprintf(os.Stderr, "sandbox worker: a %q frame between runs: out of step with the host\n", f.Op)
			os.Exit(2)
		}
		// the job's context is made when its frame is read: a cancel from
		// then on is its own, even while the worker compiles the script
		ctx, cancel := context.WithCancel(context.Background())
		c.cmu.Lock()
		c.cancel = cancel
		c.cmu.Unlock()
		done := c.job(ctx, f, scripts)
		c.cmu.Lock()
		c.cancel = nil
		c.cmu.Unlock()
		cancel()
		if done == nil {
			continue
		}
		// whatever the job was (a load, a run, one that failed to load
		// its script), a worker it grew past half its bound goes: Go
		// keeps the memory it reserved, and the next job would run out
		done.Retire = done.Retire || spent()
		c.send(done)
		if done.Retire {
			os.Exit(0)
		}
	}
}

// job does what f asks and returns the "done" frame to send, if any.
func (c *workerConn) job(ctx context.Context, f *frame, scripts map[string]*Script) *frame {
	var s *Script
	if f.Script != nil {
		loaded, err := loadHere(f.Script.File, f.Script.Source, f.Script.Opts)
		if err == nil {
			if len(scripts) >= scriptCacheMax {
				clear(scripts)
			}
			scripts[f.Key] = loaded
		}
		if f.Op == opLoad {
			return loadedFrame(loaded, err)
		}
		if err != nil {
			return &frame{Op: opDone, Err: toWireErr(fmt.Errorf("sandbox: the worker could not load %s: %w", f.Script.File, err))}
		}
		s = loaded
	} else {
		s = scripts[f.Key]
	}
	if f.Op != opRun {
		return nil
	}
	if s == nil || f.Inv == nil {
		return &frame{Op: opDone, Missing: true, Err: &wireErr{Text: "sandbox: the worker has no script " + f.Key}}
	}
	return c.run(ctx, s, f.Inv, f.Script != nil)
}

func (c *workerConn) cancelJob() {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// read is the next frame from the host; a host that is gone, or out of
// step, leaves nothing more to serve.
func (c *workerConn) read() *frame {
	f, err := readHostFrame(c.r)
	if err != nil {
		var bad *malformedFrame
		if errors.As(err, &bad) {
			fmt.Fprintf(os.Stderr, "sandbox worker: %v\n", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	return f
}

func loadedFrame(s *Script, err error) *frame {
	if err != nil {
		return &frame{Op: opDone, Err: toWireErr(err)}
	}
	w := &wireScript{Workflow: s.Workflow, Capabilities: s.Capabilities, Manifest: s.Manifest, Handlers: map[string]wireDecl{}}
	for name, d := range s.handlers {
		w.Handlers[name] = wireDecl{Consumer: d.consumer, Publishes: d.publishes, Subscribe: d.subscribe, At: d.at}
	}
	return &frame{Op: opDone, Loaded: w}
}

// run runs one phase; compiled says the script was compiled for it, so the
// host's bound still counts the compile until "started" says it is over.
func (c *workerConn) run(ctx context.Context, s *Script, wi *wireInv, compiled bool) *frame {
	if compiled {
		c.send(&frame{Op: opStarted}) // the phase's time starts now, not before the compile
	}
	ph := &proxyHost{c: c, pre: wi.Prefetched, phase: wi.Phase}
	inv := Invocation{Handler: wi.Handler, Phase: wi.Phase, State: wi.State, Prepared: wi.Prepared,
		MutationResult: wi.MutationResult, Limits: wi.Limits, Host: ph}
	paceFor(wi.Limits.MaxHeapGrowth)
	out, err := s.runHere(ctx, inv)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.abandoned {
			// the abandoned goroutine may spin in a built-in: this process
			// ends, so nothing is left holding a core
			c.send(&frame{Op: opDone, Err: toWireErr(err), Retire: true})
			os.Exit(0)
		}
		return &frame{Op: opDone, Err: toWireErr(err)}
	}
	if wi.Then != nil && reserves(out.Prepare) {
		// the mutate that follows: no frame from the host, no wake-up
		c.send(&frame{Op: opPrepared, Outcome: toWireOutcome(out)})
		then := *wi.Then
		then.Prepared, then.Then = out.Prepare.Raw, nil
		return c.run(ctx, s, &then, false)
	}
	return &frame{Op: opDone, Outcome: toWireOutcome(out), Told: ph.told}
}

func (c *workerConn) send(f *frame) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := writeFrame(c.w, f); err != nil {
		os.Exit(0) // the host is gone
	}
}

// call asks the host to run one Host method and waits for its answer; told
// are the registrations and publishes the host takes first (proxy.go).
func (c *workerConn) call(ctx context.Context, name hostCallName, args any, told []toldCall) (json.RawMessage, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode the arguments of %s: %w", name, err)
	}
	f := &frame{Op: opCall, Name: name, Args: b, Told: told}
	d, hasDeadline := ctx.Deadline()
	if hasDeadline {
		f.Deadline = d.UnixNano()
	}
	c.send(f)
	rep := c.read()
	if rep.Op != opReply {
		fmt.Fprintf(os.Stderr, "sandbox worker: a %q frame while waiting for a reply: out of step with the host\n", rep.Op)
		os.Exit(2)
	}
	if rep.Err != nil {
		if rep.Err.Cause == causeCanceled {
			// the run was cancelled: it stops as cancelled, not on the
			// call's error
			c.cancelJob()
		}
		if hasDeadline && !time.Now().Before(d) {
			// the call failed at the deadline: let ctx say so before the
			// run looks at it (its timer may not have fired yet)
			<-ctx.Done()
		}
		return nil, &hostCallError{index: rep.Err.Host, text: rep.Err.Text}
	}
	return rep.Result, nil
}
