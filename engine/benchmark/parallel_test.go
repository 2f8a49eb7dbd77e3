package benchmark

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestParallelFailsOnABlockedWorkflow: a workflow the engine blocks ends
// the parallel row with its name and reason, where the row waited for its
// events for ever; and the row's engine is stopped as it returns.
func TestParallelFailsOnABlockedWorkflow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fail := func(src string) string {
		return strings.Replace(src, "async mutate(ctx, prepared) {", `async mutate(ctx, prepared) { throw new Error("failed by the bench's test");`, 1)
	}
	var r Results
	err := parallel(ctx, Options{Dir: t.TempDir(), Inputs: 16 * 10, Logf: t.Logf, editWorkflow: fail}, &r)
	if err == nil || !strings.Contains(err.Error(), "blocked") || !strings.Contains(err.Error(), "pipeline-") {
		t.Fatalf("parallel = %v; want an error naming the blocked workflows", err)
	}
	t.Log(err)
	// the row returned early: its engine stopped before its database
	// closed, where its workflows went on stepping through a closed one
	// (and took the test process with them)
	buf := make([]byte, 1<<20)
	if st := string(buf[:runtime.Stack(buf, true)]); strings.Contains(st, "keep/engine.(*Engine).loop") {
		t.Errorf("an engine's loop still runs after the row returned:\n%s", st)
	}
}
