package authoring_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
	"keep/engine/authoring"
	"keep/engine/config"
	"keep/engine/enginetest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// endlessWorkflow's consumers publish to each other without end: nothing
// it does is a mutation, so no limit of captured mutations stops it.
const endlessWorkflow = `export default Keep.workflow({
  name: "endless",
  topics: { s: {}, a: {}, b: {} },
  producers: { p: { publishes: ["s"], schedule: { interval: "1h" }, handler: async (ctx) => {
    await ctx.publish("s", { messageId: "0", payload: { n: 0 } });
  } } },
  consumers: {
    ping: Keep.consumer({
      subscribe: ["s", "a"], publishes: ["b"],
      async prepare(ctx) {
        for (const t of ["s", "a"]) {
          const [e] = await ctx.peek(t, { limit: 1 });
          if (e) return { reservations: [{ topic: t, ids: [e.messageId] }], data: e.payload };
        }
        return { reservations: [], data: {} };
      },
      async mutate(ctx, p) {},
      async next(ctx, p) { await ctx.publish("b", { messageId: String(p.data.n + 1), payload: { n: p.data.n + 1 } }); },
    }),
    pong: Keep.consumer({
      subscribe: ["b"], publishes: ["a"],
      async prepare(ctx) {
        const [e] = await ctx.peek("b", { limit: 1 });
        if (!e) return { reservations: [], data: {} };
        return { reservations: [{ topic: "b", ids: [e.messageId] }], data: e.payload };
      },
      async mutate(ctx, p) {},
      async next(ctx, p) { await ctx.publish("a", { messageId: String(p.data.n + 1), payload: { n: p.data.n + 1 } }); },
    }),
  },
});
`

func shortRuns(c *config.Config) {
	c.Policy.HandlerTimeout = config.Duration{Duration: 500 * time.Millisecond}
}

// A dry run ends by itself, whatever the script: one whose consumers feed
// each other without end is stopped at DryRunTime and said to be, where
// it used to run until its caller gave up — keep mcp serve's try and
// propose spun (and grew a temporary database) for as long as the client
// waited.
func TestADryRunThatNeverEndsIsStopped(t *testing.T) {
	t.Parallel()
	h := enginetest.New(t, enginetest.Opts{Config: []func(*config.Config){shortRuns}})
	reg, err := engine.Connectors(h.Cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	pol := engine.PolicyFrom(h.Cfg.Policy)
	cs := mcpSession(t, authoring.MCPServeOpts{API: h.API, Registry: reg, Policy: pol})
	// the caller's own patience is far longer than the bound
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	start := time.Now()
	_, err = authoring.Try(ctx, reg, pol, "endless.js", []byte(endlessWorkflow), api.TryOptions{CaptureReads: true})
	if err == nil || !strings.Contains(err.Error(), "did not end within") || time.Since(start) > 20*authoring.DryRunTime(pol) {
		t.Fatalf("Try = %v after %s, want it stopped at %s", err, time.Since(start), authoring.DryRunTime(pol))
	}
	for _, tool := range []string{"try", "propose"} {
		start := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"file_name": "endless.js", "source": endlessWorkflow, "reason": "r"}})
		if err != nil {
			t.Fatalf("%s: %v after %s", tool, err, time.Since(start))
		}
		if out := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(out, "did not end within") || time.Since(start) > 20*authoring.DryRunTime(pol) {
			t.Errorf("%s = %.300s after %s", tool, out, time.Since(start))
		}
	}
}
