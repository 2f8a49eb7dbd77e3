package engine

import (
	"context"
	"testing"
	"time"
)

// TestRepublishingWakesNoConsumer: a producer polling what it already
// published (the README's pattern) adds no consumer run per tick; a new
// event, or a changed pending one, still wakes it.
func TestRepublishingWakesNoConsumer(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	s := newSink(t)
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain()
	consumerRuns := func() (n int) {
		for _, r := range b.runs("push") {
			if r.HandlerType == "consumer" {
				n++
			}
		}
		return n
	}
	before := consumerRuns()
	if s.Posts() != 1 || before == 0 {
		t.Fatalf("posts %d, consumer runs %d: want the item pushed", s.Posts(), before)
	}
	for range 3 {
		b.clock.Advance(6 * time.Minute) // past the producer's 5 min
		if err := b.e.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	producers := 0
	for _, r := range b.runs("push") {
		if r.HandlerType == "producer" {
			producers++
		}
	}
	if producers < 3 {
		t.Fatalf("%d producer runs, want the producer to have ticked", producers)
	}
	if got := consumerRuns(); got != before {
		t.Fatalf("consumer runs went from %d to %d over ticks that published nothing new", before, got)
	}

	// a new item still wakes it
	b.deploy("push", pushWorkflow(s.URL, "a", "b"))
	b.clock.Advance(6 * time.Minute)
	b.drain()
	if s.Posts() != 2 {
		t.Fatalf("posts %d, want the new item pushed", s.Posts())
	}
}
