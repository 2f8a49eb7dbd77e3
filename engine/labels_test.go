package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// TestLabelsSayWhatHappened: a run's trigger is deploy, run-now,
// schedule, event or wakeAt as it was; a producer's failure is not noted
// as "preparing"; a trace shows < and > as themselves.
func TestLabelsSayWhatHappened(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("triggers", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		s := newSink(t)
		b.deploy("push", pushWorkflow(s.URL, "a"))
		b.drain()
		triggers := func(handler string) []string {
			var out []string
			runs := b.runs("push")
			for i := len(runs) - 1; i >= 0; i-- { // oldest first
				if runs[i].Handler == handler {
					out = append(out, runs[i].Trigger)
				}
			}
			return out
		}
		if got := triggers("feed"); len(got) != 1 || got[0] != "deploy" {
			t.Fatalf("the producer's first run: %v, want deploy", got)
		}
		// the deploy woke the consumer first (nothing pending yet), then the
		// producer's event
		if got := triggers("push"); len(got) < 2 || got[0] != "deploy" || got[1] != "event" {
			t.Fatalf("the consumer's runs: %v, want deploy, then event", got)
		}
		if err := b.e.RunNow(ctx, "push"); err != nil {
			t.Fatal(err)
		}
		b.drain()
		b.clock.Advance(6 * time.Minute)
		b.drain()
		if got := triggers("feed"); len(got) != 3 || got[1] != "run-now" || got[2] != "schedule" {
			t.Fatalf("producer triggers %v, want deploy, run-now, schedule", got)
		}
	})

	t.Run("a consumer woken by its wakeAt says wakeAt; one a deploy woke says deploy", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.deploy("wake", `export default Keep.workflow({ name: "wake", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { return { reservations: [], data: {}, wakeAt: new Date(Date.parse("2026-11-02T09:00:00Z") + 60e3).toISOString() }; },
    async mutate() {},
    async next() {} }) } });`)
		b.drain()
		b.clock.Advance(time.Hour)
		b.drain()
		runs := b.runs("wake")
		if len(runs) < 2 || runs[len(runs)-1].Trigger != "deploy" || runs[len(runs)-2].Trigger != "wakeAt" {
			t.Fatalf("runs %+v, want deploy then wakeAt", runs)
		}
	})

	t.Run("a producer's failure is noted as the producer's, and < > stay themselves", func(t *testing.T) {
		t.Parallel()
		b := setup(t, allowMutations)
		b.deploy("bad", `export default Keep.workflow({ name: "bad", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    console.log(JSON.stringify({ html: "<b>" }));
    throw new Error("no <luck>");
  } } },
  consumers: {} });`)
		b.drain()
		runs := b.runs("bad")
		tr, err := b.e.Trace(ctx, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var noted bool
		for _, l := range tr {
			if l.Phase == "preparing" {
				t.Errorf("trace line %+v labelled preparing", l)
			}
			if strings.Contains(l.Result+l.Args, `\u003c`) {
				t.Errorf("trace line %+v escapes <", l)
			}
			noted = noted || (l.Kind == "note" && l.Phase == "producer" && strings.Contains(l.Result, "failed"))
		}
		if !noted {
			t.Fatalf("trace %+v, want the failure noted under producer", tr)
		}
		att, _ := b.e.Attention(ctx)
		for _, it := range att {
			if it.Kind == api.AttentionFailedRun && strings.Contains(it.Title, "preparing") {
				t.Errorf("attention title %q", it.Title)
			}
		}
	})
}

func TestJSONTextKeepsAngleBrackets(t *testing.T) {
	t.Parallel()
	if got := jsonText(map[string]any{"h": "<b>&"}); got != `{"h":"<b>&"}` {
		t.Fatalf("jsonText = %s", got)
	}
}

func TestADeployByAnotherProcessStillSaysDeploy(t *testing.T) {
	t.Parallel()
	b := setup(t, allowMutations)
	s := newSink(t)
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.reopen() // the engine that deployed it is gone; this one never saw the deploy
	b.drain()
	for _, r := range b.runs("push") {
		if r.Handler == "feed" && r.Trigger != "deploy" {
			t.Fatalf("the producer's first run says %q, want deploy", r.Trigger)
		}
	}
}
