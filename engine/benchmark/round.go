package benchmark

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// One files→http round is measured the same way whoever does the job, keep
// (its daemon, the keep binary: its pid is the daemon and its script
// workers) or Node-RED (its process): ready, then settled, then the drop,
// then the wait for the sink in this process to have every item's first
// POST. CPU and peak resident set are read from /proc for the pid with its
// children over that window; latency is taken at the sink. Nothing this
// process does — the drop, the sink's HTTP server, the bench's own
// bookkeeping — is in either side's figures.

// settle is how long a side, once ready (Node-RED's port open; keep's
// workflow deployed and its producer's first run committed), is left before
// the drop: its start-up's work done.
const settle = 2 * time.Second

// failedEvery is how often a round asks whether its side has failed while
// it waits (one attention query of keep's daemon; Node-RED's exit).
const failedEvery = 2 * time.Second

// window is one round's measured span.
type window struct {
	pid    int
	done   <-chan struct{} // the sink has every item's first POST
	within time.Duration
	// failed is asked every failedEvery while waiting: an error ends the
	// round (a run that failed never reaches the sink).
	failed func(context.Context) error
	// hook, when set, runs inside the window before the drop, in this
	// process, given the pid (tests: work of the bench's own that must not
	// count; a profiler attached to the side).
	hook func(pid int)
}

// run drops the staged files into inbox and waits for the sink, returning
// the CPU seconds and peak resident set (KiB) of the pid with its children
// over the window.
func (w window) run(ctx context.Context, drop *Drop, staging, inbox string) (float64, int64, error) {
	resetPeak(w.pid)
	t0, err := treeTicks(w.pid)
	if err != nil {
		return 0, 0, err
	}
	if w.hook != nil {
		w.hook(w.pid)
	}
	if err := drop.Drop(staging, inbox); err != nil {
		return 0, 0, err
	}
	timeout := time.NewTimer(w.within)
	defer timeout.Stop()
	tick := time.NewTicker(failedEvery)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-w.done:
			waiting = false
		case <-tick.C:
			if err := w.failed(ctx); err != nil {
				return 0, 0, err
			}
		case <-timeout.C:
			if err := w.failed(ctx); err != nil {
				return 0, 0, err
			}
			return 0, 0, fmt.Errorf("the sink lacks items after %s", w.within)
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	t1, err := treeTicks(w.pid)
	if err != nil {
		return 0, 0, err
	}
	return float64(t1-t0) / clockTicks, treePeakKiB(w.pid), nil
}

// roundWithin bounds a round of n items against a sink answering after
// delay.
func roundWithin(n int, delay time.Duration) time.Duration {
	return time.Duration(n)*(50*time.Millisecond+delay) + time.Minute
}

// roundFigures are a round's figures from the sink's first POSTs.
func roundFigures(n int, drop *Drop, first map[string]time.Time, cpu float64, peakKiB int64) *FilesPostRound {
	f := &FilesPostRound{Items: n, Lat: make([]float64, 0, n), CPU: cpu, PeakRSSMB: float64(peakKiB) / 1024}
	var last time.Time
	for name, at := range first {
		f.Lat = append(f.Lat, float64(at.Sub(drop.Dropped[name]).Microseconds())/1000)
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(f.Lat)
	f.Span = last.Sub(drop.Start)
	f.Drop = drop.Took
	f.ItemsPerS, f.CPUPer1000 = float64(n)/f.Span.Seconds(), f.CPU*1000/float64(n)
	return f
}

// resetPeak starts the peak resident set of pid and its children again
// from what they hold now (start-up's own peak is not the round's).
func resetPeak(pid int) {
	for _, p := range append([]int{pid}, childPIDs(pid)...) {
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p), []byte("5"), 0)
	}
}

// treePeakKiB is the peak resident set of pid and its live children, in
// KiB: keep's daemon and its script workers.
func treePeakKiB(pid int) int64 {
	kib, _ := peakRSSKiB(pid)
	for _, c := range childPIDs(pid) {
		if k, err := peakRSSKiB(c); err == nil {
			kib += k
		}
	}
	return kib
}
