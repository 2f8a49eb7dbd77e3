package sandbox

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// maxBuiltinAlloc caps what one call of a guarded built-in may allocate. The
// heap watchdog only sees growth between samples; a single native call such
// as "x".repeat(1e9) allocates a gigabyte before any sample (goja.md fact 6).
const maxBuiltinAlloc = 64 << 20

// elemBytes is what one element costs while a native call builds an array.
// A slot is a 16-byte Value, but goja's fill, Array.from, concat, slice and
// flat allocated 150 to 250 bytes per element in all (TotalAlloc, growth
// included); 128 keeps an array of half a million elements allowed under
// the default limits.
const elemBytes = 128

// heapSampleEvery is how often the watchdog reads the heap.
const heapSampleEvery = 5 * time.Millisecond

// supervisor owns a runtime's fate: the first failure recorded wins, and
// recording it interrupts the runtime, which the script cannot catch.
type supervisor struct {
	vm     *goja.Runtime
	mu     sync.Mutex
	failed error
	closed bool // the run is over: late timers and stray host calls are ignored
}

// stop records err as the run's failure and interrupts the runtime. It
// reports false when another failure came first or the run is over.
func (s *supervisor) stop(err error) bool {
	s.mu.Lock()
	if s.closed || s.failed != nil {
		s.mu.Unlock()
		return false
	}
	s.failed = err
	s.mu.Unlock()
	s.vm.Interrupt(err)
	return true
}

func (s *supervisor) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// halted is true once the run must not do anything more: a failure or the
// terminal mutation was recorded, or the run is over. Host functions check it
// first, because native code (e.g. arr.map(ctx.files.write)) can call them
// again before the interrupt takes effect.
func (s *supervisor) halted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || s.failed != nil
}

func (s *supervisor) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// watch starts the wall-time timer, the cancellation hook (when ctx is not
// nil) and the heap watchdog. The returned function stops all three; once it
// has returned, none of them stops the runtime any more. The returned
// context (when ctx is not nil) is ctx with the wall-time deadline, for host
// calls; the stop function cancels it.
func (s *supervisor) watch(ctx context.Context, wall time.Duration, maxHeap uint64) (func(), context.Context) {
	var stop func()
	var wctx context.Context
	switch {
	case ctx != nil && wall > 0:
		// One timer for both: the deadline is a cancellation of wctx that
		// ctx did not cause.
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wall)
		after := context.AfterFunc(wctx, func() {
			if err := ctx.Err(); err != nil {
				s.stop(&Error{Kind: ErrCancelled, Message: "cancelled: " + context.Cause(ctx).Error(), cause: err})
				return
			}
			s.stop(&Error{Kind: ErrTimeout, Message: fmt.Sprintf("ran past the wall time of %s", wall), cause: context.DeadlineExceeded})
		})
		stop = func() { after(); cancel() }
	case ctx != nil:
		wctx = ctx
		after := context.AfterFunc(ctx, func() {
			s.stop(&Error{Kind: ErrCancelled, Message: "cancelled: " + context.Cause(ctx).Error(), cause: ctx.Err()})
		})
		stop = func() { after() }
	case wall > 0:
		t := time.AfterFunc(wall, func() {
			s.stop(&Error{Kind: ErrTimeout, Message: fmt.Sprintf("ran past the wall time of %s", wall), cause: context.DeadlineExceeded})
		})
		stop = func() { t.Stop() }
	}
	var hw *heapWatch
	if maxHeap > 0 {
		hw = heapWatchdog.add(s, maxHeap)
	}
	return func() {
		if stop != nil {
			stop()
		}
		if hw != nil {
			heapWatchdog.remove(hw)
		}
	}, wctx
}

// heapWatch is one runtime under the heap watchdog: it is interrupted once
// the Go heap has grown by more than max since base was read. The heap is
// the process's, so concurrent runs count against each other; the limit is a
// backstop against runaway growth, not an accounting of one script.
type heapWatch struct {
	sup  *supervisor
	base uint64
	max  uint64
}

// heapSampler is the one heap watchdog of the process: a goroutine that reads
// the heap every heapSampleEvery while at least one runtime is watched, and
// interrupts each runtime past its own limit. It exits when nothing is
// watched, so an idle process does no sampling.
type heapSampler struct {
	mu      sync.Mutex
	watches map[*heapWatch]struct{}
	running bool
}

