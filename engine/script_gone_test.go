package engine

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"
)

// breakScripts makes every stored version of the scripts fail to load, as
// a newer keep may refuse what an older one loaded, and restarts keep.
func (b *bundle) breakScripts() {
	b.t.Helper()
	raw, err := sql.Open("sqlite", "file:"+b.dbPath)
	if err != nil {
		b.t.Fatal(err)
	}
	_, err = raw.Exec(`UPDATE script_versions SET source = 'export default 1 +'`)
	raw.Close()
	if err != nil {
		b.t.Fatal(err)
	}
	b.reopen()
}

// TestARunItsScriptCannotCarryFails: a run whose script version no longer
// loads (a newer keep may refuse what an older one loaded) fails as
// internal, past its mutation keeping its events for the retry, instead of
// staying active to be continued, and to fail, at every step without end.
func TestARunItsScriptCannotCarryFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	s := newSink(t)
	s.OnPost(func(*http.Request) {
		if err := b.e.Pause(ctx, "push"); err != nil {
			t.Error(err)
		}
	})
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drain() // parked at mutated: the call applied, next still to run
	s.OnPost(nil)
	b.breakScripts()
	// the workflow's own version does not load: resume says so, and
	// the step blocks it (internal), the run waiting where it is
	_ = b.e.Resume(ctx, "push")
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := b.e.Drain(dctx)
	if dctx.Err() != nil {
		t.Fatalf("drain never ended (%v): the scheduler spins on the run it cannot continue", err)
	}
	// what the person reads to learn why (keep status) says so
	w := b.workflow("push")
	if w.Block == nil || w.Block.Kind != BlockInternal || !strings.Contains(w.Block.Reason, "no longer loads") || w.LoadError == "" {
		t.Fatalf("workflow %+v, want blocked internal, naming the script that does not load", w)
	}
	b.deploy("push", pushWorkflow(s.URL, "a")+"\n") // the person deploys a script that loads
	if err := b.e.Retry(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	dctx2, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	err = b.e.Drain(dctx2)
	if dctx2.Err() != nil {
		t.Fatalf("drain never ended (%v): the scheduler spins on the run it cannot continue", err)
	}
	// the run recovery made is of the version that does not load: it
	// fails past its mutation, and is not left active
	run := b.runs("push")[0]
	if run.Status != "failed:internal" || run.Phase != "emitting" || !strings.Contains(run.Error, "no longer loads") {
		t.Fatalf("newest run %+v, want failed:internal at emitting, naming its script", run)
	}
	if err := b.e.Retry(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Hour)
	if ev := b.events("push", "item")[0]; ev.Status != "consumed" || s.Posts() != 1 {
		t.Fatalf("event %s, posts %d: want next run under the new script, the call made once", ev.Status, s.Posts())
	}
}
