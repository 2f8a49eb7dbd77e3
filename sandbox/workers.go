package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// worker is the host's side of one worker process (worker.go).
type worker struct {
	cmd    *exec.Cmd
	wmu    sync.Mutex // a host call's reply and the conversation both write
	w      *bufio.Writer
	wfile  *os.File
	r      *bufio.Reader // read by the conversation in hand, and nothing else
	rfile  *os.File
	exited chan struct{} // closed once the process is reaped
	stderr headBuffer
	limit  uint64 // MaxMemory: address space past the worker's own at start, bytes
	known  map[string]bool
	parked time.Time // when it was last given back to the pool
	// broken: killed, crashed, out of step or asked to cancel: never reused
	// (a cancel is a signal, which may reach the worker after its run)
	broken atomic.Bool
}

// stderrHead is how much of a worker's standard error is kept: its first
// bytes, where the Go runtime's last words are ("fatal error: out of
// memory"); workers run with GOTRACEBACK=none, so no goroutine dump follows.
const stderrHead = 4 << 10

// workerExe is the executable workers run: this one.
var workerExe = sync.OnceValues(os.Executable)

func startWorker(limit uint64) (*worker, error) {
	exe, err := workerExe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: find the executable to start a worker: %w", err)
	}
	toChild, fromHost, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: start a worker: %w", err)
	}
	toHost, fromChild, err := os.Pipe()
	if err != nil {
		toChild.Close()
		fromHost.Close()
		return nil, fmt.Errorf("sandbox: start a worker: %w", err)
	}
	w := &worker{limit: limit, exited: make(chan struct{}), known: map[string]bool{}, wfile: fromHost, rfile: toHost}
	cmd := exec.Command(exe)
	// MALLOC_ARENA_MAX=1: keep is linked with the C library (cgo), and
	// glibc gives every thread that mallocs an arena of its own, 64 MiB of
	// address space each; a worker starts threads after its bound is set
	// (more of them on a busy machine), and a few arenas took the whole
	// bound from a run that used 4 MB.
	cmd.Env = append(workerEnviron(), workerEnv+"="+strconv.FormatUint(limit, 10), "GOTRACEBACK=none", "MALLOC_ARENA_MAX=1")
	cmd.ExtraFiles = []*os.File{toChild, fromChild} // fds 3 and 4
	cmd.Stderr = &w.stderr
	if err := startProcess(cmd); err != nil {
		toChild.Close()
		fromHost.Close()
		toHost.Close()
		fromChild.Close()
		return nil, fmt.Errorf("sandbox: start a worker (%s): %w", exe, err)
	}
	toChild.Close()
	fromChild.Close()
	w.cmd = cmd
	w.w = bufio.NewWriterSize(fromHost, 64<<10)
	w.r = bufio.NewReaderSize(toHost, 64<<10)
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// workerPassed are the variables of keep's environment a worker is given:
// those the Go runtime and a script's Date read, and the dynamic loader's
// path, without which a keep linked against libraries in an unusual place
// could not start itself again. keep's environment holds
// secrets (KEEP_MAIL_PASSWORD, tokens for connectors and MCP servers) and a
// worker is the process scripts run in, so it starts from nothing and gets
// only these: a variable keep is given tomorrow is not handed on because
// no one thought to hold it back.
var workerPassed = [...]string{"TZ", "ZONEINFO", "GODEBUG", "GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GOCOVERDIR", "LD_LIBRARY_PATH"}

