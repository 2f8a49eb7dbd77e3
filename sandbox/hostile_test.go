package sandbox

import (
	"cmp"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// hostile runs code as a producer, alone (it allocates on purpose), and
// checks the run ends with a resource error containing want that the script
// could not catch, having allocated less than maxAlloc bytes in all: the
// result was refused before it was built. It runs in this process, where the
// allocations can be counted: the guards are what a worker runs (the bound
// behind them is bound_test.go's).
func hostile(t *testing.T, lim Limits, code, want string, maxAlloc uint64) {
	t.Helper()
	heavy.Lock()
	defer heavy.Unlock()
	s := loadLocal(t, handlers{producer: "try {\n" + code + "\n} catch (e) { console.log(\"caught\", String(e)); }\nconsole.log(\"survived\");"})
	h := &recordingHost{}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := invokeUnlocked(s, PhaseProducer, h, lim)
	runtime.ReadMemStats(&after)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrResource || !strings.Contains(e.Message, want) {
		t.Errorf("err = %v, want a resource error containing %q", err, want)
	}
	if logs := h.logged(); len(logs) != 0 {
		t.Errorf("the script went on: %v", logs)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc {
		t.Errorf("the run allocated %d MiB, more than %d MiB: the result was built", got>>20, maxAlloc>>20)
	}
	// The process goes on.
	ok := load(t, handlers{producer: `return 1;`})
	if out, err := invokeUnlocked(ok, PhaseProducer, &recordingHost{}, testLimits()); err != nil || string(out.State) != "1" {
		t.Errorf("a run after the limit: %v, %v", out, err)
	}
}

// The cases of issue 13 that ended keep with "fatal error: out of memory"
// or grew it past the heap limit, at their real sizes, under the default
// limits: each is refused before the result is allocated.
func TestHostileQuotedCases(t *testing.T) {
	lim := testLimits()
	lim.WallTime = time.Minute                // building the 60 MB string is slow under -race
	const big = `const s = "x".repeat(60e6);` // 60 MB: allowed on its own
	for _, tt := range []struct{ name, code, want string }{
		{"s.concat building a 3 GB string", big + ` s.concat(...Array(50).fill(s));`,
			"String.prototype.concat would allocate about 2918 MiB, over the limit of 64 MiB"},
		{"JSON.stringify of 100 × 60 MB strings", big + ` JSON.stringify(Array(100).fill(s));`,
			"JSON.stringify would allocate"},
		{"replaceAll with a 60 MB replacement", big + ` "a".repeat(100).replaceAll("a", s);`,
			"String.prototype.replaceAll would allocate"},
		{"replaceAll with a function returning 60 MB", big + ` "a".repeat(100).replaceAll("a", () => s);`,
			"String.prototype.replaceAll would allocate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hostile(t, lim, tt.code, tt.want, 400<<20)
		})
	}
}

// More of the same family, under a modest heap limit (16 MiB, so one call
// may allocate 16 MiB) to keep the tests small.
func TestHostileBuiltins(t *testing.T) {
	lim := testLimits()
	lim.MaxHeapGrowth = 16 << 20
	const mb = `const s = "x".repeat(1 << 20);` // 1 MiB
	for _, tt := range []struct{ name, code, want string }{
		{"concat with an object argument converted once", mb + ` let n = 0; const o = { toString() { n++; return s; } }; s.concat(...Array(20).fill(o));`,
			"String.prototype.concat would allocate"},
		{"replace with a $` pattern growing quadratically", `"a".repeat(1e5).replaceAll("a", "$` + "`" + `");`,
			"String.prototype.replaceAll would allocate"},
		{"replace with a regexp and $&", mb + ` s.replace(/x/g, "$&$&$&$&$&$&$&$&$&$&$&$&$&$&$&$&$&");`,
			"RegExp.prototype[Symbol.replace] would allocate about 64 MiB for up to 1048577 matches, over the limit of 4 MiB"},
		{"replace with a regexp and a function", mb + ` "a".repeat(100).replace(/a/g, () => s);`,
			"RegExp.prototype[Symbol.replace] would allocate"},
		{"split into single characters", mb + ` s.split("");`,
			"String.prototype.split would allocate"},
		{"split by a regexp", mb + ` s.split(/(?:)/);`,
			"RegExp.prototype[Symbol.split] would allocate"},
		{"match of a global regexp", mb + ` s.match(/x/g);`,
			"RegExp.prototype[Symbol.match] would allocate"},
		{"replaceAll of a string matching everywhere", mb + ` s.replaceAll("x", "");`,
			"String.prototype.replaceAll would allocate about 64 MiB for up to 1048576 matches"},
		{"Array concat of one array many times", `const a = new Array(2e4).fill(0); a.concat(...Array(50).fill(a));`,
			"Array.prototype.concat would allocate"},
		{"flat of a shared nested structure", `let a = [1]; for (let i = 0; i < 40; i++) a = [a, a]; a.flat(Infinity);`,
			"Array.prototype.flat would allocate"},
		{"flatMap returning one big array each time", `const a = new Array(2e4).fill(0); a.slice(0, 100).flatMap(() => a);`,
			"Array.prototype.flatMap would allocate"},
		{"map over a huge sparse array", `const a = []; a.length = 1e9; a.map(x => x);`,
			"Array.prototype.map would allocate"},
		{"slice of a huge sparse array", `const a = []; a.length = 1e9; a.slice();`,
			"Array.prototype.slice would allocate"},
		{"JSON.stringify with indentation", mb + ` JSON.stringify(Array(20).fill(s), null, 2);`,
			"JSON.stringify would allocate"},
		{"JSON.stringify with a property list", mb + ` JSON.stringify(Array(20).fill({ a: s, b: 1 }), ["a"]);`,
			"JSON.stringify would allocate"},
		{"JSON.stringify of a huge sparse array", `const a = []; a.length = 1e9; JSON.stringify(a);`,
			"JSON.stringify would allocate"},
		{"join of arrays holding one string", mb + ` Array(20).fill([s]).join("");`,
			"Array.prototype.join would allocate"},
		{"String of arrays holding one string", mb + ` String(Array(20).fill([s, s]));`,
			"Array.prototype.join would allocate"},
		{"toLocaleString of arrays holding one string", mb + ` Array(20).fill([s]).toLocaleString();`,
			"Array.prototype.toLocaleString would allocate"},
		{"JSON.parse of many small arrays", `JSON.parse("[" + "[],".repeat(1e5) + "[]]");`,
			"JSON.parse would allocate"},
		{"apply with a huge array-like", `Math.max.apply(null, { length: 1e9 });`,
			"Function.prototype.apply would allocate"},
		{"Reflect.apply with a huge array-like", `Reflect.apply(Math.max, null, { length: 1e9 });`,
			"Reflect.apply would allocate"},
		{"Reflect.construct with a huge array-like", `Reflect.construct(Object, { length: 1e9 });`,
			"Reflect.construct would allocate"},
		{"String.fromCharCode applied to a huge array-like", `String.fromCharCode.apply(null, { length: 1e9 });`,
			"Function.prototype.apply would allocate"},
		{"join of a typed array", `new Float64Array(500000).join("-----");`,
			"%TypedArray%.prototype.join would allocate"},
		{"a spread of a sparse array's keys", `const a = []; a.length = 1e9; [...a.keys()];`,
			"an array iterator went past 32768 steps"},
		{"Array.from of a sparse array's values", `const a = []; a.length = 1e9; Array.from(a.values());`,
			"an array iterator went past 32768 steps"},
		{"a Set of a sparse array", `const a = []; a.length = 1e9; new Set(a);`,
			"an array iterator went past"},
		{"a call spreading a sparse array", `const a = []; a.length = 1e9; Math.max(...a);`,
			"an array iterator went past"},
		{"Object.fromEntries of a sparse array's entries", `const a = []; a.length = 1e9; Object.fromEntries(a.entries());`,
			"an array iterator went past"},
		{"a spread of a typed array", `[...new Uint8Array(4e6)];`,
			"an array iterator went past"},
		{"a spread of a string", mb + ` [...s];`,
			"a string iterator went past"},
		{"JSON.stringify of escapes", `JSON.stringify("\u0001".repeat(4e6));`,
			"JSON.stringify would allocate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hostile(t, lim, tt.code, tt.want, cmp.Or(refusedUnbuilt[tt.name], 64<<20))
		})
	}
}

