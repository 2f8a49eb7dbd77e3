package sandbox

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestWorkersRunWithTimerSlack: every thread of a worker, the runtime's
// monitor among them, runs with keep's timer slack, whatever the slack of
// the process that starts it.
func TestWorkersRunWithTimerSlack(t *testing.T) {
	t.Parallel()
	// a job done: the worker has started again with small stacks and its
	// runtime's threads are up
	_, w, err := converse(t.Context(), &frame{Op: opLoad, Key: "slack", Script: &wireLoad{File: "w.js",
		Source: []byte(`export default Keep.workflow({ name: "w", producers: {} });`)}}, nil, withDefaults(Limits{}), loadMemory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.kill(); <-w.exited })
	for _, tid := range threadsOf(t, w.cmd.Process.Pid) {
		if slack := timerSlackOf(t, tid); slack < TimerSlack {
			t.Errorf("worker thread %s runs with a timer slack of %d ns, want %d", tid, slack, TimerSlack)
		}
	}
}

func threadsOf(t *testing.T, pid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []string
	for _, e := range ents {
		tids = append(tids, e.Name())
	}
	return tids
}

func timerSlackOf(t *testing.T, tid string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + tid + "/timerslack_ns")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
