package bus_test

import (
	"context"
	"testing"
	"time"

	"keep/engine/bus"
	"keep/engine/enginetest/kit"
)

// BenchmarkEmitDelivery measures one event from Emit to its handler: the
// journal write, the wake, the claim and the call (the done mark overlaps
// the next Emit). Each event costs durable writes (synchronous FULL), so
// this is bounded by fsync.
func BenchmarkEmitDelivery(b *testing.B) {
	bd := setup(b, bus.Opts{Now: time.Now, Logger: discard()})
	got := make(chan struct{}, 1)
	bd.bus.Subscribe("bench", func(context.Context, bus.Event) error {
		got <- struct{}{}
		return nil
	})
	bd.start(b)
	payload := map[string]any{"workflow": "mail", "mutation": 12}
	for b.Loop() {
		if _, err := bd.bus.Emit(bd.ctx, "bench", payload, "wf-1"); err != nil {
			b.Fatal(err)
		}
		kit.Wait(b, got, kit.Timeout)
	}
}