var heapWatchdog = &heapSampler{watches: map[*heapWatch]struct{}{}}

func readHeap(sample []metrics.Sample) uint64 {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

func (h *heapSampler) add(sup *supervisor, max uint64) *heapWatch {
	sample := [1]metrics.Sample{{Name: heapMetric}}
	w := &heapWatch{sup: sup, base: readHeap(sample[:]), max: max}
	h.mu.Lock()
	h.watches[w] = struct{}{}
	if !h.running {
		h.running = true
		go h.loop()
	}
	h.mu.Unlock()
	return w
}

// remove ends a watch; once it returns, the watchdog no longer stops w.sup.
func (h *heapSampler) remove(w *heapWatch) {
	h.mu.Lock()
	delete(h.watches, w)
	h.mu.Unlock()
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func (h *heapSampler) loop() {
	sample := []metrics.Sample{{Name: heapMetric}}
	tick := time.NewTicker(heapSampleEvery)
	defer tick.Stop()
	for range tick.C {
		now := readHeap(sample)
		h.mu.Lock()
		if len(h.watches) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		if h.over(now) {
			// The heap's objects include garbage not collected yet: on a
			// busy machine the collector falls behind a script that churns
			// temporaries, and what it has yet to collect is not what the
			// script keeps. Collect, then judge.
			h.mu.Unlock()
			runtime.GC()
			now = readHeap(sample)
			h.mu.Lock()
		}
		for w := range h.watches {
			if w.sup.halted() { // stopped, or abandoned stuck in a native call
				delete(h.watches, w)
				continue
			}
			if now > w.base && now-w.base > w.max {
				// Under h.mu, so that remove orders after it.
				w.sup.stop(&Error{Kind: ErrResource, Message: fmt.Sprintf("the heap grew by %d MiB, over the limit of %d MiB", (now-w.base)>>20, w.max>>20)})
				delete(h.watches, w)
			}
		}
		h.mu.Unlock()
	}
}

// over says whether a watched runtime's heap has grown past its limit at
// now. The caller holds h.mu.
func (h *heapSampler) over(now uint64) bool {
	for w := range h.watches {
		if now > w.base && now-w.base > w.max {
			return true
		}
	}
	return false
}

// typedArrays are the typed array constructors, in a fixed order.
var typedArrays = [...]string{
	"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
}

// typedArraySizes are their element sizes, in the same order.
var typedArraySizes = [len(typedArrays)]float64{1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8}

// installGuards wraps the built-ins that allocate in proportion to an
// argument in one native call, checking the size before they allocate.
//
// parse is set to the original JSON.parse, for the host's own use, when JSON
// is guarded (see fresh.hostParse).
func installGuards(vm *goja.Runtime, sup *supervisor, maxHeap uint64, maxDepth int, parse *goja.Callable) *guard {
	// A result of n bytes costs about 3n while it is built (a buffer that
	// grows by doubling, then the copy handed back), so one call gets a
	// quarter of the heap limit: the call is refused, by name, before the
	// sampler would have to stop it.
	limit := float64(maxBuiltinAlloc)
	if maxHeap > 0 && float64(maxHeap/4) < limit {
		limit = float64(maxHeap / 4)
	}
	g := &guard{vm: vm, sup: sup, limit: limit, maxDepth: maxDepth, wrapped: make([]wrapped, 0, wrappedCount)}
	g.wrapTraps = &goja.ProxyTrapConfig{Apply: g.applyWrapped}
	// Each prototype and namespace is read once, here, before any is
	// replaced.
	global := vm.GlobalObject()
	arr := vm.Get("Array").(*goja.Object)
	arrProto := arr.Get("prototype").(*goja.Object)
	str := vm.ToValue("").ToObject(vm).Prototype() // without materialising the String constructor
	g.isArray, _ = goja.AssertFunction(arr.Get("isArray"))
	g.parse = parse
	g.installStringGuards(str, arrProto)
	// One OrdinaryHasInstance serves every guarded constructor: it is called
	// with the constructor (the proxy) as this.
	g.hasInstance = vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return vm.ToValue(inherits(call.Argument(0), call.This))
	})

	g.wrap(arr, "from", "Array.from", (*guard).from)
	g.installArrayGuards(arrProto, arr.Prototype())

	// The constructors share one handler: the target tells which it is.
	c := &ctorGuard{g: g}
	g.ctorTraps = &goja.ProxyTrapConfig{Apply: c.apply, Construct: c.construct}
	g.array = g.constructor(global, arr, "Array", g.ctorTraps)
	// The typed arrays, ArrayBuffer, Reflect and JSON are guarded when a
	// script first reads one (lazyglobals.go), or now where that cannot be
	// done.
	if !g.plantLazyGlobals(global) {
		var targets [len(typedArrays)]*goja.Object
		for i, name := range typedArrays {
			targets[i], _ = vm.Get(name).(*goja.Object)
		}
		buf, _ := vm.Get("ArrayBuffer").(*goja.Object)
		g.installTyped(global, &targets, buf, true)
		if reflect, ok := vm.Get("Reflect").(*goja.Object); ok {
			g.installReflectGuards(reflect)
		}
		if json, ok := vm.Get("JSON").(*goja.Object); ok {
			g.installJSON(json)
		}
	}
	return g
}

