package sandbox

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// globals lists a runtime's own global names, sorted.
func globals(t *testing.T, f *fresh) []string {
	t.Helper()
	v, err := f.vm.RunString(`Object.getOwnPropertyNames(globalThis).sort().join(",")`)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(v.String(), ",")
}

// A runtime that ran something leaves the pool for good: the pool never
// hands it out again, and what it ran is in no runtime handed out after it.
func TestPoolNeverHandsOutAUsedRuntime(t *testing.T) {
	t.Parallel()
	p := &runtimePool{}
	k := keyOf(withDefaults(Limits{}))
	used := p.take(k)
	if _, err := used.vm.RunString(`globalThis.leftover = 1; Array.prototype.leftover = 2; JSON.leftover = 3;`); err != nil {
		t.Fatal(err)
	}
	seen := map[*goja.Runtime]bool{used.vm: true}
	for round := range 3 {
		p.fill()                      // waits for a full pool
		for i := range poolSize + 1 { // the whole pool, then one built on the spot
			f := p.take(k)
			if seen[f.vm] {
				t.Fatalf("round %d, take %d: a runtime was handed out again", round, i)
			}
			seen[f.vm] = true
			got, err := f.vm.RunString(`[typeof leftover, typeof [].leftover, typeof JSON.leftover].join()`)
			if err != nil || got.String() != "undefined,undefined,undefined" {
				t.Fatalf("round %d, take %d: leftovers %v, %v", round, i, got, err)
			}
			if _, err := f.vm.RunString(`globalThis.leftover = 1`); err != nil { // used now, too
				t.Fatal(err)
			}
		}
	}
}

// A pooled runtime holds what a new goja runtime holds, plus Keep; the
// guards replace built-ins but add no names.
func TestPooledRuntimeHasNoExtraGlobals(t *testing.T) {
	t.Parallel()
	p := &runtimePool{}
	k := keyOf(withDefaults(Limits{}))
	p.take(k)
	p.fill()
	p.mu.Lock()
	n := len(p.ready)
	p.mu.Unlock()
	if n != poolSize {
		t.Fatalf("%d runtimes ready after fill, want %d", n, poolSize)
	}
	pooled := p.take(k)
	base := &fresh{vm: goja.New()}
	want := append(globals(t, base), "Keep")
	slices.Sort(want)
	if got := globals(t, pooled); !slices.Equal(got, want) {
		t.Errorf("a pooled runtime's globals:\n%v\nwant\n%v", got, want)
	}
}

// Runtimes built for other limits are not handed to a run with these: the
// guards and the stack limit are set up for one key.
func TestPoolFollowsTheLimits(t *testing.T) {
	t.Parallel()
	p := &runtimePool{}
	a := keyOf(withDefaults(Limits{}))
	b := a
	b.stack, b.maxHeap = 50, 1<<20
	p.take(a)
	p.fill()
	f := p.take(b)
	if f.key != b {
		t.Fatalf("took a runtime set up for %+v, want %+v", f.key, b)
	}
	p.fill()
	for range poolSize {
		if f := p.take(b); f.key != b {
			t.Fatalf("pooled runtime set up for %+v, want %+v", f.key, b)
		}
	}
	// the stack limit of b holds in its runtimes
	_, err := p.take(b).vm.RunString(`(function f(n) { return n ? f(n - 1) : 0; })(200)`)
	var overflow *goja.StackOverflowError
	if !errors.As(err, &overflow) {
		t.Errorf("recursion 200 deep under a limit of 50: %v", err)
	}
}

// Through Script.Run: every phase finds a runtime where no other phase's
// globals exist, however many phases ran before it.
func TestRunsShareNoRuntime(t *testing.T) {
	t.Parallel()
	s := load(t, handlers{producer: `
        const before = { mark: typeof globalThis.mark, polluted: "polluted" in {} };
        globalThis.mark = 1;
        Object.prototype.polluted = true;
        return before;`})
	for i := range 3 * poolSize {
		inv := Invocation{Handler: "p", Phase: PhaseProducer, Host: &recordingHost{}, Limits: testLimits()}
		out, err := s.Run(context.Background(), inv)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"mark":"undefined","polluted":false}`; string(out.State) != want {
			t.Fatalf("run %d: state %s, want %s", i, out.State, want)
		}
	}
}

// BenchmarkRuntimeSetUp is the set-up the pool takes off a phase.
func BenchmarkRuntimeSetUp(b *testing.B) {
	k := keyOf(withDefaults(Limits{}))
	b.ReportAllocs()
	for b.Loop() {
		newFresh(k, func() {})
	}
}