// refusedUnbuilt: cases refused before their parts are even joined, so
// they may allocate little beyond the script's own string (a join that
// built as it went allocated 13 to 18 MiB here before its refusal, close
// enough to the 16 MiB heap limit for the heap's sampler to stop it first).
var refusedUnbuilt = map[string]uint64{
	"join of arrays holding one string":           8 << 20,
	"String of arrays holding one string":         8 << 20,
	"toLocaleString of arrays holding one string": 8 << 20,
}

// Nesting that the Go side walks recursively is bounded by the stack limit:
// deep enough, the goroutine stack overflows, and that is fatal to the
// process, not an error. The test lowers the process's stack cap so the
// unguarded built-ins would crash the test binary at this depth.
func TestHostileNesting(t *testing.T) {
	heavy.Lock()
	old := debug.SetMaxStack(64 << 20)
	defer func() { debug.SetMaxStack(old); heavy.Unlock() }()
	lim := testLimits()
	for _, tt := range []struct{ name, code, want string }{
		{"String of nested arrays", `let a = []; for (let i = 0; i < 2e5; i++) a = [a]; String(a);`,
			"Array.prototype.join was given values nested deeper than 1000 levels"},
		{"join of nested arrays", `let a = []; for (let i = 0; i < 2e5; i++) a = [a]; a.join();`,
			"Array.prototype.join was given values nested deeper than 1000 levels"},
		{"toLocaleString of nested arrays", `let a = []; for (let i = 0; i < 2e5; i++) a = [a]; a.toLocaleString();`,
			"Array.prototype.toLocaleString was given values nested deeper than 1000 levels"},
		{"JSON.stringify of nested arrays", `let a = []; for (let i = 0; i < 2e5; i++) a = [a]; JSON.stringify(a);`,
			"JSON.stringify was given values nested deeper than 1000 levels"},
		{"JSON.parse of nested arrays", `JSON.parse("[".repeat(2e6) + "]".repeat(2e6));`,
			"JSON.parse was given values nested deeper than 1000 levels"},
		{"JSON.parse of nested objects", `JSON.parse('{"a":'.repeat(2e6) + "1" + "}".repeat(2e6));`,
			"JSON.parse was given values nested deeper than 1000 levels"},
		{"a chain of bound functions", `let f = function () { return 1; }; for (let i = 0; i < 1e5; i++) f = f.bind(null); f();`,
			"Function.prototype.bind was given values nested deeper than 1000 levels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := load(t, handlers{producer: "try {\n" + tt.code + "\n} catch (e) { console.log(\"caught\", String(e)); }\nconsole.log(\"survived\");"})
			h := &recordingHost{}
			_, err := invokeUnlocked(s, PhaseProducer, h, lim)
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrResource || !strings.Contains(e.Message, tt.want) {
				t.Errorf("err = %v, want a resource error containing %q", err, tt.want)
			}
			if logs := h.logged(); len(logs) != 0 {
				t.Errorf("the script went on: %v", logs)
			}
		})
	}
}

