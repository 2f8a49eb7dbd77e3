package sandbox

import (
	"runtime/debug"
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
// judges, so only what the script keeps can stop it (in this process, where
// the collector can be held off).
func TestWatchdogCollectsBeforeItStops(t *testing.T) {
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
