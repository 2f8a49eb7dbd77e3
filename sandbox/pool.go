package sandbox

import (
	"runtime"
	"sync"

	"github.com/dop251/goja"
)

// A phase runs in a runtime nobody used before: building one (goja.New, the
// allocation guards, Keep, the captured JSON functions, the phase's host
// functions, the built-ins goja builds on first use) costs about as much as
// the phase itself. The pool builds them ahead, on a goroutine of its own,
// so a phase usually finds one ready and the set-up overlaps the engine's
// commits instead of adding to them. A runtime leaves the pool once, to one
// run, and is never given back: fresh state per run stays the rule.

// poolSize is how many unused runtimes wait at most. Each costs a few hundred
// KiB; a handful covers a burst of phases on a few workflows. A worker
// process runs one job at a time, and keeps as many ahead as a job takes
// (worker.go).
var poolSize = 4

// fresh is a runtime set up for a run, that has run no script yet.
type fresh struct {
	vm    *goja.Runtime
	sup   *supervisor
	parse goja.Callable // the runtime's own JSON.parse, once JSON is guarded (hostParse)
	g     *guard
	// The host's own encodings of script values (encode, encodeLine): enc
	// made with the runtime, as nearly every phase encodes (a prepared
	// result, a returned state, a payload, a connector's params); encLine
	// on first use, as few phases log objects.
	enc, encLine goja.Callable
	maxEncode    int
	encodeCut    bool         // the last encode stopped at maxEncode
	workflow     *goja.Object // what the script hands to Keep.workflow, once it runs
	key          poolKey
	prebuilt     // the host functions, for the run that takes the runtime (bind.go)
}

// poolKey is what a runtime's set-up depends on beyond the runtime itself.
type poolKey struct {
	stack   int
	maxHeap uint64
	logLine int
}

func keyOf(lim Limits) poolKey {
	return poolKey{stack: lim.MaxStackDepth, maxHeap: lim.MaxHeapGrowth, logLine: lim.MaxLogLine}
}

// newFresh builds and sets up one runtime. Everything here must be the same
// for every run with these limits: what depends on the run (its host, its
// phase, its connectors) is reached through the run bound to the runtime
// when one takes it (bind.go), or installed by the run itself.
//
// pause is called between the steps: the pool's filler yields there, so a
// phase that became ready on its core waits for one step, not for a whole
// runtime (about 120 µs). A runtime built for a phase that found the pool
// empty does not pause.
func newFresh(k poolKey, pause func()) *fresh {
	vm := goja.New()
	f := &fresh{vm: vm, sup: &supervisor{vm: vm}, key: k}
	vm.SetMaxCallStackSize(k.stack)
	pause()
	f.g = installGuards(vm, f.sup, k.maxHeap, k.stack, &f.parse)
	pause()
	f.maxEncode = int(f.g.limit)
	f.enc, _ = goja.AssertFunction(vm.ToValue(jsonStringify(vm, f.g.isArray, f.g.cutJSON(f.maxEncode, &f.encodeCut))))
	installKeep(vm, &f.workflow)
	f.prebuild()
	pause()
	_, _ = vm.RunProgram(warmUp)
	return f
}

// warmUp makes goja build, in the fill, the built-ins it builds on first
// use that every phase uses: a handler is an async function, so the async
// function prototype, Promise and its prototype. They are the same objects
// built later; built here they are not built on the phase's path. It
// declares nothing: a runtime's globals stay those of a new one plus Keep.
var warmUp = goja.MustCompile("warm-up.js", `Promise; (async () => {});`, true)

// hostParse is the runtime's original JSON.parse, for what the host's own
// decoder leaves to it. JSON is guarded on first read (lazyglobals.go); the
// host reading it first guards it, and a script that deleted or replaced it
// before reading it leaves the host one borrowed.
func (f *fresh) hostParse() goja.Callable {
	if f.parse == nil && f.g.lazy != nil {
		f.g.lazy.installJSON()
		if f.parse == nil {
			f.parse = f.g.lazy.borrowParse()
		}
	}
	return f.parse
}

// encode is JSON.stringify of v that stops at maxEncode bytes, setting
// encodeCut, rather than failing: the caller names the value and its limit.
func (f *fresh) encode(v goja.Value) (goja.Value, error) {
	return f.enc(goja.Undefined(), v)
}

// encodeLine is JSON.stringify of v that stops at what a console line can
// show.
func (f *fresh) encodeLine(v goja.Value) (goja.Value, error) {
	if f.encLine == nil {
		f.encLine, _ = goja.AssertFunction(f.vm.ToValue(jsonStringify(f.vm, f.g.isArray, f.g.cutJSON(4*f.key.logLine+4, nil))))
	}
	return f.encLine(goja.Undefined(), v)
}

// runtimes is the process's pool. The filler goroutine runs only while the
// pool is short, so an idle process builds nothing and holds no goroutine.
var runtimes = &runtimePool{}

type runtimePool struct {
	mu      sync.Mutex
	key     poolKey
	ready   []*fresh
	filling bool
}

// take hands out a runtime set up for k that nobody used: a pooled one when
// one is ready, else one built now. Either way the pool then tops itself up
// in the background.
func (p *runtimePool) take(k poolKey) *fresh {
	p.mu.Lock()
	var f *fresh
	if p.key != k {
		// other limits than the pooled runtimes': the pool serves these from
		// now on (an engine runs every phase with the same limits)
		p.key, p.ready = k, nil
	}
	if n := len(p.ready); n > 0 {
		f = p.ready[n-1]
		p.ready[n-1] = nil
		p.ready = p.ready[:n-1]
	}
	if !p.filling {
		p.filling = true
		Go(p.fill)
	}
	p.mu.Unlock()
	if f == nil {
		f = newFresh(k, func() {})
	}
	return f
}

// fill builds runtimes until the pool is full, then returns, yielding its
// core between and inside builds (newFresh). Tests call it to wait for a
// full pool; a second filler at the same time does no harm.
func (p *runtimePool) fill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.ready) < poolSize {
		k := p.key
		p.mu.Unlock()
		f := newFresh(k, runtime.Gosched)
		runtime.Gosched()
		p.mu.Lock()
		if p.key == k && len(p.ready) < poolSize {
			p.ready = append(p.ready, f)
		}
	}
	p.filling = false
}
