package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// boundLimits bound a worker's memory at 256 MB and turn the guards' own
// heap limits off (a heap growth limit far past any machine), so what stops
// these scripts is the worker's bound, not the guards in front of it.
func boundLimits(wall time.Duration) Limits {
	l := testLimits()
	l.MaxMemory = 256 << 20
	l.MaxHeapGrowth = 1 << 50
	l.WallTime = wall
	return l
}

// children are the pids of this process's child processes.
func children(t *testing.T) map[int]bool {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]bool{}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, p := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(p)
			pids[n] = true
		}
	}
	return pids
}

// idlePids are the pids of the pool's warm workers.
func idlePids() map[int]bool {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	pids := map[int]bool{}
	for _, list := range procs.idle {
		for _, w := range list {
			pids[w.cmd.Process.Pid] = true
		}
	}
	return pids
}

// bounded runs code as a producer in a worker and checks that the run fails
// with a resource or time error whose message holds want, that no worker
// but the pool's idle ones is left (the one that ran the script is gone, so
// it holds no core), and that a run after it works.
func bounded(t *testing.T, lim Limits, code string, kind ErrorKind, want string) {
	t.Helper()
	heavy.Lock()
	defer heavy.Unlock()
	s := load(t, handlers{producer: "try {\n" + code + "\n} catch (e) { console.log(\"caught\", String(e)); }\nconsole.log(\"survived\");"})
	h := &recordingHost{}
	_, err := invokeUnlocked(s, PhaseProducer, h, lim)
	var e *Error
	if !errors.As(err, &e) || e.Kind != kind || !strings.Contains(e.Message, want) {
		t.Errorf("err = %v, want a %s error containing %q", err, kind, want)
	}
	if logs := h.logged(); len(logs) != 0 {
		t.Errorf("the script went on: %v", logs)
	}
	idle := idlePids()
	for pid := range children(t) {
		if !idle[pid] {
			t.Errorf("process %d, a worker not in the pool, is still there after the run", pid)
		}
	}
	ok := load(t, handlers{producer: `return 1;`})
	if out, err := invokeUnlocked(ok, PhaseProducer, &recordingHost{}, lim); err != nil || string(out.State) != "1" {
		t.Errorf("a run after the bound: %v, %v", out, err)
	}
}

// Go built-ins that allocate without asking the guards: the worker's memory
// bound ends the run, and only the run.
func TestWorkerMemoryBound(t *testing.T) {
	const big = `const s = "x".repeat(60e6);`
	const want = "script exceeded its memory limit (256 MB)"
	for _, tt := range []struct{ name, code string }{
		{"a template literal of 60 MB parts", big + " const t = `${s}${s}${s}${s}${s}${s}${s}${s}${s}${s}`; console.log(t.indexOf('y'));"},
		{"Object.keys of a 60 MB string", big + ` console.log(Object.keys(s).length);`},
		{"Object.assign of a 60 MB string", big + ` console.log(Object.keys(Object.assign({}, s)).length);`},
		{"normalize NFKD growth", `const s = "\uFDFA".repeat(30e6); console.log(s.normalize("NFKD").length);`},
	} {
		// a time limit long enough that memory, not time, ends them
		t.Run(tt.name, func(t *testing.T) { bounded(t, boundLimits(time.Minute), tt.code, ErrResource, want) })
	}
}

// Built-ins that loop in Go over 2**53 indexes ignore Interrupt: the worker
// is killed at the time limit.
func TestWorkerTimeBound(t *testing.T) {
	// lastIndexOf and includes make a key per index: on a busy machine they
	// were seen to reach a 256 MB bound within the second, so the memory
	// bound here is far enough behind that time is what ends them
	lim := boundLimits(time.Second)
	lim.MaxMemory = 2 << 30
	for _, m := range []string{"indexOf", "lastIndexOf", "includes"} {
		t.Run(m, func(t *testing.T) {
			bounded(t, lim, `[].`+m+`.call({ length: 2 ** 53 }, 1);`, ErrTimeout, "script exceeded its time limit (1s)")
		})
	}
}

