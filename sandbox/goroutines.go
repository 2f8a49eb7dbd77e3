package sandbox

import "sync"

// The goroutines of a run go deep: goja running a phase, SQLite committing
// the run's writes under the engine, a worker's frames decoded, a host call
// served. A goroutine started for each begins on a small stack and grows it
// by copying, doubling after doubling, every time. Go hands such work to a
// goroutine that ran some before, its stack already grown, and starts one
// only when none is idle. On the files→http row the keep daemon spent about
// 4% of its CPU copying stacks (runtime.newstack under the run, prepare and
// host-call goroutines) before they went through Go.

// maxIdleGoroutines is how many goroutines wait for work at most: a run's
// few, times the runs a concurrent consumer has at once. One that finishes
// with this many idle ends; the garbage collector shrinks the stacks of
// those that wait long.
const maxIdleGoroutines = 32

var idle struct {
	sync.Mutex
	ready []chan func()
}

// Go runs fn on a goroutine of its own, as the go statement does, reusing an
// idle one when there is one.
func Go(fn func()) {
	idle.Lock()
	if n := len(idle.ready); n > 0 {
		c := idle.ready[n-1]
		idle.ready = idle.ready[:n-1]
		idle.Unlock()
		c <- fn
		return
	}
	idle.Unlock()
	go serve(make(chan func(), 1), fn)
}

// serve runs fn, then whatever Go hands it next, until it finds enough
// goroutines idle.
func serve(c chan func(), fn func()) {
	for {
		fn()
		idle.Lock()
		if len(idle.ready) >= maxIdleGoroutines {
			idle.Unlock()
			return
		}
		idle.ready = append(idle.ready, c)
		idle.Unlock()
		fn = <-c
	}
}
