package engine

import (
	"context"
	"testing"
	"time"

	"keep/engine/api"
)

// TestStaleInputs: an input pending past the policy's stale_after (DESIGN.md
// §8: 7 days) is shown stale beside pending, and is an attention item of
// kind stale_input that skip-input answers; one pending less long is not.
func TestStaleInputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	// the consumer never takes the event: its input stays pending
	b.deploy("w", tickWorkflow("w", `return { reservations: [], data: {} };`))
	b.drain()
	stale := func() []api.AttentionItem {
		t.Helper()
		var out []api.AttentionItem
		att, err := b.e.Attention(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range att {
			if a.Kind == api.AttentionStaleInput {
				out = append(out, a)
			}
		}
		return out
	}
	b.clock.Advance(6 * 24 * time.Hour)
	if in := b.inputs("w")[0]; in.Status != api.InputPending || in.Stale {
		t.Fatalf("input after 6 days %+v, want pending, not stale", in)
	}
	if s := stale(); len(s) != 0 {
		t.Fatalf("stale items after 6 days: %+v", s)
	}
	b.clock.Advance(2 * 24 * time.Hour)
	in := b.inputs("w")[0]
	if in.Status != api.InputPending || !in.Stale {
		t.Fatalf("input after 8 days %+v, want pending and stale", in)
	}
	s := stale()
	if len(s) != 1 || s[0].ID != in.InputID || s[0].Workflow != "w" || s[0].Title != "Tick one" {
		t.Fatalf("stale items after 8 days: %+v, want the input", s)
	}
	if err := b.e.SkipInput(ctx, s[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := stale(); len(got) != 0 {
		t.Fatalf("stale items after skip-input: %+v", got)
	}
	if in := b.inputs("w")[0]; in.Status != api.InputSkipped || in.Stale {
		t.Fatalf("input after skip-input %+v, want skipped", in)
	}
}
