package benchmark

import (
	"context"
	"testing"
	"time"
)

// TestYear runs issue 17's measures at a small scale and checks each figure
// is there and consistent. It asserts no speed: timings depend on the
// machine.
func TestYear(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("a simulated stretch of days under retention grows by what the ledger keeps", func(t *testing.T) {
		o := Options{Dir: t.TempDir(), YearDays: 70, YearInputsPerDay: 20, Logf: t.Logf}
		o.defaults()
		r := &Results{Options: o}
		r.YearResults.init()
		if err := year(ctx, o, r); err != nil {
			t.Fatal(err)
		}
		if r.YearInputs != 70*20 || r.YearDays != 70 {
			t.Fatalf("year: %d inputs over %d days, want 1400 over 70", r.YearInputs, r.YearDays)
		}
		// what stays per input (input, event, causes, reservation, two
		// runs' rows, a mutation) is well under the payload and traces
		// that retention drops: a year without gc would keep ~3 KB of
		// traces per input and 288 polls a day
		if !(r.BytesPerInput > 0) || r.BytesPerInput > 4000 || r.YearDBMB <= 0 {
			t.Fatalf("bytes per input %.0f, database %.2f MB", r.BytesPerInput, r.YearDBMB)
		}
	})

	t.Run("views over a history are timed at every size", func(t *testing.T) {
		o := Options{Dir: t.TempDir(), HistorySizes: []int{500, 2000}, Logf: t.Logf}
		o.defaults()
		r := &Results{Options: o, PeekMS: map[string]float64{}, InputsPageMS: map[string]float64{}, HistoryBuildS: map[string]float64{}}
		r.YearResults.init()
		if err := history(ctx, o, r); err != nil {
			t.Fatal(err)
		}
		for _, m := range []map[string]float64{r.StatusMS, r.WorkflowsMS, r.AttentionMS, r.InputsLastPageMS, r.RunsPageMS, r.RunsLastPageMS} {
			if !(m["500"] > 0) || !(m["2000"] > 0) {
				t.Fatalf("a view was not timed at both sizes: %v", m)
			}
		}
	})

	t.Run("eight workflows run at once and every item goes through", func(t *testing.T) {
		o := Options{Dir: t.TempDir(), Inputs: 160, Logf: t.Logf}
		o.defaults()
		r := &Results{Options: o}
		if err := parallel(ctx, o, r); err != nil {
			t.Fatal(err)
		}
		if r.ParallelWorkflows != 8 || r.ParallelRuns != 2*10*8 || !(r.ParallelRunsPerS > 0) {
			t.Fatalf("parallel: %d workflows, %d runs, %.1f runs/s", r.ParallelWorkflows, r.ParallelRuns, r.ParallelRunsPerS)
		}
	})
}
