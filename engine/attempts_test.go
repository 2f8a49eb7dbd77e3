package engine

import (
	"context"
	"testing"
	"time"
)

// TestHistoryReadsAsOutcomes: an attempt that did nothing and was made
// again for the same input reads as one output with its attempts counted;
// status counts that outcome, and the run of the first attempt does not
// say it is still paused once a new run took its work over.
func TestHistoryReadsAsOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a call that gave up, retried and applied is one output, counted once, its old run retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("429", 50) // more than the sends allowed: the call gives up
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drainUntilQuiet(time.Hour)
		if ms := b.mutationsBy(""); len(ms) != 1 || ms[0].Status != MutationFailed {
			t.Fatalf("mutations %+v, want the one that gave up", ms)
		}
		if c := b.workflow("push").Counts.Outputs["http"]; c.Failed != 1 {
			t.Fatalf("counts %+v, want the failure counted while nothing followed it", c)
		}
		s.Set("ok", 0)
		if err := b.e.Retry(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drainUntilQuiet(time.Hour)
		ms := b.mutationsBy("")
		if len(ms) != 2 || ms[0].Status != MutationFailed || ms[1].Status != MutationApplied {
			t.Fatalf("mutations %+v, want the ledger to keep both rows", ms)
		}
		in := b.inputs("push")[0]
		if len(in.Outputs) != 1 || in.Outputs[0].Status != MutationApplied || in.Outputs[0].Attempts < 3 {
			t.Fatalf("outputs %+v, want one applied, its attempts counted", in.Outputs)
		}
		if c := b.workflow("push").Counts.Outputs["http"]; c.Failed != 0 || c.Applied != 1 {
			t.Fatalf("counts %+v, want one outcome: applied", c)
		}
		for _, r := range b.runs("push") {
			if r.Status == RunPausedTransient {
				t.Errorf("run %s still says paused:transient after its retry applied", r.ID)
			}
			if r.ID == ms[0].RunID && r.Status != RunRetried {
				t.Errorf("the first attempt's run is %s, want retried", r.Status)
			}
		}
	})

	t.Run("a refusal a later attempt did not follow stays a failure", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		s.Set("400", 0)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		in := b.inputs("push")[0]
		if len(in.Outputs) != 1 || in.Outputs[0].Status != MutationFailed || in.Outputs[0].Attempts != 0 {
			t.Fatalf("outputs %+v, want the one failure, one attempt", in.Outputs)
		}
		if c := b.workflow("push").Counts.Outputs["http"]; c.Failed != 1 {
			t.Fatalf("counts %+v, want the failure counted", c)
		}
	})
}
