package benchmark

import (
	"context"
	"fmt"
	"testing"

	"keep/engine/api"
)

// historySizes are the consumed events in history under the historyPending
// pending ones, for the go test benchmarks; `keep bench` takes its own.
var historySizes = []int{10_000, 100_000}

// seededHistory is newHistory with buildHistory's rows: the same seeding
// `keep bench` measures, for a go test benchmark. It is built once per
// size by the caller: a sub-benchmark's body runs more than once.
func seededHistory(b *testing.B, consumed int) (*keepEngine, int64) {
	b.Helper()
	ctx := context.Background()
	k, w, err := newHistory(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.close() })
	if err := buildHistory(ctx, k, w.ID, consumed); err != nil {
		b.Fatal(err)
	}
	return k, w.ID
}

// BenchmarkPeek times a page of pending events under a long history of
// consumed ones. The partial index events_open holds only pending events, so
// the cost should be the page's, the same at every history size.
func BenchmarkPeek(b *testing.B) {
	for _, size := range historySizes {
		k, wfID := seededHistory(b, size)
		b.Run(fmt.Sprintf("history=%d", size), func(b *testing.B) {
			ctx := context.Background()
			q := k.db.Read()
			evs, err := q.Peek(ctx, wfID, "item", peekLimit)
			if err != nil {
				b.Fatal(err)
			}
			if len(evs) != historyPending || evs[0].Status != "pending" {
				b.Fatalf("peek = %d events, want %d pending", len(evs), historyPending)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := q.Peek(ctx, wfID, "item", peekLimit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInputsPage times the first page of inputs, with their status
// facts and outputs, under the same histories.
func BenchmarkInputsPage(b *testing.B) {
	for _, size := range historySizes {
		k, _ := seededHistory(b, size)
		b.Run(fmt.Sprintf("history=%d", size), func(b *testing.B) {
			ctx := context.Background()
			ins, err := k.e.Inputs(ctx, "history", api.Page{Limit: inputsLimit})
			if err != nil {
				b.Fatal(err)
			}
			if len(ins) != inputsLimit || ins[0].Status == api.InputDone || ins[inputsLimit-1].Status == api.InputDone {
				b.Fatalf("inputs page = %d inputs, want %d still open", len(ins), inputsLimit)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.e.Inputs(ctx, "history", api.Page{Limit: inputsLimit}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
