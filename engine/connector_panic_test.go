package engine

import (
	"context"
	"testing"
	"time"

	"keep/connectors"
	"keep/engine/api"
)

// panickingGate is the gate connector fed by a server that makes its
// parser panic: on the call, and on the check of it.
type panickingGate struct{ gateConnector }

func (p *panickingGate) Do(ctx context.Context, call connectors.Call) (any, error) {
	p.gateConnector.Do(ctx, call)
	var ev []string
	_ = ev[1] // index out of range, as go-ical's on "X;A=b"
	return nil, nil
}

func (p *panickingGate) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	panic("unexpected character")
}

// A connector that panics on what a server sent fails its call, and the
// engine goes on: the mutation, which may have reached the service before
// the panic, is uncertain, its check panics too and leaves the question to
// the person. Before, the panic ended the daemon, and after a restart the
// check ended it again.
func TestAConnectorsPanicIsItsCallsFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := &panickingGate{gateConnector{scope: func(string) string { return "" }}}
	b := gated(t, g)
	b.deploy("gated", gateWorkflow(`["a"]`, 1))
	if err := b.e.Grant(ctx, "gated", api.GrantView{Capability: "gate.post", Mode: "allow"}); err != nil {
		t.Fatal(err)
	}
	b.drain()
	for range 10 { // the checks the policy allows, each after its back-off
		b.clock.Advance(time.Hour)
		b.drain()
	}
	if made := g.made(); len(made) != 1 {
		t.Fatalf("calls made %v, want the one (an uncertain call is never sent again unasked)", made)
	}
	muts, err := b.e.Mutations(ctx, "gated", "")
	if err != nil || len(muts) != 1 || muts[0].Status != MutationIndeterminate {
		t.Fatalf("mutations %+v, %v: want the call indeterminate, asked of the person", muts, err)
	}
	att, _ := b.e.Attention(ctx)
	if len(att) == 0 {
		t.Fatal("nothing asks the person about the call")
	}
}
