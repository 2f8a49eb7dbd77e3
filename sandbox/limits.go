package sandbox

import (
	"context"
	"fmt"
	"math"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// maxBuiltinAlloc caps what one call of a guarded built-in may allocate. The
// heap watchdog only sees growth between samples; a single native call such
// as "x".repeat(1e9) allocates a gigabyte before any sample (goja.md fact 6).
const maxBuiltinAlloc = 64 << 20

// valueBytes is the cost of one array slot in goja (a Value interface).
const valueBytes = 16

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
// nil) and the heap watchdog. The returned function stops all three and
// waits for the watchdog to exit.
func (s *supervisor) watch(ctx context.Context, wall time.Duration, maxHeap uint64) func() {
	var stops []func()
	if wall > 0 {
		t := time.AfterFunc(wall, func() {
			s.stop(&Error{Kind: ErrTimeout, Message: fmt.Sprintf("ran past the wall time of %s", wall), cause: context.DeadlineExceeded})
		})
		stops = append(stops, func() { t.Stop() })
	}
	if ctx != nil {
		stopCtx := context.AfterFunc(ctx, func() {
			s.stop(&Error{Kind: ErrCancelled, Message: "cancelled: " + context.Cause(ctx).Error(), cause: ctx.Err()})
		})
		stops = append(stops, func() { stopCtx() })
	}
	if maxHeap > 0 {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.watchHeap(done, maxHeap)
		}()
		stops = append(stops, func() { close(done); wg.Wait() })
	}
	return func() {
		for _, f := range stops {
			f()
		}
	}
}

// watchHeap interrupts the runtime once the Go heap has grown by more than
// maxHeap since the watch began. The heap is the process's, so concurrent
// runs count against each other; the limit is a backstop against runaway
// growth, not an accounting of one script.
func (s *supervisor) watchHeap(done <-chan struct{}, maxHeap uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	base := read()
	tick := time.NewTicker(heapSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if s.halted() { // stopped, or abandoned stuck in a native call
				return
			}
			if now := read(); now > base && now-base > maxHeap {
				s.stop(&Error{Kind: ErrResource, Message: fmt.Sprintf("the heap grew by %d MiB, over the limit of %d MiB", (now-base)>>20, maxHeap>>20)})
				return
			}
		}
	}
}

// installGuards wraps the built-ins that allocate in proportion to an
// argument in one native call, checking the size before they allocate.
func installGuards(vm *goja.Runtime, sup *supervisor, maxHeap uint64) {
	limit := float64(maxBuiltinAlloc)
	if maxHeap > 0 && float64(maxHeap) < limit {
		limit = float64(maxHeap)
	}
	g := guard{vm: vm, sup: sup, limit: limit}

	str := vm.Get("String").(*goja.Object).Get("prototype").(*goja.Object)
	g.method(str, "String.prototype.repeat", "repeat", func(this goja.Value, args []goja.Value) float64 {
		n := arg(args, 0).ToFloat()
		if math.IsNaN(n) || math.IsInf(n, 0) || n <= 0 {
			return 0 // the original throws a RangeError or returns ""
		}
		return float64(strLen(this)) * math.Trunc(n)
	})
	pad := func(this goja.Value, args []goja.Value) float64 { return arg(args, 0).ToFloat() }
	g.method(str, "String.prototype.padStart", "padStart", pad)
	g.method(str, "String.prototype.padEnd", "padEnd", pad)

	arr := vm.Get("Array").(*goja.Object)
	arrProto := arr.Get("prototype").(*goja.Object)
	g.method(arrProto, "Array.prototype.join", "join", g.joinSize)
	g.method(arrProto, "Array.prototype.fill", "fill", func(this goja.Value, _ []goja.Value) float64 {
		return g.length(this) * valueBytes
	})
	g.method(arr, "Array.from", "from", func(_ goja.Value, args []goja.Value) float64 {
		if o, ok := arg(args, 0).(*goja.Object); ok && isAbsent(o.GetSymbol(goja.SymIterator)) {
			return g.length(o) * valueBytes
		}
		return 0
	})
	array := g.constructor("Array", func(args []goja.Value) float64 {
		if len(args) == 1 {
			if _, num := args[0].Export().(int64); num || isNumber(args[0]) {
				return args[0].ToFloat() * valueBytes
			}
		}
		return 0
	})
	_ = arrProto.DefineDataProperty("constructor", array, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)

	g.constructor("ArrayBuffer", func(args []goja.Value) float64 { return arg(args, 0).ToFloat() })
	for name, size := range map[string]float64{
		"Int8Array": 1, "Uint8Array": 1, "Uint8ClampedArray": 1, "Int16Array": 2, "Uint16Array": 2,
		"Int32Array": 4, "Uint32Array": 4, "Float32Array": 4, "Float64Array": 8,
		"BigInt64Array": 8, "BigUint64Array": 8,
	} {
		g.constructor(name, func(args []goja.Value) float64 {
			switch a := arg(args, 0).(type) {
			case *goja.Object:
				if _, buf := a.Export().(goja.ArrayBuffer); buf {
					return 0 // a view on memory that exists already
				}
				return g.length(a) * size
			default:
				if isNumber(a) {
					return a.ToFloat() * size
				}
			}
			return 0
		})
	}
}

