package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"keep/storage"
)

// parallelWorkflows is how many pipelines run at once in the aggregate
// throughput measure.
const parallelWorkflows = 8

// parallel deploys parallelWorkflows copies of the two-stage pipeline, each
// with o.Inputs/16 events waiting, starts the engine (each workflow runs on
// its own, concurrently with the others: DESIGN.md §4) and times until
// every event of every workflow is consumed: consumer runs per second, all
// workflows together.
func parallel(ctx context.Context, o Options, r *Results) error {
	n := max(o.Inputs/16, 10)
	k, err := newEngine(ctx, o.Dir)
	if err != nil {
		return err
	}
	defer k.close()
	names := make([]string, parallelWorkflows)
	for i := range names {
		names[i] = fmt.Sprintf("pipeline-%d", i)
		if _, err := k.e.Deploy(ctx, "pipeline.js", []byte(fmt.Sprintf(pipelineProducer, n)), names[i]); err != nil {
			return err
		}
	}
	if err := k.e.Drain(ctx); err != nil {
		return err
	}
	consumers := pipelineConsumers
	if o.editWorkflow != nil {
		consumers = o.editWorkflow(consumers)
	}
	for _, name := range names {
		if _, err := k.e.Deploy(ctx, "pipeline.js", []byte(consumers), name); err != nil {
			return err
		}
	}
	rdb, err := sql.Open("sqlite", storage.FileURI(k.path)+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer rdb.Close()
	want := 2 * n * parallelWorkflows
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	if err := k.e.Start(runCtx); err != nil {
		return err
	}
	// the benchmark, not the engine, looks every few ms: its resolution is
	// small beside the seconds measured
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		// a workflow the engine blocked would leave the count short for
		// ever: the row fails with its reason instead
		var consumed int
		var blocked string
		if err := rdb.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM events WHERE status = 'consumed'),
			(SELECT ifnull(group_concat(name || ': ' || block_reason, '; '), '') FROM workflows WHERE block_kind != '')`).Scan(&consumed, &blocked); err != nil {
			return err
		}
		if blocked != "" {
			return fmt.Errorf("blocked before their events were consumed (%d of %d): %s", consumed, want, blocked)
		}
		done = consumed >= want
	}
	el := time.Since(start)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	stop()
	if err := k.e.Stop(sctx); err != nil {
		return err
	}
	for _, f := range []string{"a.csv", "b.csv"} {
		data, err := os.ReadFile(filepath.Join(k.root, f))
		if err != nil {
			return err
		}
		if got := strings.Count(string(data), "\n"); got != n*parallelWorkflows {
			return fmt.Errorf("%s has %d lines, want %d", f, got, n*parallelWorkflows)
		}
	}
	r.ParallelWorkflows, r.ParallelRuns = parallelWorkflows, want
	r.ParallelRunsPerS = float64(want) / el.Seconds()
	o.Logf("parallel: %d workflows, %d consumer runs in %s: %.0f runs/s", parallelWorkflows, want, el.Round(time.Millisecond), r.ParallelRunsPerS)
	return nil
}