// A file whose top level spins in a built-in fails to load, with a
// diagnostic, once its worker is killed (the daemon's deploy and validate
// load files so); loading goes on. (The top level runs under the guards and
// the heap watchdog at their default limits, which stop the growth cases of
// TestWorkerMemoryBound before the worker's bound does.)
func TestLoadBound(t *testing.T) {
	heavy.Lock()
	defer heavy.Unlock()
	for _, tt := range []struct{ name, top, want string }{
		{"indexOf over 2**53 indexes", "globalThis.n = [].indexOf.call({ length: 2 ** 53 }, 1);", "the top level script exceeded its time limit"},
	} {
		src := handlers{producer: `return 1;`}.source() + "\n" + tt.top + "\n"
		_, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
		var v *ValidationError
		if !errors.As(err, &v) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want a diagnostic containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := Load("t.js", []byte(handlers{producer: `return 1;`}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute}); err != nil {
		t.Errorf("a load after the bound: %v", err)
	}
}

// The host's record of the scripts a worker holds stays within what the
// worker keeps, however many versions a long-lived worker runs.
func TestKnownScriptsBounded(t *testing.T) {
	w := &worker{known: map[string]bool{}}
	for i := range 3 * scriptCacheMax {
		w.knows(strconv.Itoa(i))
		if len(w.known) > scriptCacheMax {
			t.Fatalf("after %d scripts the record holds %d, over %d", i+1, len(w.known), scriptCacheMax)
		}
	}
	if !w.known[strconv.Itoa(3*scriptCacheMax-1)] {
		t.Error("the last script run is not recorded")
	}
}

// TestLoadThatGrewRetires: a load whose top level grew its worker past half
// the worker's bound ends that worker, as a run does (spent): Go keeps the
// address space it reserved, so the next file loaded there would run out of
// it, and its load be blamed for the last one's memory.
func TestLoadThatGrewRetires(t *testing.T) {
	heavy.Lock()
	defer heavy.Unlock()
	// no warm load worker: the load starts its own
	procs.mu.Lock()
	warm := procs.idle[loadMemory]
	procs.idle[loadMemory] = nil
	procs.mu.Unlock()
	for _, w := range warm {
		w.kill()
	}
	// a page touched in each 8 MiB, not every byte: TypedArray fill sets
	// byte by byte, which took 1.3 s of a load's 2 s on its own
	top := `globalThis.kept = []; for (;;) { const a = new Uint8Array(8 << 20); for (let i = 0; i < a.length; i += 4096) a[i] = 1; kept.push(a); }`
	src := handlers{producer: `return 1;`}.source() + "\n" + top + "\n"
	// A load has 2 s (loadWallTime); a machine busy enough that the top
	// level cannot grow 256 MB in that time proves nothing either way, so
	// the load is tried again, a few times, until memory is what stops it.
	var err error
	for try := 0; try < 4; try++ {
		_, err = Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
		if err == nil || !strings.Contains(err.Error(), "ran past the wall time") {
			break
		}
		t.Logf("try %d: %v", try+1, err)
	}
	var v *ValidationError
	if !errors.As(err, &v) || !strings.Contains(err.Error(), "the heap grew") && !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("err = %v, want the top level stopped for its memory", err)
	}
	procs.mu.Lock()
	left := len(procs.idle[loadMemory])
	procs.mu.Unlock()
	if left != 0 {
		t.Errorf("the worker that loaded it went back to the pool (%d warm), past half its bound", left)
	}
	if _, err := Load("t.js", []byte(handlers{producer: `return 2;`}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute}); err != nil {
		t.Errorf("a load after it: %v", err)
	}
}

// A worker runs with one C malloc arena. A worker is linked with the C
// library whenever keep is (cgo), and glibc gives each thread that calls
// malloc an arena of its own, reserving 64 MiB of address space for it: a
// worker on a busy machine starts threads after its bound is set, and four
// such arenas took the whole 256 MB bound, so `return 1` on a fresh worker
// died "out of memory" with 4 MB of heap in use.
func TestWorkerOneMallocArena(t *testing.T) {
	heavy.Lock()
	defer heavy.Unlock()
	s := load(t, handlers{producer: `return 1;`})
	if _, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, boundLimits(time.Minute)); err != nil {
		t.Fatal(err)
	}
	pids := idlePids()
	if len(pids) == 0 {
		t.Fatal("no worker in the pool after a run")
	}
	for pid := range pids {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(strings.Split(string(env), "\x00"), "MALLOC_ARENA_MAX=1") {
			t.Errorf("worker %d runs without MALLOC_ARENA_MAX=1", pid)
		}
	}
}

// TestWorkerServesOffTheMainThread: a worker's main thread parks once and
// stays parked; jobs run on threads the runtime may share. Served from
// init's goroutine, which Go locks to the main thread, every frame the
// worker waits for hands its P from thread to thread and back, and the
// main thread sleeps and wakes at least once a job.
func TestWorkerServesOffTheMainThread(t *testing.T) {
	heavy.Lock()
	defer heavy.Unlock()
	s := load(t, handlers{producer: `return 1;`})
	run := func() {
		t.Helper()
		if _, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, boundLimits(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	run()
	// voluntary context switches of each warm worker's main thread
	switches := func() map[int]int {
		t.Helper()
		n := map[int]int{}
		for pid := range idlePids() {
			p := strconv.Itoa(pid)
			status, err := os.ReadFile("/proc/" + p + "/task/" + p + "/status")
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
					n[pid], _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
		}
		return n
	}
	before := switches()
	const jobs = 40
	for range jobs {
		run()
	}
	woke := 0
	for pid, n := range switches() {
		if b, ok := before[pid]; ok {
			woke += n - b
		}
	}
	// a signal can wake a parked thread now and then; a job wakes it always
	if woke >= jobs/4 {
		t.Errorf("the workers' main threads slept and woke %d times over %d jobs; they should stay parked", woke, jobs)
	}
}