type guard struct {
	vm    *goja.Runtime
	sup   *supervisor
	limit float64
}

func (g guard) refuse(what string, size float64) {
	g.sup.stop(&Error{Kind: ErrResource, Op: what, Message: fmt.Sprintf(
		"%s would allocate about %.0f MiB, over the limit of %.0f MiB for one call", what, size/(1<<20), g.limit/(1<<20))})
}

// method replaces obj[name] with a non-enumerable wrapper that checks size
// before calling the original.
func (g guard) method(obj *goja.Object, what, name string, size func(this goja.Value, args []goja.Value) float64) {
	orig, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return
	}
	wrapped := func(call goja.FunctionCall) goja.Value {
		if g.sup.halted() {
			return goja.Undefined()
		}
		this := call.This
		if o, isObj := this.(*goja.Object); isObj && (name == "repeat" || name == "padStart" || name == "padEnd") {
			this = o.ToString() // convert once, so a toString runs once
		}
		if n := size(this, call.Arguments); n > g.limit {
			g.refuse(what, n)
			return goja.Undefined()
		}
		v, err := orig(this, call.Arguments...)
		if err != nil {
			panic(err) // rethrown as it was: catchable exceptions stay catchable
		}
		return v
	}
	_ = obj.DefineDataProperty(name, g.vm.ToValue(wrapped), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// constructor replaces the global name with a proxy of the constructor that
// checks size on both call and new; everything else reaches the original.
func (g guard) constructor(name string, size func(args []goja.Value) float64) goja.Value {
	target, ok := g.vm.Get(name).(*goja.Object)
	if !ok {
		return nil
	}
	what := name + "()"
	p := g.vm.NewProxy(target, &goja.ProxyTrapConfig{
		Apply: func(target *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			if n := size(args); n > g.limit && !g.sup.halted() {
				g.refuse(what, n)
				return goja.Undefined()
			}
			f, _ := goja.AssertFunction(target)
			v, err := f(this, args...)
			if err != nil {
				panic(err)
			}
			return v
		},
		Construct: func(target *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			if n := size(args); n > g.limit && !g.sup.halted() {
				g.refuse("new "+what, n)
				return g.vm.NewObject()
			}
			c, _ := goja.AssertConstructor(target)
			o, err := c(newTarget, args...)
			if err != nil {
				panic(err)
			}
			return o
		},
	})
	// goja's proxies do not implement instanceof; answer it for the
	// original, which the proxy's get reaches.
	_ = target.DefineDataPropertySymbol(goja.SymHasInstance, g.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return g.vm.ToValue(inherits(call.Argument(0), target))
	}), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	v := g.vm.ToValue(p)
	_ = g.vm.GlobalObject().DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return v
}

// inherits is OrdinaryHasInstance: is ctor.prototype on v's prototype chain?
func inherits(v goja.Value, ctor *goja.Object) bool {
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
func (g guard) length(v goja.Value) float64 {
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

// joinSize estimates a join: the separators plus the string elements.
// Elements that are objects are not converted here (that would run their
// toString twice); their size is not counted.
func (g guard) joinSize(this goja.Value, args []goja.Value) float64 {
	n := g.length(this)
	if n <= 1 && n*valueBytes <= g.limit {
		return 0
	}
	sep := 1.0
	if s := arg(args, 0); !goja.IsUndefined(s) {
		if _, isObj := s.(*goja.Object); !isObj {
			sep = float64(strLen(s))
		}
	}
	total := (n - 1) * sep
	if total > g.limit || n > g.limit {
		return math.Max(total, n)
	}
	o := this.(*goja.Object)
	for i := 0; i < int(n) && total <= g.limit; i++ {
		if e := o.Get(strconv.Itoa(i)); e != nil {
			if _, isObj := e.(*goja.Object); !isObj && !isAbsent(e) {
				total += float64(strLen(e))
			}
		}
	}
	return total
}

func arg(args []goja.Value, i int) goja.Value {
	if i < len(args) {
		return args[i]
	}
	return goja.Undefined()
}

func isNumber(v goja.Value) bool {
	switch v.Export().(type) {
	case int64, float64:
		return true
	}
	return false
}

// strLen is the length in UTF-16 units of a primitive's string form.
func strLen(v goja.Value) int {
	if s, ok := v.ToString().(goja.String); ok {
		return s.Length()
	}
	return len(v.String())
}
