package benchmark

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFilesPostPerf profiles keep's side of one files→http round: `perf
// record` attached to the daemon and its workers inside the round's window
// (workers started later are followed), written to $KEEP_BENCH_PERF:
//
//	KEEP_BENCH_PERF=/tmp/keep.perf go test ./engine/benchmark -run TestFilesPostPerf -v
//	perf report -i /tmp/keep.perf --children --sort sym -g none
//
// KEEP_BENCH_PERF_EVENT=cpu-clock samples the kernel's side too (as root).
//
// The host is the pid logged; the other pids are its workers.
func TestFilesPostPerf(t *testing.T) {
	out := os.Getenv("KEEP_BENCH_PERF")
	if out == "" {
		t.Skip("set KEEP_BENCH_PERF=PATH to profile keep over a files→http round")
	}
	var perf *exec.Cmd
	attach := func(pid int) {
		pids := []string{strconv.Itoa(pid)}
		for _, c := range childPIDs(pid) {
			pids = append(pids, strconv.Itoa(c))
		}
		t.Logf("the daemon is pid %d; its workers now: %v", pid, pids[1:])
		// user space only unless KEEP_BENCH_PERF_EVENT says otherwise
		// (cpu-clock: the kernel's side too, where perf_event_paranoid or
		// root allows it)
		event := "cpu-clock:u"
		if e := os.Getenv("KEEP_BENCH_PERF_EVENT"); e != "" {
			event = e
		}
		perf = exec.Command("perf", "record", "-F", "1999", "-g", "-e", event, "-o", out, "-p", strings.Join(pids, ","))
		perf.Stdout, perf.Stderr = os.Stderr, os.Stderr
		if err := perf.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // attached before the drop
	}
	_, err := FilesPost(context.Background(), Options{Dir: t.TempDir(), FilesPostItems: 1000, NodeRed: "/nonexistent/node-red",
		DaemonBinary: keepBin, Logf: t.Logf, roundHook: attach})
	if perf != nil {
		perf.Wait() // perf ends with the daemon it follows
	}
	if err != nil {
		t.Fatal(err)
	}
}
