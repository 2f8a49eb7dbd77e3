package sandbox

import (
	"errors"

	"github.com/dop251/goja"
)

// A phase's host functions (console, the ctx operations, the connector
// accessors) are built with its runtime, in the pool's fill, rather than on
// the phase's critical path. Each reads the run from the runtime it was
// built in (fresh.run), which bind sets once, when a run takes the runtime:
// a runtime serves one run, so its functions serve that run and no other,
// and once the run is over its supervisor is closed and they do nothing.

// prebuilt is what prebuild makes, in fresh.
type prebuilt struct {
	run     *run         // the one run this runtime serves, set by bind
	console goja.Value   // the accessor that builds console on first read, installed as a global when the run starts
	ctx     *goja.Object // ctx with its operations; the run adds its connectors
	conns   []*connSlot  // accessors for the run's connectors (lazy.go)
}

// prebuild builds f's host functions, bound to no run yet.
func (f *fresh) prebuild() {
	f.console = f.consoleAccessor()
	f.ctx = f.newCtxOps()
	n := int(connSlots.Load())
	f.conns = make([]*connSlot, n)
	for i := range f.conns {
		f.conns[i] = f.newConnSlot()
	}
}

// errRebound is a bug of ours: a runtime taken by a second run.
var errRebound = errors.New("sandbox: a runtime was handed to a second run")

// bind makes r the run f's host functions serve, once.
func (f *fresh) bind(r *run) error {
	if f.run != nil {
		return errRebound
	}
	f.run = r
	return nil
}
