package sandbox

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// The pool builds a phase's host functions before any run takes the
// runtime. Each serves the run that took its runtime and no other: run A
// leaks its console, ctx operations and connector into a global of its
// runtime; run B, from the same pool, does not see them, and when they are
// called while B is in a host call (on B's goroutine, as a shared binding
// would make them B's) they reach neither host. After the runs they still do
// nothing, and a runtime cannot be bound to a second run.
func TestPrebuiltFunctionsServeOneRun(t *testing.T) {
	t.Parallel()
	// ctx.files and a descriptor of ctx, leaked: the analysis refuses
	// them at load; the runtime's own binding is what is tested here.
	s := loadUnnamed(t, handlers{producer: `
        if (typeof globalThis.leaked !== "undefined") throw new Error("another run's functions are here");
        globalThis.leaked = { log: console.log, reg: ctx.registerInput, pub: ctx.publish, files: ctx.files, list: ctx.files.list,
            gmail: Object.getOwnPropertyDescriptor(ctx, "gmail").get };
        console.log("mine");
        ctx.registerInput({ source: "s", type: "t", id: "1", title: "x" });
        return 1;`})
	lim := testLimits()
	// a run first, so the pool learns how many connector accessors to build
	if _, err := invoke(t, s, PhaseProducer, &recordingHost{}, lim); err != nil {
		t.Fatal(err)
	}
	p := &runtimePool{}
	k := keyOf(withDefaults(lim))
	p.take(k)
	p.fill()

	callLeaked := func(f *fresh) (string, error) {
		// template literals only: the guarded built-ins (map, join) refuse
		// to work once the run is over
		v, err := f.vm.RunString("`" + `${leaked.log("leaked")},` +
			`${leaked.reg({ source: "s", type: "t", id: "2", title: "leaked" })},` +
			`${leaked.pub("a", { messageId: "m", inputId: "in-1", payload: 1 })},` +
			`${leaked.files.list({})},${leaked.list({})},${leaked.gmail().search({})}` + "`")
		if err != nil {
			return "", err
		}
		return v.String(), nil
	}
	const nothing = "undefined,undefined,undefined,undefined,undefined,undefined"

	hostA := &recordingHost{}
	runA, err := s.newRun(Invocation{Handler: "p", Phase: PhaseProducer, Host: hostA, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	fA := p.take(k)
	if len(fA.conns) < len(s.facade) {
		t.Fatalf("a pooled runtime has %d connector accessors built, want %d", len(fA.conns), len(s.facade))
	}
	if _, err := runA.start(context.Background(), fA); err != nil {
		t.Fatal(err)
	}

	hostB := &hookHost{}
	var during string
	var duringErr error
	hostB.onRegister = func() { during, duringErr = callLeaked(fA) }
	runB, err := s.newRun(Invocation{Handler: "p", Phase: PhaseProducer, Host: hostB, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	fB := p.take(k)
	if fB == fA || fB.vm == fA.vm {
		t.Fatal("the pool handed out run A's runtime again")
	}
	if _, err := runB.start(context.Background(), fB); err != nil {
		t.Fatalf("run B: %v", err)
	}
	if duringErr != nil || during != nothing {
		t.Errorf("run A's functions called during run B: %q, %v; want %q", during, duringErr, nothing)
	}
	after, err := callLeaked(fA)
	if err != nil || after != nothing {
		t.Errorf("run A's functions called after the runs: %q, %v; want %q", after, err, nothing)
	}

	for name, h := range map[string]*recordingHost{"A": hostA, "B": &hostB.recordingHost} {
		h.mu.Lock()
		inputs, published, reads := len(h.inputs), len(h.published), len(h.reads)
		h.mu.Unlock()
		if logs := h.logged(); !slices.Equal(logs, []string{"log: mine"}) || inputs != 1 || published != 0 || reads != 0 {
			t.Errorf("host %s: logs %.200q, %d inputs, %d published, %d reads; want its own log and input only", name, logs, inputs, published, reads)
		}
	}

	if err := fA.bind(runB); !errors.Is(err, errRebound) {
		t.Errorf("binding run A's runtime to run B: %v, want %v", err, errRebound)
	}
	if _, err := runB.start(context.Background(), fA); !errors.Is(err, errRebound) {
		t.Errorf("starting run B in run A's runtime: %v, want %v", err, errRebound)
	}
}

// hookHost calls onRegister inside its first RegisterInput, on the run's
// goroutine.
type hookHost struct {
	recordingHost
	onRegister func()
}

func (h *hookHost) RegisterInput(ctx context.Context, in InputRequest) error {
	if f := h.onRegister; f != nil {
		h.onRegister = nil // once: a leaked call must not recurse here
		f()
	}
	return h.recordingHost.RegisterInput(ctx, in)
}
