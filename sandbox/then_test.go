package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// thenHandlers: prepare reserves the event it is told to (none when its
// state says so), mutate writes what prepare put in data; each logs a line.
var thenHandlers = handlers{
	prepare: `console.log("prepare");
        if (state && state.none) return { reservations: [], data: {} };
        if (state && state.fail) throw new Error("prepare broke");
        return { reservations: [{ topic: "a", ids: ["m1"] }], data: { text: "from prepare" } };`,
	mutate: `console.log("mutate " + prepared.data.text);
        if (prepared.data.text === "boom") throw new Error("mutate broke");
        await ctx.files.write({ path: "out.txt", content: prepared.data.text });`,
}

// runThen runs RunThen of c with state, and says what each side saw.
func runThen(t *testing.T, s *Script, state string) (prep *Outcome, prepErr error, out *Outcome, ran bool, err error, ph, mh *recordingHost) {
	t.Helper()
	heavy.RLock()
	defer heavy.RUnlock()
	ph, mh = &recordingHost{}, &recordingHost{}
	called := 0
	out, ran, err = s.RunThen(context.Background(),
		Invocation{Handler: "c", Phase: PhasePrepare, Host: ph, Limits: testLimits(), State: json.RawMessage(state)},
		Invocation{Handler: "c", Phase: PhaseMutate, Host: mh, Limits: testLimits(), Prepared: json.RawMessage(`{"data":{"text":"boom"}}`)},
		func(o *Outcome, e error, then bool) {
			called++
			prep, prepErr = o, e
			if then != (e == nil && reserves(o.Prepare)) {
				t.Errorf("then = %v for %+v, %v", then, o, e)
			}
		})
	if called != 1 {
		t.Fatalf("prepared was called %d times, want once", called)
	}
	return
}

// TestRunThen: a prepare that reserves something and the mutate after it
// are one job of one worker; mutate gets prepare's result, each phase's
// log lines reach its own host; a prepare that reserves nothing or fails
// runs no mutate. Not parallel: it counts the jobs the package starts.
func TestRunThen(t *testing.T) {
	s := load(t, thenHandlers)
	before := jobs.Load()
	prep, prepErr, out, ran, err, ph, mh := runThen(t, s, `{}`)
	if n := jobs.Load() - before; n != 1 {
		t.Errorf("prepare and mutate took %d jobs, want 1", n)
	}
	if prepErr != nil || prep.Prepare == nil || !reserves(prep.Prepare) {
		t.Fatalf("prepare: %+v, %v", prep, prepErr)
	}
	if !ran || err != nil {
		t.Fatalf("mutate: ran %v, err %v", ran, err)
	}
	want := &MutationCall{Connector: "files", Method: "write", Params: map[string]any{"path": "out.txt", "content": "from prepare"}}
	if !reflect.DeepEqual(out.Mutation, want) {
		t.Errorf("mutation = %#v, want %#v (from prepare's data, not the Prepared given)", out.Mutation, want)
	}
	if got := ph.logged(); !reflect.DeepEqual(got, []string{"log: prepare"}) {
		t.Errorf("prepare's host got %v", got)
	}
	if got := mh.logged(); !reflect.DeepEqual(got, []string{"log: mutate from prepare"}) {
		t.Errorf("mutate's host got %v", got)
	}

	before = jobs.Load()
	prep, prepErr, _, ran, _, _, mh = runThen(t, s, `{"none":true}`)
	if prepErr != nil || prep.Prepare == nil || ran || len(mh.logged()) != 0 {
		t.Errorf("reserving nothing: prepare %+v, %v; mutate ran %v, logged %v", prep, prepErr, ran, mh.logged())
	}
	if n := jobs.Load() - before; n != 1 {
		t.Errorf("a prepare alone took %d jobs", n)
	}

	_, prepErr, _, ran, _, _, _ = runThen(t, s, `{"fail":true}`)
	var e *Error
	if !errors.As(prepErr, &e) || e.Phase != PhasePrepare || ran {
		t.Errorf("a failed prepare: %v (ran %v), want prepare's error and no mutate", prepErr, ran)
	}
}

// TestRunThenMutateFails: mutate's error is mutate's, prepare's outcome
// stands; in a worker and in this process alike.
func TestRunThenMutateFails(t *testing.T) {
	t.Parallel()
	h := thenHandlers
	h.prepare = `return { reservations: [{ topic: "a", ids: ["m1"] }], data: { text: "boom" } };`
	for name, s := range map[string]*Script{"worker": load(t, h), "here": loadLocal(t, h)} {
		prep, prepErr, _, ran, err, _, mh := runThen(t, s, `{}`)
		var e *Error
		if prepErr != nil || prep.Prepare == nil || !ran || !errors.As(err, &e) || e.Phase != PhaseMutate {
			t.Errorf("%s: prepare %v; mutate ran %v with %v, want mutate's error", name, prepErr, ran, err)
		}
		if got := mh.logged(); !reflect.DeepEqual(got, []string{"log: mutate boom"}) {
			t.Errorf("%s: mutate's host got %v", name, got)
		}
	}
}

// A mutate that runs past its wall time after a prepare in the same job
// ends as mutate's timeout; prepare's outcome stands, and the worker is
// not left spinning (the next job runs).
func TestRunThenMutateTimesOut(t *testing.T) {
	t.Parallel()
	h := thenHandlers
	h.mutate = `for (;;) {}`
	s := load(t, h)
	lim := testLimits()
	lim.WallTime = 300 * time.Millisecond
	var prep *Outcome
	heavy.RLock()
	out, ran, err := s.RunThen(context.Background(),
		Invocation{Handler: "c", Phase: PhasePrepare, Host: &recordingHost{}, Limits: lim},
		Invocation{Handler: "c", Phase: PhaseMutate, Host: &recordingHost{}, Limits: lim},
		func(o *Outcome, _ error, _ bool) { prep = o })
	heavy.RUnlock()
	var e *Error
	if prep == nil || !reserves(prep.Prepare) || !ran || out != nil || !errors.As(err, &e) || e.Kind != ErrTimeout || e.Phase != PhaseMutate {
		t.Fatalf("prepare %+v; mutate ran %v: %+v, %v; want mutate's timeout", prep, ran, out, err)
	}
	if _, _, _, ran, err, _, _ := runThen(t, load(t, thenHandlers), `{}`); !ran || err != nil {
		t.Errorf("the next job: ran %v, %v", ran, err)
	}
}
