package sandbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLimits(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		code  string
		kind  ErrorKind
		want  string
		heavy bool // grows the heap on purpose: run alone
	}{
		{"an infinite loop ends at the wall time", `for (;;) {}`, ErrTimeout, "wall time of 200ms", false},
		{"a caught-and-retried loop still ends at the wall time", `for (;;) { try { for (;;) {} } catch (e) {} finally { continue; } }`, ErrTimeout, "wall time", false},
		{"a deep recursion ends at the stack limit", `const f = (n) => f(n + 1) + 1; try { f(0); } catch (e) { console.log("caught"); }`, ErrResource, "call stack grew past 200 frames", false},
		{"a huge repeat is refused before it allocates", `try { "x".repeat(1e9); } catch (e) { console.log("caught"); }`, ErrResource, "String.prototype.repeat would allocate", false},
		{"a huge padStart is refused before it allocates", `"x".padStart(2e9, "y");`, ErrResource, "String.prototype.padStart", false},
		{"a huge join is refused before it allocates", `const a = []; a.length = 5e8; a.join("abc");`, ErrResource, "Array.prototype.join", false},
		{"a huge Array is refused", `new Array(2e9).fill(0);`, ErrResource, "new Array() would allocate", false},
		{"a huge Array called without new is refused", `Array(2e9);`, ErrResource, "Array() would allocate", false},
		{"a huge fill of a grown array is refused", `const a = []; a.length = 1e9; a.fill(1);`, ErrResource, "Array.prototype.fill", false},
		{"a huge typed array is refused", `new Float64Array(1e9);`, ErrResource, "new Float64Array()", false},
		{"a huge ArrayBuffer is refused", `new ArrayBuffer(1e10);`, ErrResource, "new ArrayBuffer()", false},
		{"a huge Array.from of an array-like is refused", `Array.from({ length: 1e9 });`, ErrResource, "Array.from", false},
		{"a string doubling without end hits the heap limit", `let s = "x"; for (;;) { s += s; }`, ErrResource, "the heap grew", true},
		{"an endless push hits the heap limit", `const a = []; for (let i = 0; ; i++) { a.push({ i }); }`, ErrResource, "the heap grew", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lim := testLimits()
			lim.WallTime = 200 * time.Millisecond
			lim.MaxStackDepth = 200
			lim.MaxHeapGrowth = 64 << 20
			if tt.heavy {
				lim.WallTime = 20 * time.Second
				// the guards' heap watchdog is what this case tests: the
				// worker's own bound sits far enough behind it that a busy
				// machine, sampling the heap late, still meets the watchdog
				// first (TestWorkerMemoryBound tests the worker's bound)
				lim.MaxMemory = 2 << 30
				heavy.Lock()
				defer heavy.Unlock()
			} else {
				heavy.RLock()
				defer heavy.RUnlock()
			}
			s := load(t, handlers{producer: tt.code + "\nconsole.log(\"survived\");"})
			h := &recordingHost{}
			start := time.Now()
			_, err := invokeUnlocked(s, PhaseProducer, h, lim)
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.kind || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("err = %v (%+v), want %s containing %q", err, e, tt.kind, tt.want)
			}
			if logs := h.logged(); len(logs) != 0 {
				t.Errorf("the script went on: %v", logs)
			}
			if d := time.Since(start); d > lim.WallTime+time.Second {
				t.Errorf("took %s", d)
			}

			// The process goes on: the next run works.
			ok := load(t, handlers{producer: `return 1;`})
			if out, err := invokeUnlocked(ok, PhaseProducer, h, testLimits()); err != nil || string(out.State) != "1" {
				t.Errorf("a run after the limit: %v, %v", out, err)
			}
		})
	}

	t.Run("a limit hit inside a toJSON while encoding state still ends the run", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.WallTime = 200 * time.Millisecond
		s := load(t, handlers{next: `return { toJSON() { for (;;) {} } };`})
		_, err := invoke(t, s, PhaseNext, &recordingHost{}, lim, json.RawMessage(`{}`), json.RawMessage(`{"status":"none"}`))
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrTimeout {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("zero limits take the defaults", func(t *testing.T) {
		t.Parallel()
		if got := withDefaults(Limits{}); got != DefaultLimits() {
			t.Errorf("withDefaults(zero) = %+v", got)
		}
	})
}

func BenchmarkRun(b *testing.B) {
	s := load(b, handlers{producer: `const id = ctx.registerInput({ source: "files", type: "file", id: "1", title: "t" });
        await ctx.publish("a", { messageId: "m", inputId: id, payload: { n: state?.n } });
        return { n: (state?.n ?? 0) + 1 };`})
	h := &recordingHost{}
	state := json.RawMessage(`{"n":1}`)
	lim := testLimits()
	b.ReportAllocs()
	for b.Loop() {
		h.mu.Lock()
		h.inputs, h.published = nil, nil
		h.mu.Unlock()
		if _, err := invokeUnlocked(s, PhaseProducer, h, lim, state); err != nil {
			b.Fatal(err)
		}
	}
}