// Values the host encodes itself are cut, not refused: a console line shows
// what fits, and a state far over its limit is named with its limit.
func TestHostileHostEncodings(t *testing.T) {
	heavy.Lock()
	defer heavy.Unlock()
	lim := testLimits()
	lim.MaxHeapGrowth = 16 << 20
	s := load(t, handlers{producer: `const s = "x".repeat(1 << 20); console.log(Array(20).fill(s)); return Array(20).fill(s);`})
	h := &recordingHost{}
	_, err := invokeUnlocked(s, PhaseProducer, h, lim)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, "the returned state is more than 4194304 bytes of JSON, over the limit of 65536 bytes") {
		t.Errorf("err = %v", err)
	}
	if logs := h.logged(); len(logs) != 1 || !strings.HasPrefix(logs[0], `log: ["xxx`) || !strings.HasSuffix(logs[0], "…") {
		t.Errorf("logs = %.80q", logs)
	}
}

// Every string the host stores from a run has a cap: input fields, message
// ids, ids asked for, a thrown message; and a huge sparse array handed to a
// host function is refused without being read.
func TestHostileHostValues(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	big := `"x".repeat(5000)`
	for _, tt := range []struct {
		name  string
		h     handlers
		phase Phase
		want  string
	}{
		{"an input title", handlers{producer: `ctx.registerInput({ source: "files", type: "file", id: "1", title: ` + big + ` });`}, PhaseProducer,
			"ctx.registerInput: title is 5000 bytes, over the limit of 4096 bytes"},
		{"an input id", handlers{producer: `ctx.registerInput({ source: "files", type: "file", id: ` + big + `, title: "t" });`}, PhaseProducer,
			"ctx.registerInput: id is 5000 bytes, over the limit of 4096 bytes"},
		{"a message id", handlers{next: `await ctx.publish("b", { messageId: ` + big + `, payload: 1 });`}, PhaseNext,
			"ctx.publish: messageId is 5000 bytes, over the limit of 4096 bytes"},
		{"an input id in publish", handlers{producer: `await ctx.publish("a", { messageId: "m", inputId: ` + big + `, payload: 1 });`}, PhaseProducer,
			"ctx.publish: inputId is 5000 bytes, over the limit of 4096 bytes"},
		{"an id asked for", handlers{prepare: `await ctx.getByIds("a", [` + big + `]);`}, PhasePrepare,
			"ctx.getByIds: ids[0] is 5000 bytes, over the limit of 4096 bytes"},
		{"a sparse array of ids", handlers{prepare: `const ids = []; ids.length = 1e9; await ctx.getByIds("a", ids);`}, PhasePrepare,
			"ctx.getByIds: 1000000000 ids is over the largest allowed, 1000"},
		{"a sparse array of topics", handlers{next: `const t = []; t.length = 1e9; await ctx.publish(t, { messageId: "m", payload: 1 });`}, PhaseNext,
			"ctx.publish takes a topic or an array of topics first"},
		{"params over MaxParams", handlers{producer: `await ctx.files.read({ path: "x".repeat(2 << 20) });`}, PhaseProducer,
			"the params of ctx.files.read is 2097163 bytes of JSON, over the limit of 1048576 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := load(t, tt.h)
			_, err := invoke(t, s, tt.phase, &recordingHost{}, lim, json.RawMessage(`{}`), json.RawMessage(`{"status":"none"}`))
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, tt.want) {
				t.Errorf("err = %v, want a logic error containing %q", err, tt.want)
			}
		})
	}

	t.Run("a thrown 60 MB string is cut in the error", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `throw "x".repeat(1 << 20);`})
		_, err := invoke(t, s, PhaseProducer, &recordingHost{}, lim)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v", err)
		}
		if len(e.Message) > 5000 || !strings.Contains(e.Message, "more bytes cut)") {
			t.Errorf("message of %d bytes: %.100q", len(e.Message), e.Message)
		}
	})
}

