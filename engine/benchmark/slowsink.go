package benchmark

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// The files→http job again with a sink that takes its time (20 ms a POST,
// a web service's, where the row's answers in 1 ms): what a consumer's
// concurrency is for. Concurrency 8 must be worth it, at least 1.5 times
// the items per second of concurrency 1, on a machine of two cores.

// slowSinkDelay is how long the slow sink waits before answering.
const slowSinkDelay = 20 * time.Millisecond

// SlowSinkResults is the slow-sink row.
type SlowSinkResults struct {
	// SlowSinkItems files were dropped per round; rounds of concurrency 1
	// and 8 alternate, SlowSinkPairs pairs.
	SlowSinkItems int `json:"slow_sink_items"`
	SlowSinkPairs int `json:"slow_sink_pairs"`
	// SlowSinkC1ItemsPerS, SlowSinkC8ItemsPerS: each concurrency's rounds,
	// items over the drop-to-last-POST span, in the order they ran.
	SlowSinkC1ItemsPerS []float64 `json:"slow_sink_c1_items_per_s"`
	SlowSinkC8ItemsPerS []float64 `json:"slow_sink_c8_items_per_s"`
	// SlowSinkRatio: concurrency 8's mean items/s over concurrency 1's.
	SlowSinkRatio float64 `json:"slow_sink_c8_over_c1"`
}

// slowSink alternates files→http rounds at concurrency 1 and 8 against the
// slow sink.
func slowSink(ctx context.Context, o Options, r *Results) error {
	r.SlowSinkItems, r.SlowSinkPairs = o.SlowSinkItems, o.SlowSinkPairs
	for i := range o.SlowSinkPairs {
		for _, c := range []int{1, 8} {
			f, err := filesPostOnce(ctx, o, filepath.Join(o.Dir, fmt.Sprintf("%d-%d", i, c)), o.SlowSinkItems, slowSinkDelay, c)
			if err != nil {
				return fmt.Errorf("concurrency %d: %w", c, err)
			}
			o.Logf("slow sink, concurrency %d: %d items in %s (%.0f items/s), p50 %.0f ms, %.2f CPU-s per 1000",
				c, f.Items, f.Span.Round(time.Millisecond), f.ItemsPerS, percentile(f.Lat, 50), f.CPUPer1000)
			if c == 1 {
				r.SlowSinkC1ItemsPerS = append(r.SlowSinkC1ItemsPerS, f.ItemsPerS)
			} else {
				r.SlowSinkC8ItemsPerS = append(r.SlowSinkC8ItemsPerS, f.ItemsPerS)
			}
		}
	}
	if m1 := mean(r.SlowSinkC1ItemsPerS); m1 > 0 {
		r.SlowSinkRatio = mean(r.SlowSinkC8ItemsPerS) / m1
	}
	return nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// slowSinkRows adds the slow-sink row to the table.
func (r *Results) slowSinkRows(row func(name, value, target string, met *bool)) {
	if r.SlowSinkPairs == 0 {
		return
	}
	b := func(v bool) *bool { return &v }
	note := fmt.Sprintf("(%d files, sink answers after %s, %d pairs alternating)", r.SlowSinkItems, slowSinkDelay, r.SlowSinkPairs)
	row("slow_sink_c1_items_per_s", f1(mean(r.SlowSinkC1ItemsPerS)), note, nil)
	row("slow_sink_c8_items_per_s", f1(mean(r.SlowSinkC8ItemsPerS)), "", nil)
	row("slow_sink_c8_over_c1", f2(r.SlowSinkRatio), ">= 1.5", b(r.SlowSinkRatio >= 1.5))
}

// SlowSink takes the slow-sink row alone.
func SlowSink(ctx context.Context, o Options) (*Results, error) {
	o.defaults()
	r := &Results{Options: o, Machine: machine(), Started: time.Now().UTC().Format(time.RFC3339)}
	if err := slowSink(ctx, o, r); err != nil {
		return nil, fmt.Errorf("bench slow sink: %w", err)
	}
	return r, nil
}
