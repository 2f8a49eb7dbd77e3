package engine

import (
	"testing"
	"time"
)

// TestRedeployDropsRemovedHandlersSchedule: a producer a redeploy removed
// runs no more, so its next run is nobody's: the workflow's "next run" is
// what its handlers will do, not, weeks later, the time the removed one
// was last due.
func TestRedeployDropsRemovedHandlersSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.deploy("two", `export default Keep.workflow({ name: "two", topics: { t: {}, u: {} },
  producers: {
    hourly: { publishes: ["u"], schedule: { interval: "1h" }, handler: async () => {} },
    daily: { publishes: ["t"], schedule: { interval: "24h" }, handler: async () => {} } },
  consumers: {} });`)
	b.drain()
	b.deploy("two", `export default Keep.workflow({ name: "two", topics: { t: {}, u: {} },
  producers: { daily: { publishes: ["t"], schedule: { interval: "24h" }, handler: async () => {} } },
  consumers: {} });`)
	for range 3 * 7 { // three weeks of days
		b.clock.Advance(24 * time.Hour)
		b.drain()
	}
	next := b.workflow("two").NextRun
	if next == nil || next.Before(b.clock.Now()) {
		t.Fatalf("next run %v, at %v: the removed producer's last due time is shown as the next run", next, b.clock.Now())
	}
}
