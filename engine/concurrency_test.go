package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
)

// TestWorkflowsRunConcurrently: with the engine started, a workflow stuck
// in a long prepare does not hold up another workflow.
func TestWorkflowsRunConcurrently(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-time.After(20 * time.Second):
		}
	}))
	defer slow.Close()
	defer close(release)

	b.deploy("slow", strings.Replace(`export default Keep.workflow({ name: "slow", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { await ctx.http.get({ url: URL }); return { reservations: [], data: {} }; },
    async mutate() {}, async next() {} }) } });`, "URL", `"`+slow.URL+`"`, 1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, stop := b.e.Subscribe()
	defer stop()
	if err := b.e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer b.e.Stop(context.Background())
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow workflow never started")
	}
	// while "slow" is inside its prepare, another workflow runs to commit
	b.deploy("quick", `export default Keep.workflow({ name: "quick", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async () => ({ ok: true }) } },
  consumers: {} });`)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case n := <-notes:
			if n.Kind == api.NoteRunCommitted && n.Workflow == "quick" {
				return
			}
		case <-deadline:
			t.Fatal("quick never committed while slow was busy: workflows do not run concurrently")
		}
	}
}

// TestDrainRunsWorkflowsConcurrently: keep drain is the daemon's scheduler,
// not a loop over workflows one after another. Two workflows whose prepares
// each wait for the other's to begin both commit only if they run at once.
func TestDrainRunsWorkflowsConcurrently(t *testing.T) {
	t.Parallel()
	b := setup(t)
	arrived := map[string]chan struct{}{"/a": make(chan struct{}), "/b": make(chan struct{})}
	other := map[string]string{"/a": "/b", "/b": "/a"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch, ok := arrived[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		close(ch)
		select {
		case <-arrived[other[r.URL.Path]]:
			w.Write([]byte(`{}`))
		case <-time.After(5 * time.Second):
			http.Error(w, "the other workflow never ran meanwhile", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	for _, name := range []string{"a", "b"} {
		b.deploy(name, strings.NewReplacer("NAME", name, "URL", `"`+srv.URL+"/"+name+`"`).Replace(
			`export default Keep.workflow({ name: "NAME", topics: { t: {} }, producers: {},
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const r = await ctx.http.get({ url: URL }); return { reservations: [], data: {} }; },
    async mutate() {}, async next() {} }) } });`))
	}
	b.drain()
	for _, name := range []string{"a", "b"} {
		runs := b.runs(name)
		if len(runs) != 1 || runs[0].Status != "committed" {
			t.Errorf("workflow %s: runs %+v, want one committed (its prepare met the other's)", name, runs)
		}
	}
}
