package benchmark

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestCPUSecondsCountsWorkers: keep's CPU includes a child process's, while
// it lives (as the script workers do) and once it has been waited for.
func TestCPUSecondsCountsWorkers(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	before := cpuSeconds()
	ticks0, err := treeTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sh", "-c", "while :; do :; done")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var spent int64
	for deadline := time.Now().Add(30 * time.Second); spent < 30; {
		if time.Now().After(deadline) {
			t.Fatalf("the child used %d ticks in 30 s", spent)
		}
		time.Sleep(20 * time.Millisecond)
		_, ticks, _, err := procStat(child.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		spent = ticks
	}
	if got, want := cpuSeconds()-before, float64(spent)/clockTicks; got < want {
		t.Errorf("with the child alive: %.2f s counted, the child alone used %.2f s", got, want)
	}
	if ticks, err := treeTicks(os.Getpid()); err != nil || ticks-ticks0 < spent {
		t.Errorf("treeTicks with the child alive: %d ticks counted (%v), the child alone used %d", ticks-ticks0, err, spent)
	}
	child.Process.Kill()
	child.Wait()
	if got, want := cpuSeconds()-before, float64(spent)/clockTicks; got < want {
		t.Errorf("with the child waited for: %.2f s counted, the child alone used %.2f s", got, want)
	}
	if ticks, err := treeTicks(os.Getpid()); err != nil || ticks-ticks0 < spent {
		t.Errorf("treeTicks with the child waited for: %d ticks counted (%v), the child alone used %d", ticks-ticks0, err, spent)
	}
}