func workerEnviron() []string {
	env := make([]string, 0, len(workerPassed)+3)
	for _, k := range workerPassed {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (w *worker) send(f *frame) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if err := writeFrame(w.w, f); err != nil {
		w.broken.Store(true)
		return fmt.Errorf("sandbox: write to the worker: %w", err)
	}
	return nil
}

// kill ends the process now; it cannot hold a core after this. Its pipe to
// the host then ends, which is how a conversation reading it learns.
func (w *worker) kill() {
	w.broken.Store(true)
	_ = w.cmd.Process.Kill()
	w.release()
}

// release closes the host's ends of the pipes: a worker given up on, or
// let go when the pool is full (it exits when its pipe ends).
func (w *worker) release() {
	w.wmu.Lock()
	w.wfile.Close()
	w.wmu.Unlock()
	w.rfile.Close()
}

// knows records that the worker holds the script of key compiled. The
// worker forgets all it holds once it holds scriptCacheMax; so does this
// record, which would otherwise grow with every version a long-lived
// worker ever ran (a script it no longer has is sent again: "missing").
func (w *worker) knows(key string) {
	if len(w.known) >= scriptCacheMax {
		clear(w.known)
	}
	w.known[key] = true
}

// cancel asks the run in the worker to stop. A signal, not a frame: the
// worker reads its pipe only when it waits for the host, and a run that
// computes must hear of it too.
func (w *worker) cancel() {
	w.broken.Store(true)
	_ = w.cmd.Process.Signal(cancelSignal)
}

// death is why a worker's pipe ended: the process is reaped first, so its
// exit status and last words are known.
func (w *worker) death() *Error {
	w.kill()
	<-w.exited
	tail := w.stderr.String()
	if w.stderr.outOfMemory() {
		return &Error{Kind: ErrResource, Message: fmt.Sprintf("script exceeded its memory limit (%d MB)", w.limit>>20)}
	}
	if w.stderr.stackOverflow() {
		return &Error{Kind: ErrResource, cause: errTooDeep, Message: fmt.Sprintf(
			"script nests too deep: its worker's stack grew past %d MB", maxWorkerStack(w.limit)>>20)}
	}
	msg := "the script's worker process died"
	if st := w.cmd.ProcessState; st != nil {
		msg += " (" + st.String() + ")"
	}
	if line := lastLine(tail); line != "" {
		msg += ": " + line
	} else if tail != "" {
		msg += ": " + strings.TrimSpace(tail[:min(len(tail), 300)])
	}
	return &Error{Kind: ErrResource, Message: msg}
}

func lastLine(s string) string {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return l
		}
	}
	return ""
}

// headBuffer keeps the first stderrHead bytes written to it, and whether
// anything written said the process ran out of memory (several threads may
// write at once, so the runtime's words are not always first).
type headBuffer struct {
	mu       sync.Mutex
	b        []byte
	oom      bool
	overflow bool // the runtime said a goroutine's stack went past its maximum
}

func (t *headBuffer) outOfMemory() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.oom
}

func (t *headBuffer) stackOverflow() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.overflow
}

