package sandbox

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestGarbageIsNotGrowth: a phase that keeps a live set of some MiB and
// churns through many times its heap limit in temporaries ends normally in
// its worker; the watchdog stops what a script keeps, not what the worker
// has yet to collect.
func TestGarbageIsNotGrowth(t *testing.T) {
	s := load(t, handlers{producer: `
    const kept = [];
    for (let i = 0; i < 60000; i++) kept.push("item-" + i + "-" + "x".repeat(40));
    let n = 0;
    for (let i = 0; i < 300000; i++) { const o = { a: i, b: "y" + i }; n += JSON.stringify(o).length; }
    return { kept: kept.length, n };`})
	lim := testLimits()
	lim.MaxHeapGrowth = 32 << 20
	// what is judged is the heap, not time: the churn takes about two
	// seconds alone, and went past testLimits' five beside other packages
	lim.WallTime = time.Minute
	out, err := invoke(t, s, PhaseProducer, &recordingHost{}, lim)
	if err != nil {
		t.Fatalf("a run that keeps little and churns much: %v", err)
	}
	if want := `{"kept":60000,"n":7577780}`; string(out.State) != want {
		t.Errorf("state %s, want %s", out.State, want)
	}

	// what a script keeps is still stopped
	s = load(t, handlers{producer: `
    const kept = [];
    for (let i = 0; i < 2000000; i++) kept.push({ i, s: "item-" + i });
    return kept.length;`})
	if _, err := invoke(t, s, PhaseProducer, &recordingHost{}, lim); err == nil {
		t.Error("a run that keeps 2,000,000 objects under a 32 MiB heap limit ended normally")
	} else if e, ok := err.(*Error); !ok || e.Kind != ErrResource {
		t.Errorf("a run that keeps too much: %v, want a resource error", err)
	}
}

// TestWatchdogCollectsBeforeItStops: with the collector off, a phase's
// garbage alone passes its heap limit; the watchdog collects before it
// judges, so only what the script keeps can stop it (in a process of its
// own, where the collector can be held off and no other test's live data
// counts as the phase's growth). The process gets two threads for Go code
// whatever the machine's cores: with one, the script runs on through the
// watchdog's collection, and what it allocates meanwhile the collector
// counts live (here a quarter of a second and 100 MiB on one core) — a
// worker, which has one, collects long before its watchdog's line
// (gcpace.go; TestGarbageIsNotGrowth runs there). Judging less strictly
// was tried: it let a string doubling without end reach the worker's
// address-space bound before the watchdog (5 of 30 runs of TestLimits at
// GOMAXPROCS=1, none before).
func TestWatchdogCollectsBeforeItStops(t *testing.T) {
	if alone(t, "GOMAXPROCS=2") {
		return
	}
	heavy.Lock()
	defer heavy.Unlock()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	s := loadLocal(t, handlers{producer: `
    let n = 0;
    for (let i = 0; i < 400000; i++) { const o = { a: i, b: "y" + i }; n += JSON.stringify(o).length; }
    return n;`})
	lim := testLimits()
	lim.MaxHeapGrowth = 16 << 20
	lim.WallTime = time.Minute // the heap is judged, not time (as above)
	if _, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, lim); err != nil {
		t.Fatalf("a run of garbage only: %v", err)
	}
	s = loadLocal(t, handlers{producer: `
    const kept = [];
    for (let i = 0; i < 2000000; i++) kept.push({ i, s: "item-" + i });
    return kept.length;`})
	if _, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, lim); err == nil {
		t.Error("a run that keeps 2,000,000 objects under a 16 MiB heap limit ended normally")
	}
}

// aloneEnv names the test a process runs alone.
const aloneEnv = "KEEP_TEST_ALONE"

// alone runs the calling test again, alone, in a process of its own with
// env added to its environment, and reports true in the process that asked
// (the test is judged there by the other's exit); false in the process that
// runs it. A test that judges the whole process's heap needs it: the
// package's other tests run beside it and their live data would be its
// growth.
func alone(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return false
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), aloneEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s, alone in a process: %v\n%s", t.Name(), err, out)
	}
	return true
}
