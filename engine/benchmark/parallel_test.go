package benchmark

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestParallelFailsOnABlockedWorkflow: a workflow the engine blocks ends
// the parallel row with its name and reason, where the row waited for its
// events for ever.
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
}