func (t *headBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, sign := range []string{"out of memory", "cannot allocate memory", "errno=12"} {
		t.oom = t.oom || bytes.Contains(p, []byte(sign))
	}
	t.overflow = t.overflow || bytes.Contains(p, []byte("stack overflow")) || bytes.Contains(p, []byte("stack exceeds"))
	if room := stderrHead - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *headBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// maxIdleProcs bounds the warm workers kept between runs. A run takes one
// for itself; a burst wider than this starts workers that end after it.
const maxIdleProcs = 8

// idleRetire is how long a worker may wait in the pool unused before it is
// let go: an idle keep holds no workers for long (each is tens of MB, where
// keep alone is about 35), and one started again costs tens of ms, next to
// a workflow's minutes between polls. A burst keeps its workers: each run
// gives its worker back within milliseconds of the next taking one.
const idleRetire = 10 * time.Second

// loadIdleRetire is how long a worker that loads files (loadMemory) may
// wait unused. Loads come in bursts (a daemon's start, a deploy, a
// validate), each a few ms after the last, and runs never take a load's
// worker (its bound is another): one kept for idleRetire after a deploy was
// a whole idle worker beside the ones running the workflow it deployed.
const loadIdleRetire = time.Second

// procs is the process's pool of warm workers, by memory limit.
var procs = &procPool{idle: map[uint64][]*worker{}, idleFor: idleRetire, loadIdleFor: loadIdleRetire}

type procPool struct {
	mu          sync.Mutex
	idle        map[uint64][]*worker // each list oldest-parked first
	idleFor     time.Duration        // idleRetire, but in tests
	loadIdleFor time.Duration        // loadIdleRetire, but in tests; 0: idleFor
	// retire is armed while a worker is idle, for when the first one comes
	// due: one timer for the pool, not one per worker, and none while the
	// pool is empty
	retire *time.Timer
	due    time.Time
	// warming counts the workers warm is starting, by memory limit
	warming map[uint64]int
}

// Warm starts workers for runs with these limits until n are idle or
// starting, and returns at once: a worker takes about 12 ms to start
// (BenchmarkWorkerStart), and runs that a producer's new inputs are about
// to cause find theirs started instead of waiting for it. Those not taken
// retire as any idle worker does.
func Warm(lim Limits, n int) { procs.warm(withDefaults(lim).MaxMemory, n) }

func (p *procPool) warm(limit uint64, n int) {
	p.mu.Lock()
	need := min(n, maxIdleProcs) - len(p.idle[limit]) - p.warming[limit]
	if need > 0 {
		if p.warming == nil {
			p.warming = map[uint64]int{}
		}
		p.warming[limit] += need
	}
	p.mu.Unlock()
	for range need {
		Go(func() {
			w, err := startWorker(limit)
			p.mu.Lock()
			p.warming[limit]--
			p.mu.Unlock()
			if err == nil {
				p.put(w)
			}
		})
	}
}

// lingers is how long an idle worker with this memory limit is kept.
func (p *procPool) lingers(limit uint64) time.Duration {
	if limit == loadMemory && p.loadIdleFor > 0 {
		return p.loadIdleFor
	}
	return p.idleFor
}

// take hands out an idle worker with this memory limit, or starts one.
func (p *procPool) take(limit uint64) (*worker, error) {
	p.mu.Lock()
	list := p.idle[limit]
	for len(list) > 0 {
		w := list[len(list)-1]
		list = list[:len(list)-1]
		select {
		case <-w.exited: // died while idle
			w.release()
			continue
		default:
		}
		p.idle[limit] = list
		p.mu.Unlock()
		return w, nil
	}
	p.idle[limit] = list
	p.mu.Unlock()
	return startWorker(limit)
}

// put gives a worker back after a run that ended in step.
func (p *procPool) put(w *worker) {
	if w.broken.Load() {
		w.kill()
		return
	}
	p.mu.Lock()
	if len(p.idle[w.limit]) < maxIdleProcs {
		w.parked = time.Now()
		p.idle[w.limit] = append(p.idle[w.limit], w)
		linger := p.lingers(w.limit)
		if due := w.parked.Add(linger); p.retire == nil || due.Before(p.due) {
			// an armed timer that fires meanwhile only retires early what is due
			if p.retire != nil {
				p.retire.Stop()
			}
			p.retire, p.due = time.AfterFunc(linger, p.retireIdle), due
		}
		w = nil
	}
	p.mu.Unlock()
	if w != nil {
		w.release()
	}
}

// retireIdle lets go of the workers parked for their limit's time or
// longer, and is armed again for the next one to come due, if any is left.
func (p *procPool) retireIdle() {
	var gone []*worker
	p.mu.Lock()
	now := time.Now()
	next := time.Duration(-1)
	for limit, list := range p.idle {
		linger := p.lingers(limit)
		i := 0
		for i < len(list) && now.Sub(list[i].parked) >= linger {
			gone = append(gone, list[i])
			i++
		}
		if i > 0 {
			p.idle[limit] = slices.Clone(list[i:]) // not holding the ones let go
		}
		if i < len(list) {
			if d := linger - now.Sub(list[i].parked); next < 0 || d < next {
				next = d
			}
		}
	}
	p.retire = nil
	if next >= 0 {
		p.retire, p.due = time.AfterFunc(next, p.retireIdle), now.Add(next)
	}
	p.mu.Unlock()
	for _, w := range gone {
		w.release() // its pipe ends, and it exits
	}
}
