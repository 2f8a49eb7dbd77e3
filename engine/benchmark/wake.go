package benchmark

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"keep/engine"
	"keep/engine/api"
)

// wakeWorkflow: a producer publishes one "tick" per run; the consumer's
// prepare first GETs the bench's server, whose arrival time marks the
// prepare starting.
const wakeWorkflow = `
export default Keep.workflow({
  name: "wake",
  topics: { "tick": {} },
  producers: {
    tick: {
      publishes: ["tick"],
      schedule: { interval: "1h" },
      handler: async (ctx, state) => {
        const n = (state?.n ?? 0) + 1;
        const inputId = ctx.registerInput({ source: "files", type: "file", id: "tick-" + n, title: "Tick " + n });
        await ctx.publish("tick", { messageId: "tick-" + n, inputId, payload: { n } });
        return { n };
      },
    },
  },
  consumers: {
    c: Keep.consumer({
      subscribe: ["tick"],
      async prepare(ctx) {
        await ctx.http.get({ url: "URL/prepare" });
        const [ev] = await ctx.peek("tick", { limit: 1 });
        if (!ev) return { reservations: [], data: {} };
        return { reservations: [{ topic: "tick", ids: [ev.messageId] }], data: {} };
      },
      async mutate() {},
      async next() {},
    }),
  },
});
`

const wakeSamples = 200

// wakeLatency starts the engine (its scheduler goroutines, as the daemon
// runs them) and, wakeSamples times, runs the producer now: the latency is
// from the producer's commit (its run.committed notification, sent right
// after the commit returns) to the consumer's prepare starting (its first
// connector call reaching the server). The consumer's later runs are let
// finish before the next sample.
func wakeLatency(ctx context.Context, o Options, r *Results) error {
	arrivals := make(chan time.Time, 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		select {
		case arrivals <- at:
		default:
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	k, err := newEngine(ctx, o.Dir)
	if err != nil {
		return err
	}
	defer k.close()
	if err := k.deploy(ctx, "wake", strings.Replace(wakeWorkflow, "URL", srv.URL, 1)); err != nil {
		return err
	}
	notes, cancel := k.e.Subscribe()
	defer cancel()
	if err := k.e.Start(ctx); err != nil {
		return err
	}

	// produced waits for the producer's commit; settled waits until the
	// consumer has committed its run and its empty follow-up
	produced := func() (time.Time, error) {
		timeout := time.After(30 * time.Second)
		for {
			select {
			case n := <-notes:
				if n.Kind == api.NoteRunFailed {
					return time.Time{}, fmt.Errorf("run failed: %s", n.Text)
				}
				if n.Kind == api.NoteRunCommitted && strings.HasPrefix(n.Text, "tick:") {
					return n.At, nil
				}
			case <-timeout:
				return time.Time{}, errors.New("no producer commit within 30s")
			case <-ctx.Done():
				return time.Time{}, ctx.Err()
			}
		}
	}
	settle := func() error {
		timeout := time.After(30 * time.Second)
		for seen := 0; seen < 2; {
			select {
			case n := <-notes:
				if n.Kind == api.NoteRunFailed {
					return fmt.Errorf("run failed: %s", n.Text)
				}
				if n.Kind == api.NoteRunCommitted && n.Text == "c committed" {
					seen++
				}
			case <-timeout:
				return errors.New("the consumer did not commit within 30s")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// drop the follow-up's arrival
		for {
			select {
			case <-arrivals:
			default:
				return nil
			}
		}
	}
	// the first producer run is due at deploy
	if _, err := produced(); err != nil {
		return err
	}
	if err := settle(); err != nil {
		return err
	}
	var lat []float64
	for range wakeSamples {
		for {
			err := k.e.RunNow(ctx, "wake")
			if err == nil {
				break
			}
			if !errors.Is(err, engine.ErrRefused) {
				return err
			}
			time.Sleep(time.Millisecond)
		}
		at, err := produced()
		if err != nil {
			return err
		}
		var got time.Time
		for got.IsZero() {
			select {
			case a := <-arrivals:
				if !a.Before(at) {
					got = a
				}
			case <-time.After(30 * time.Second):
				return errors.New("the consumer's prepare did not start within 30s")
			}
		}
		lat = append(lat, float64(got.Sub(at).Microseconds())/1000)
		if err := settle(); err != nil {
			return err
		}
	}
	slices.Sort(lat)
	r.WakeSamples = len(lat)
	r.WakeLatencyMS = Latency{P50: percentile(lat, 50), P99: percentile(lat, 99)}
	o.Logf("wake latency: p50 %.2f ms, p99 %.2f ms over %d samples", r.WakeLatencyMS.P50, r.WakeLatencyMS.P99, len(lat))
	return nil
}

// percentile of sorted values, nearest rank.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
