package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The typed arrays share one guard; each still refuses with its own name
// and element size, and instanceof answers for the constructor asked.
func TestTypedArrayGuards(t *testing.T) {
	t.Parallel()
	heavy.RLock()
	defer heavy.RUnlock()
	lim := testLimits()
	lim.MaxHeapGrowth = 64 << 20
	for i, name := range typedArrays {
		// Just over the limit for this element size is refused; a
		// sixteenth of it is allowed.
		over := int(float64(lim.MaxHeapGrowth)/typedArraySizes[i]) + 1000
		under := over / 16
		code := "new " + name + "(" + strconv.Itoa(under) + "); new " + name + "(" + strconv.Itoa(over) + "); return 1;"
		s := load(t, handlers{producer: code})
		_, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, lim)
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrResource || !strings.Contains(e.Message, "new "+name+"() would allocate") {
			t.Errorf("%s: err = %v", code, err)
		}
		if _, err := invokeUnlocked(load(t, handlers{producer: name + "(" + strconv.Itoa(over) + ");"}), PhaseProducer, &recordingHost{}, lim); !errors.As(err, &e) || !strings.Contains(e.Message, name+"() would allocate") {
			t.Errorf("%s() without new: err = %v", name, err)
		}
	}
	s := load(t, handlers{producer: `class B extends Uint8Array {}
        const u = new Uint8Array(2), b = new B(2);
        return [u instanceof Uint8Array, u instanceof Int8Array, u instanceof B, b instanceof B, b instanceof Uint8Array,
          new Float64Array(1) instanceof Float64Array, new ArrayBuffer(1) instanceof ArrayBuffer, u.buffer instanceof ArrayBuffer];`})
	out, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, lim)
	if want := `[true,false,false,true,true,true,true,true]`; err != nil || string(out.State) != want {
		t.Errorf("instanceof: %s, %v; want %s", out.State, err, want)
	}
}

// A file whose default export is not the object it hands to Keep.workflow
// runs with esbuild's export helpers, reading the default export.
func TestDefaultExportOtherThanKeepWorkflow(t *testing.T) {
	t.Parallel()
	src := `const base = Keep.workflow({
  name: "t",
  topics: { "a": {} },
  producers: { p: { publishes: ["a"], schedule: { interval: "1m" }, handler: async () => 1 } },
});
export default Object.assign({}, base, { producers: { p: { publishes: ["a"], schedule: { interval: "1m" }, handler: async () => 2 } } });
`
	s, err := loadHere("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if s.bare != nil {
		t.Error("the bare program was used for a default export that Keep.workflow did not return")
	}
	out, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, testLimits())
	if err != nil || string(out.State) != "2" {
		t.Errorf("state = %v, %v; want 2 (the default export's handler)", out, err)
	}

	if s := loadLocal(t, handlers{}); s.bare == nil {
		t.Error("the usual form does not use the bare program")
	}
}

