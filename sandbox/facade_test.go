package sandbox

import (
	"encoding/json"
	"testing"
	"time"
)

// A phase builds ctx.<connector> only for the connectors its script calls
// by name: testMethods offers files, gmail and sheets; this script calls
// ctx.files alone, so the others get no accessor in any phase. Counted, not
// timed: each accessor is two host functions every runtime was built with.
func TestOnlyConnectorsTheScriptCallsAreBuilt(t *testing.T) {
	h := handlers{
		prepare: `await ctx.files.list({}); return { reservations: [], data: {} };`,
		mutate:  `await ctx.files.write({ path: "x", text: "y" });`,
	}
	s := loadLocal(t, h)
	if len(s.facade) != 1 || s.facade[0].name != "files" {
		t.Fatalf("facade %+v, want files alone", s.facade)
	}
	r, err := s.newRun(Invocation{Handler: "c", Phase: PhasePrepare, Host: &recordingHost{}, Limits: testLimits()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFresh(keyOf(r.lim), func() {})
	if err := f.bind(r); err != nil {
		t.Fatal(err)
	}
	r.fresh = f
	if keys := r.newCtx().Keys(); len(keys) != len(ctxOps)+1 || keys[len(keys)-1] != "files" {
		t.Fatalf("ctx has %v, want its operations and files", keys)
	}
	if _, err := invokeUnlocked(s, PhasePrepare, &recordingHost{}, testLimits(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	out, err := invokeUnlocked(s, PhaseMutate, &recordingHost{}, testLimits(), json.RawMessage(`{"reservations":[],"data":{}}`))
	if err != nil || out.Mutation == nil || out.Mutation.Connector != "files" {
		t.Fatalf("mutate: %+v %v", out, err)
	}

	// where the analysis was told to let unnamed uses through (tests only),
	// it cannot say what is reached: every connector stays
	all, err := loadChecked("t.js", []byte(h.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.facade) != 3 {
		t.Fatalf("unchecked facade %+v, want all three connectors", all.facade)
	}
}
