package sandbox

import (
	"strings"
	"sync/atomic"

	"github.com/dop251/goja"
)

// ctx.<connector> is an accessor that builds the connector's object, one
// host function per method, when the script first reads it. A phase uses one
// or two of the connectors the facade offers, and every host function costs
// the runtime about a kilobyte; building them all for every phase was a fifth
// of what a consumer run allocated. Assigning to ctx.<connector> replaces it,
// as it did when it was a plain property.
//
// The accessor's two functions are the same for every connector but for the
// connector they serve, so the pool builds them ahead (connSlot) and a run
// only points a slot at its connector; a runtime with too few slots builds
// the others on the spot.

// connSlot is the accessor of one ctx.<connector>: which connector it is
// and its object once read or assigned are the run's, set at run time.
type connSlot struct {
	get, set goja.Value
	c        *facadeConn
	obj      goja.Value
}

// maxConnSlots bounds the slots a pooled runtime is built with.
const maxConnSlots = 32

// connSlots is how many slots the pool builds: the most connectors a run
// has put on ctx so far, so a process builds none it does not use.
var connSlots atomic.Int32

// newConnSlot builds an accessor for the run bound to f (bind.go).
func (f *fresh) newConnSlot() *connSlot {
	sl := &connSlot{}
	sl.get = f.vm.ToValue(func(goja.FunctionCall) goja.Value {
		r := f.run
		if r == nil || sl.c == nil {
			return goja.Undefined()
		}
		if sl.obj == nil {
			o := r.vm.NewObject()
			for j := range sl.c.methods {
				_ = o.Set(sl.c.methods[j].method, r.connectorCall(&sl.c.methods[j]))
			}
			sl.obj = o
		}
		return sl.obj
	})
	sl.set = f.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if f.run != nil && sl.c != nil {
			sl.obj = call.Argument(0)
		}
		return goja.Undefined()
	})
	return sl
}

// defineConnector puts the facade's i-th connector on ctx.
func (r *run) defineConnector(ctx *goja.Object, i int) {
	c := &r.s.facade[i]
	var sl *connSlot
	if i < len(r.conns) {
		sl = r.conns[i]
	} else {
		sl = r.newConnSlot()
		if n := min(len(r.s.facade), maxConnSlots); int32(n) > connSlots.Load() {
			connSlots.Store(int32(n))
		}
	}
	sl.c = c
	target, prop := ctx, c.name
	if ns, rest, nested := strings.Cut(c.name, "."); nested {
		target, prop = r.namespace(ctx, ns), rest // "mcp.NAME" is ctx.mcp.NAME
	}
	_ = target.DefineAccessorProperty(prop, sl.get, sl.set, goja.FLAG_TRUE, goja.FLAG_TRUE)
}

// namespace is ctx.<ns>, a plain object holding connectors named "ns.X",
// made on first use in the run.
func (r *run) namespace(ctx *goja.Object, ns string) *goja.Object {
	if o, ok := ctx.Get(ns).(*goja.Object); ok {
		return o
	}
	o := r.vm.NewObject()
	_ = ctx.Set(ns, o)
	return o
}