// The shared heap watchdog stops sampling once no run is watched. The test
// is not parallel: the parallel tests wait until it is over, so no other run
// is watched while it looks. It fails, rather than passing without having
// looked, when the run it makes was not watched: the sampler must be seen
// running, watching it, from inside the run.
func TestHeapWatchdogIdles(t *testing.T) {
	s := loadLocal(t, handlers{producer: `ctx.registerInput({ source: "s", type: "t", id: "1", title: "x" }); return 1;`})
	h := &watchdogProbe{}
	lim := testLimits()
	if lim.MaxHeapGrowth == 0 {
		t.Fatal("the test limits watch no heap: nothing to check")
	}
	if _, err := invokeUnlocked(s, PhaseProducer, h, lim); err != nil {
		t.Fatal(err)
	}
	if !h.called {
		t.Fatal("the run made no host call: the watchdog was not looked at during it")
	}
	if !h.running || h.watches == 0 {
		t.Fatalf("during the run the watchdog ran %v with %d watches: the run was not watched", h.running, h.watches)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		heapWatchdog.mu.Lock()
		running, n := heapWatchdog.running, len(heapWatchdog.watches)
		heapWatchdog.mu.Unlock()
		if !running && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the heap watchdog still runs with %d watches after every run ended", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watchdogProbe reads the heap watchdog's state when the script registers
// an input, that is while the run is watched.
type watchdogProbe struct {
	recordingHost
	called, running bool
	watches         int
}

func (h *watchdogProbe) RegisterInput(ctx context.Context, in InputRequest) error {
	heapWatchdog.mu.Lock()
	h.called, h.running, h.watches = true, heapWatchdog.running, len(heapWatchdog.watches)
	heapWatchdog.mu.Unlock()
	return h.recordingHost.RegisterInput(ctx, in)
}

// consumerBench is the consumer both benchmarks run: prepare reads an event
// and reserves it, mutate makes its one mutator call, next publishes; and a
// host holding the event. local: the script runs in this process (the
// runtime pool's benchmark), not in a worker.
func consumerBench(b *testing.B, local bool) (*Script, *recordingHost) {
	ld := load
	if local {
		ld = loadLocal
	}
	s := ld(b, handlers{
		prepare: `const evs = await ctx.peek("a", { limit: 1 });
        return { reservations: [{ topic: "a", ids: evs.map((e) => e.messageId) }], data: { n: evs.length, first: evs[0]?.payload } };`,
		mutate: `await ctx.files.write({ path: "x", text: String(prepared.data.n) });`,
		next:   `await ctx.publish("b", { messageId: "m", payload: { n: prepared.data.n, result: mutationResult } });`,
	})
	return s, &recordingHost{events: map[string][]Event{"a": {{MessageID: "m1", Payload: json.RawMessage(`{"x":1}`), CreatedAt: time.Unix(0, 0)}}}}
}

// BenchmarkConsumerRun is one consumer run: prepare reads an event and
// reserves it, mutate makes its one mutator call, next publishes. Each
// phase runs in its own runtime, as the engine runs them.
func BenchmarkConsumerRun(b *testing.B) {
	s, h := consumerBench(b, false)
	lim := testLimits()
	b.ReportAllocs()
	for b.Loop() {
		h.mu.Lock()
		h.published = nil
		h.mu.Unlock()
		out, err := invokeUnlocked(s, PhasePrepare, h, lim, json.RawMessage(`{"n":1}`))
		if err != nil {
			b.Fatal(err)
		}
		prepared := out.Prepare.Raw
		if out, err = invokeUnlocked(s, PhaseMutate, h, lim, prepared); err != nil || out.Mutation == nil {
			b.Fatal(out, err)
		}
		if _, err := invokeUnlocked(s, PhaseNext, h, lim, prepared, json.RawMessage(`{"ok":true}`)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPhaseLatency is the wall time of one phase from Run's call to its
// return, with the pool full. The engine's phases sit on one serial path and
// the pool's fill overlaps them on another core, so the fill is kept out of
// the timed part: the filler is held off while a phase runs and the pool is
// topped up with the timer stopped. What is timed, and the allocations
// counted, are the phase's own.
func BenchmarkPhaseLatency(b *testing.B) {
	s, h := consumerBench(b, true)
	lim := testLimits()
	prepared := json.RawMessage(`{"reservations":[{"topic":"a","ids":["m1"]}],"data":{"n":1,"first":{"x":1}}}`)
	holdFiller := func(hold bool) {
		runtimes.mu.Lock()
		runtimes.filling = hold
		runtimes.mu.Unlock()
	}
	runtimes.take(keyOf(withDefaults(lim))) // the pool serves these limits
	b.Cleanup(func() { holdFiller(false) })
	for _, ph := range []struct {
		phase Phase
		args  []json.RawMessage
	}{
		{PhasePrepare, []json.RawMessage{json.RawMessage(`{"n":1}`)}},
		{PhaseMutate, []json.RawMessage{prepared}},
		{PhaseNext, []json.RawMessage{prepared, json.RawMessage(`{"ok":true}`)}},
	} {
		b.Run(string(ph.phase), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				h.mu.Lock()
				h.published = nil
				h.mu.Unlock()
				runtimes.fill() // waits for other fillers' runtimes too, then ends
				holdFiller(true)
				b.StartTimer()
				if _, err := invokeUnlocked(s, ph.phase, h, lim, ph.args...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWorkerPhase is the smallest phase in a worker (`return 1`), with
// what the host process spends on it: CPU and context switches (a switch is
// a thread parked and woken; on an idle VM each costs a wake-up of tens of
// microseconds on the phase's path).
func BenchmarkWorkerPhase(b *testing.B) {
	s := load(b, handlers{producer: `return 1;`})
	h := &recordingHost{}
	lim := testLimits()
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	n := 0
	for b.Loop() {
		if _, err := invokeUnlocked(s, PhaseProducer, h, lim); err != nil {
			b.Fatal(err)
		}
		n++
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(n)/1e3, "host-cpu-µs/op")
	b.ReportMetric(float64(r1.Nvcsw+r1.Nivcsw-r0.Nvcsw-r0.Nivcsw)/float64(n), "host-switches/op")
}

// BenchmarkWorkerStart is what a new worker costs before its first run:
// the process (started twice, for its thread stacks) and every package's
// init, up to its answer to a load.
func BenchmarkWorkerStart(b *testing.B) {
	src := []byte(`export default Keep.workflow({ name: "t", topics: {}, producers: {}, consumers: {} });`)
	for b.Loop() {
		w, err := startWorker(loadMemory)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.send(&frame{Op: "load", Key: "k", Script: &wireLoad{File: "t.js", Source: src}}); err != nil {
			b.Fatal(err)
		}
		if f, err := readFrame(w.r); err != nil || f.Op != "done" {
			b.Fatal(f, err)
		}
		w.kill()
		<-w.exited
	}
}

// BenchmarkProducerPublishes is a producer in a worker that registers and
// publishes 1,000 inputs, as files→http's does for a folder of 1,000 files:
// the host calls such a run makes, one after another.
func BenchmarkProducerPublishes(b *testing.B) {
	s := load(b, handlers{producer: `for (let i = 0; i < 1000; i++) {
          const inputId = ctx.registerInput({ source: "files", type: "file", id: "f" + i, title: "F" + i });
          await ctx.publish("a", { messageId: "m" + i, inputId, payload: { id: "f" + i } });
        }
        return {};`})
	lim := testLimits()
	for b.Loop() {
		if _, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, lim); err != nil {
			b.Fatal(err)
		}
	}
}