// A huge sparse array costs the script nothing; no host check may export
// it (a copy of a slot per element).
func TestHostileSparseArrays(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, code string
		kind       ErrorKind
		want       string
	}{
		{"returned from a handler that is not async", `const a = []; a.length = 1e9; return a;`, ErrLogic, "the returned state"},
		{"given to new Array", `const a = []; a.length = 1e9; new Array(a); return 1;`, "", ""},
		{"given to a typed array constructor", `const a = []; a.length = 1e9; new Uint8Array(a);`, ErrResource, "new Uint8Array() would allocate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(handlers{}.source(), "handler: async (ctx, state) => {\nreturn state;", "handler: (ctx, state) => {\n"+tt.code, 1)
			s, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			_, err = invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
			if tt.kind == "" {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.kind || !strings.Contains(e.Message, tt.want) {
				t.Errorf("err = %v, want %s containing %q", err, tt.kind, tt.want)
			}
		})
	}
}

// Loops that break out of many iterators, and iterations of ordinary size,
// are not refused.
func TestIteratorsOfOrdinarySize(t *testing.T) {
	t.Parallel()
	s := load(t, handlers{producer: `const a = Array.from({ length: 1000 }, (_, i) => i);
        let n = 0;
        for (let i = 0; i < 20000; i++) { for (const x of a) { n += x; break; } }
        for (const x of a) n += x;
        for (const c of "héllo") n += c.length;
        return [n, [...a].length, new Set(a).size, Math.max(...a)];`})
	out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
	if want := `[499505,1000,1000,999]`; err != nil || string(out.State) != want {
		t.Errorf("got %s, %v; want %s", out.State, err, want)
	}
}

// A guarded constructor reached through its prototype's constructor, not
// the global name, is guarded too: it is the same proxy.
func TestHostileConstructorThroughPrototype(t *testing.T) {
	lim := testLimits()
	lim.MaxHeapGrowth = 16 << 20
	for _, code := range []string{
		`new (new Uint8Array(0).constructor)(2**28);`,
		`new (Object.getPrototypeOf(new Int32Array(0)).constructor)(2**26);`,
		`new (new ArrayBuffer(0).constructor)(2**28);`,
		`Reflect.construct(new Float64Array(0).constructor, [2**25]);`,
		`new ([].constructor)(2**25);`,
	} {
		t.Run(code, func(t *testing.T) {
			hostile(t, lim, code, "would allocate", 64<<20)
		})
	}
}
