package engine

import (
	"context"
	"testing"
	"time"

	"keep/engine/api"
)

func TestRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("gc after the retention period keeps every input's outputs and drops finished traces", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", notesWorkflow)
		b.drain()
		runs := b.runs("notes")
		r := Retention{Traces: 24 * time.Hour, Runs: 24 * time.Hour}
		if rep, err := b.e.GC(ctx, r); err != nil || rep.Traces+rep.Runs != 0 {
			t.Fatalf("gc within the retention period: %+v (%v), want nothing pruned", rep, err)
		}
		b.clock.Advance(25 * time.Hour)
		rep, err := b.e.GC(ctx, r)
		if err != nil || rep.Traces == 0 {
			t.Fatalf("gc after it: %+v (%v), want the finished runs' traces pruned", rep, err)
		}
		for _, run := range runs {
			if lines, err := b.e.Trace(ctx, run.ID); err == nil && len(lines) > 0 {
				t.Fatalf("run %s kept %d trace lines", run.ID, len(lines))
			}
		}
		ins := b.inputs("notes")
		if len(ins) != 1 || ins[0].Status != api.InputDone || len(ins[0].Outputs) != 2 {
			t.Fatalf("inputs after gc: %+v, want a.txt done with its 2 outputs", ins)
		}
		if d := b.workflow("notes"); d.Counts.InputsDone != 1 || d.Counts.Outputs["files"].Applied != 2 {
			t.Fatalf("status counts after gc: %+v", d.Counts)
		}
	})

	t.Run("the daily timer runs gc and stop waits for it", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.write("inbox/a.txt", "alpha")
		b.deploy("notes", notesWorkflow)
		b.drain()
		b.clock.Advance(25 * time.Hour)
		run := b.runs("notes")[0]
		stop := b.e.GCDaily(ctx, Retention{Traces: 24 * time.Hour}, time.Millisecond)
		deadline := time.After(30 * time.Second)
		for {
			lines, err := b.e.Trace(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) == 0 {
				break
			}
			select {
			case <-deadline:
				t.Fatal("the timer's gc did not prune within 30s")
			case <-time.After(5 * time.Millisecond):
			}
		}
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Fatal("stop did not return")
		}
	})
}