// installJSON guards JSON.parse and replaces JSON.stringify with the host's
// encoder under the per-call limit, keeping the original parse for the
// host's own use (g.parse).
func (g *guard) installJSON(json *goja.Object) {
	*g.parse, _ = goja.AssertFunction(json.Get("parse"))
	_ = json.DefineDataProperty("stringify", g.vm.ToValue(jsonStringify(g.vm, g.isArray, g.jsonLimits(int(g.limit)))), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	g.wrap(json, "parse", "JSON.parse", (*guard).jsonParse)
}

// installTyped guards ArrayBuffer (buf; when nil, the one a typed array's
// buffer reaches) and the typed array constructors (targets; nil where one
// was never built). The guarded ones replace the originals as globals, buf
// only where bufGlobal: a global the script deleted or replaced stays so.
func (g *guard) installTyped(global *goja.Object, targets *[len(typedArrays)]*goja.Object, buf *goja.Object, bufGlobal bool) {
	if buf == nil {
		buf = bufferOf(targets)
	}
	if buf != nil {
		at := global
		if !bufGlobal {
			at = nil
		}
		g.buffer = g.constructor(at, buf, "ArrayBuffer", g.ctorTraps)
	}
	// The typed arrays share one @@hasInstance, on %TypedArray%, the
	// prototype of every one of them.
	shared := false
	for i, target := range targets {
		if target == nil {
			continue
		}
		if !shared {
			shared = true
			if parent := target.Prototype(); parent != nil {
				_ = parent.DefineDataPropertySymbol(goja.SymHasInstance, g.hasInstance, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
				if proto, ok := parent.Get("prototype").(*goja.Object); ok {
					g.installTypedJoins(proto)
				}
			}
		}
		g.typed[i] = target
		g.constructor(global, target, typedArrays[i], g.ctorTraps)
	}
}

// bufferOf is the original ArrayBuffer reached through a buffer of one of
// the original typed arrays: goja builds it for their buffers whether or not
// the global ArrayBuffer was read. Nil when targets holds none.
func bufferOf(targets *[len(typedArrays)]*goja.Object) *goja.Object {
	for _, t := range targets {
		if t == nil {
			continue
		}
		ctor, ok := goja.AssertConstructor(t)
		if !ok {
			continue
		}
		ta, err := ctor(t)
		if err != nil {
			continue
		}
		if b, ok := ta.Get("buffer").(*goja.Object); ok && b.Prototype() != nil {
			o, _ := b.Prototype().Get("constructor").(*goja.Object)
			return o
		}
	}
	return nil
}

// wrappedCount is the room guard.wrapped starts with: the five built-ins
// installGuards wraps now (RegExp.prototype's three symbols, the array
// iterators' next, Array.from) and a few of those wrapped when a script
// first touches them (lazyprotos.go, lazyglobals.go). Most phases touch
// few; the others grow it.
const wrappedCount = 12

// jsonLimits configures a JSON.stringify of this runtime: max bytes, the
// stack limit as its depth.
func (g *guard) jsonLimits(max int) jsonLimits {
	return jsonLimits{max: max, maxDepth: g.maxDepth, g: g}
}

// cutJSON configures an encoding of the host's own that stops at max bytes
// and returns what it has; cut (when not nil) is set when it stopped.
func (g *guard) cutJSON(max int, cut *bool) jsonLimits {
	return jsonLimits{max: max, maxDepth: g.maxDepth, g: g, truncate: true, cut: cut}
}

// refuseDeep ends the run for a structure nested past the stack limit.
func (g *guard) refuseDeep(what string) {
	g.sup.stop(&Error{Kind: ErrResource, Op: what, Message: fmt.Sprintf(
		"%s was given values nested deeper than %d levels, the stack limit", what, g.maxDepth)})
}

// The size functions estimate what one call would allocate, in bytes.

func (g *guard) repeat(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	return g.sized(orig, what, c, true, repeatSize)
}

func (g *guard) pad(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	return g.sized(orig, what, c, true, padSize)
}

func (g *guard) fill(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	return g.sized(orig, what, c, false, fillSize)
}

func (g *guard) from(orig goja.Callable, what string, c goja.FunctionCall) goja.Value {
	return g.sized(orig, what, c, false, fromSize)
}

// sized checks size before calling the original. toString converts this to
// a string first.
func (g *guard) sized(orig goja.Callable, what string, c goja.FunctionCall, toString bool, size func(g *guard, this goja.Value, args []goja.Value) float64) goja.Value {
	this := c.This
	if o, isObj := this.(*goja.Object); isObj && toString {
		this = o.ToString() // convert once, so a toString runs once
	}
	if n := size(g, this, c.Arguments); n > g.limit {
		g.refuse(what, n)
		return goja.Undefined()
	}
	return call(orig, this, c.Arguments...) // rethrown as it was: catchable exceptions stay catchable
}

func repeatSize(_ *guard, this goja.Value, args []goja.Value) float64 {
	n := arg(args, 0).ToFloat()
	if math.IsNaN(n) || math.IsInf(n, 0) || n <= 0 {
		return 0 // the original throws a RangeError or returns ""
	}
	return float64(strLen(this)) * math.Trunc(n)
}

func padSize(_ *guard, _ goja.Value, args []goja.Value) float64 { return arg(args, 0).ToFloat() }

func fillSize(g *guard, this goja.Value, _ []goja.Value) float64 { return g.length(this) * elemBytes }

func fromSize(g *guard, _ goja.Value, args []goja.Value) float64 {
	if o, ok := arg(args, 0).(*goja.Object); ok && isAbsent(o.GetSymbol(goja.SymIterator)) {
		return g.length(o) * elemBytes
	}
	return 0
}

func arraySize(_ *guard, _ *goja.Object, args []goja.Value) float64 {
	if len(args) == 1 {
		if isNumber(args[0]) {
			return args[0].ToFloat() * elemBytes
		}
	}
	return 0
}

func bufferSize(_ *guard, _ *goja.Object, args []goja.Value) float64 { return arg(args, 0).ToFloat() }

// typedArraySize takes the element size from the constructor, target.
func typedArraySize(g *guard, target *goja.Object, args []goja.Value) float64 {
	i := g.typedArray(target)
	if i < 0 {
		return 0
	}
	size := typedArraySizes[i]
	switch a := arg(args, 0).(type) {
	case *goja.Object:
		if c := a.ClassName(); c == "ArrayBuffer" || c == "SharedArrayBuffer" {
			return 0 // a view on memory that exists already
		}
		return g.length(a) * size
	default:
		if isNumber(a) {
			return a.ToFloat() * size
		}
	}
	return 0
}

type guard struct {
	vm          *goja.Runtime
	sup         *supervisor
	limit       float64
	hasInstance goja.Value
	typed       [len(typedArrays)]*goja.Object // the original constructors
	array       *goja.Object                   // the original Array
	buffer      *goja.Object                   // the original ArrayBuffer
	isArray     goja.Callable                  // the original Array.isArray
	wrapped     []wrapped                      // the guarded built-ins (guards.go)
	wrapTraps   *goja.ProxyTrapConfig          // their proxies' handler
	ctorTraps   *goja.ProxyTrapConfig          // the guarded constructors' handler
	lazy        *lazyGlobals                   // the globals guarded on first read (lazyglobals.go)
	parse       *goja.Callable                 // where installJSON keeps the original JSON.parse
	registered  bool                           // guardOf finds it (lazyprotos.go)

	maxDepth int
	joining  []*goja.Object           // the arrays being joined, outermost first
	steps    map[*goja.Object]float64 // iterators not yet done: steps taken
	bound    map[*goja.Object]int     // bound functions: how many binds deep
}

// typedArray is the index in typedArrays of the original constructor target,
// -1 if it is none of them.
func (g *guard) typedArray(target *goja.Object) int {
	for i, t := range g.typed {
		if t == target {
			return i
		}
	}
	return -1
}

func (g *guard) refuse(what string, size float64) {
	g.sup.stop(&Error{Kind: ErrResource, Op: what, Message: fmt.Sprintf(
		"%s would allocate about %.0f MiB, over the limit of %.0f MiB for one call", what, size/(1<<20), g.limit/(1<<20))})
}

// ctorGuard is the proxy handler of the guarded constructors.
type ctorGuard struct{ g *guard }

// what names the constructor for messages: "Uint8Array()". It reads no
// property: a script-defined getter must not run here.
func (c *ctorGuard) what(target *goja.Object) string {
	switch {
	case target == c.g.array:
		return "Array()"
	case target == c.g.buffer:
		return "ArrayBuffer()"
	}
	if i := c.g.typedArray(target); i >= 0 {
		return typedArrays[i] + "()"
	}
	return "a typed array constructor"
}

// size is what a call of the constructor target would allocate.
func (c *ctorGuard) size(target *goja.Object, args []goja.Value) float64 {
	switch target {
	case c.g.array:
		return arraySize(c.g, target, args)
	case c.g.buffer:
		return bufferSize(c.g, target, args)
	}
	return typedArraySize(c.g, target, args)
}

func (c *ctorGuard) apply(target *goja.Object, this goja.Value, args []goja.Value) goja.Value {
	if n := c.size(target, args); n > c.g.limit && !c.g.sup.halted() {
		c.g.refuse(c.what(target), n)
		return goja.Undefined()
	}
	f, _ := goja.AssertFunction(target)
	v, err := f(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

func (c *ctorGuard) construct(target *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
	if n := c.size(target, args); n > c.g.limit && !c.g.sup.halted() {
		c.g.refuse("new "+c.what(target), n)
		return c.g.vm.NewObject()
	}
	ctor, _ := goja.AssertConstructor(target)
	o, err := ctor(newTarget, args...)
	if err != nil {
		panic(err)
	}
	return o
}

// constructor replaces the global name (unless global is nil), and the
// constructor of its prototype (new Uint8Array(0).constructor would reach
// the original otherwise), with a proxy of target that checks size on both
// call and new; everything else reaches the original. It returns the
// original.
func (g *guard) constructor(global, target *goja.Object, name string, traps *goja.ProxyTrapConfig) *goja.Object {
	v := g.vm.ToValue(g.vm.NewProxy(target, traps))
	if proto, ok := target.Get("prototype").(*goja.Object); ok {
		_ = proto.DefineDataProperty("constructor", v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	// goja's proxies do not implement instanceof; answer it for the
	// original, which the proxy's get reaches (the typed arrays inherit
	// theirs from %TypedArray%).
	if g.typedArray(target) < 0 {
		_ = target.DefineDataPropertySymbol(goja.SymHasInstance, g.hasInstance, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	if global != nil {
		_ = global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	return target
}

// inherits is OrdinaryHasInstance: is ctor.prototype on v's prototype chain?
func inherits(v, ctorVal goja.Value) bool {
	ctor, isCtor := ctorVal.(*goja.Object)
	if !isCtor {
		return false
	}
	o, ok := v.(*goja.Object)
	proto, isObj := ctor.Get("prototype").(*goja.Object)
	if !ok || !isObj {
		return false
	}
	for p := o.Prototype(); p != nil; p = p.Prototype() {
		if p.SameAs(proto) {
			return true
		}
	}
	return false
}

// length is ToLength(o.length) as a float, 0 for non-objects.
func (g *guard) length(v goja.Value) float64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	n := o.Get("length")
	if isAbsent(n) {
		return 0
	}
	f := n.ToFloat()
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return math.Trunc(f)
}

func arg(args []goja.Value, i int) goja.Value {
	if i < len(args) {
		return args[i]
	}
	return goja.Undefined()
}

func isNumber(v goja.Value) bool { return goja.IsNumber(v) }

// strLen is the length in UTF-16 units of a primitive's string form.
func strLen(v goja.Value) int {
	if s, ok := v.ToString().(goja.String); ok {
		return s.Length()
	}
	return len(v.String())
}
