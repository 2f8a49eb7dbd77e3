package sandbox

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/dop251/goja"
)

// The prototypes' guards are in their templates: goja's template is where
// lazyprotos.go expects it (a goja upgrade that moves it makes the guards
// eager again, safe but slower, and this test says so), and a new runtime
// has built none of the guarded methods.
func TestLazyProtosUnbuilt(t *testing.T) {
	t.Parallel()
	lay := protoLayout()
	if lay == nil {
		t.Fatal("goja's templates are not where lazyprotos.go looks: String.prototype, Array.prototype and Function.prototype are guarded eagerly")
	}
	gt := guardedTemplates()
	if gt == nil {
		t.Fatal("the guarded templates were not made: the prototypes are guarded eagerly")
	}
	f := newFresh(keyOf(withDefaults(testLimits())), func() {})
	arr := f.vm.Get("Array").(*goja.Object)
	objs := [3]*goja.Object{f.vm.ToValue("").ToObject(f.vm).Prototype(), arr.Get("prototype").(*goja.Object), arr.Prototype()}
	protos := map[*goja.Object][]protoGuard{}
	for i, o := range objs {
		protos[o] = protoGuardSets[i]
		if tmpl := lay.template(o); !tmpl.IsValid() || tmpl.UnsafePointer() != gt[i].to {
			t.Errorf("the prototype guarding %s has not the guarded template", protoGuardSets[i][0].what)
		}
	}
	if _, err := f.vm.RunString(`"a,b".toUpperCase().indexOf("B"); [1, 2].indexOf(2); (function () {}).call(null);`); err != nil {
		t.Fatal(err)
	}
	for o, gs := range protos {
		for _, pg := range gs {
			if lay.has(o, pg.name) {
				t.Errorf("%s was built by a script that never named it", pg.what)
			}
		}
	}
}

// protoRoute reaches a guarded method by one route, leaving it in C. $P
// stands for its prototype, $L for a literal that inherits from it, $M for
// its name.
type protoRoute struct{ name, code string }

var protoRoutes = []protoRoute{
	{"a literal", `const C = $L.$M;`},
	{"the prototype", `const C = $P.$M;`},
	{"Reflect.get", `const C = Reflect.get($P, "$M");`},
	{"the descriptor", `const C = Object.getOwnPropertyDescriptor($P, "$M").value;`},
	{"getOwnPropertyDescriptors", `const C = Object.getOwnPropertyDescriptors($P).$M.value;`},
	{"Reflect.getOwnPropertyDescriptor", `const C = Reflect.getOwnPropertyDescriptor($P, "$M").value;`},
	{"every own name", `let C;
        for (const n of Object.getOwnPropertyNames($P)) { let v; try { v = $P[n]; } catch (e) {} if (n === "$M") C = v; }`},
	{"Object.keys first", `Object.keys($P); Object.entries($P); const C = $P.$M;`},
	{"for-in first", `for (const k in $P) {} const C = $L.$M;`},
	{"a frozen prototype", `Object.freeze($P); const C = $L.$M;`},
	{"redefined without a value first", `Object.defineProperty($P, "$M", { enumerable: true }); const C = $L.$M;`},
	{"tested for first", `$P.hasOwnProperty("$M"); "$M" in $P; Object.getOwnPropertyNames($P); const C = $L.$M;`},
	{"an object inheriting from it", `const C = Object.create($P).$M;`},
	{"an object given it as prototype", `const C = Object.setPrototypeOf({}, $P).$M;`},
	{"a proxy of it", `const C = new Proxy($P, {}).$M;`},
	{"with", `const C = Function("with ($P) { return $M; }")();`},
	{"the constructor's prototype", `const C = $L.constructor.prototype.$M;`},
	{"the globals replaced first", `String = null; Array = undefined; globalThis.Function = 1; Object = null; const C = $L.$M;`},
	{"the globals deleted first", `delete globalThis.String; delete globalThis.Array; delete globalThis.Function; const C = $L.$M;`},
	{"the others deleted first", `for (const n of ["concat", "join", "map", "repeat", "split", "bind", "apply"]) if (n !== "$M") delete $P[n];
        const C = $L.$M;`},
	{"assigned back", `$P.$M = $P.$M; const C = $L.$M;`},
}

// protoLimits gives one call a limit of 2 MiB, so that each use below is
// over it while it still runs quickly where it is not guarded.
func protoLimits() Limits {
	lim := testLimits()
	lim.MaxHeapGrowth = 8 << 20
	return withDefaults(lim)
}

// protoUse is what each guarded method is asked to do, over the per-call
// limit of protoLimits, and what its refusal says.
func protoUse(what string) (code, refusal string) {
	const dbl = "const dbl = (n) => { let s = \"x\"; while (s.length < n) s += s; return s; };\n" +
		"const big = { length: 20000 }; const holes = []; holes.length = 20000;\n"
	refusal = what + " would allocate"
	name := what[strings.LastIndexByte(what, '.')+1:]
	switch what {
	case "String.prototype.concat":
		code = `const s = dbl(1 << 19); C.call(s, s, s, s, s);`
	case "String.prototype.replace":
		code = `C.call(dbl(1 << 19), "x", "$'$'$'$'$'");`
	case "String.prototype.replaceAll":
		code = `C.call(dbl(1 << 16), "", "");`
	case "String.prototype.split":
		code = `C.call(dbl(1 << 16), "");`
	case "String.prototype.repeat":
		code = `C.call("ab", 2e6);`
	case "String.prototype.padStart", "String.prototype.padEnd":
		code = `C.call("", 3e6);`
	case "Array.prototype.concat":
		code = `C.call([], holes);`
	case "Array.prototype.flat":
		code = `C.call([holes]);`
	case "Array.prototype.flatMap":
		code = `C.call([1], () => holes);`
	case "Array.prototype.join":
		code = `C.call(holes, "-".repeat(200));`
	case "Array.prototype.toLocaleString":
		code = `const t = dbl(1 << 20); C.call([t, t, t]);`
	case "Function.prototype.bind":
		code = `let f = function () {}; for (let i = 0; i <= ` + strconv.Itoa(protoLimits().MaxStackDepth) + `; i++) f = C.call(f, null);`
		refusal = what + " was given values nested deeper than"
	case "Function.prototype.apply":
		code = `C.call(function () {}, null, big);`
	default: // the length-guarded array methods, fill
		code = `C.call(big, (x) => x, 1);`
		if name == "toSpliced" || name == "copyWithin" || name == "with" || name == "fill" {
			code = `C.call(big, 0, 1);`
		}
	}
	return dbl + code, refusal
}

// unscopable are the guarded Array.prototype methods that a with statement
// does not reach.
var unscopable = map[string]bool{"copyWithin": true, "fill": true, "flat": true, "flatMap": true,
	"toReversed": true, "toSorted": true, "toSpliced": true, "with": true}

// Every route to a guarded prototype method finds it guarded: the oversized
// call is refused, by name. Each script is first run in a runtime without
// guards, where it must run through: so the route does reach the built-in,
// and it is the guard that refuses.
func TestLazyProtoRoutes(t *testing.T) {
	t.Parallel()
	heavy.RLock()
	defer heavy.RUnlock()
	protos := []struct {
		p, l string
		gs   []protoGuard
	}{
		{"String.prototype", `""`, stringProtoGuards[:]},
		{"Array.prototype", `[]`, arrayProtoGuards},
		{"Function.prototype", `(function () {})`, functionProtoGuards[:]},
	}
	k := keyOf(protoLimits())
	for _, pr := range protos {
		for _, pg := range pr.gs {
			use, refusal := protoUse(pg.what)
			for _, r := range protoRoutes {
				if r.name == "with" && unscopable[pg.name] {
					continue // with skips it (Array.prototype[Symbol.unscopables]), or a keyword
				}
				code := strings.NewReplacer("$P", pr.p, "$L", pr.l, "$M", pg.name).Replace(r.code)
				body := "(function () {\n" + code + "\n" + use + "\nreturn 1;\n})()"
				if _, err := goja.New().RunString(body); err != nil {
					t.Errorf("%s by %s, unguarded: %v (the route does not reach it)", pg.what, r.name, err)
					continue
				}
				f := newFresh(k, func() {})
				_, err := f.vm.RunString(body)
				var e *Error
				if !errors.As(f.sup.failure(), &e) || e.Kind != ErrResource || !strings.Contains(e.Message, refusal) {
					t.Errorf("%s by %s: err = %v, failure = %v; want %q", pg.what, r.name, err, f.sup.failure(), refusal)
				}
			}
		}
	}
}

// stringIterRoutes step a string iterator reached by one route through a
// string s of 32,768 characters: over the 16,384 steps that protoLimits
// allow.
var stringIterRoutes = []protoRoute{
	{"a spread", `[...s];`},
	{"for-of", `for (const c of s) {}`},
	{"Array.from", `Array.from(s);`},
	{"a Set", `new Set(s);`},
	{"destructuring", `const [a, ...rest] = s;`},
	{"a String object", `[...new String(s)];`},
	{"the symbol called", `const it = s[Symbol.iterator](); while (!it.next().done) {}`},
	{"the descriptor", `const it = Object.getOwnPropertyDescriptor(String.prototype, Symbol.iterator).value.call(s); while (!it.next().done) {}`},
	{"the own symbols first", `Object.getOwnPropertySymbols(String.prototype); Reflect.ownKeys(String.prototype); [...s];`},
	{"a frozen prototype", `Object.freeze(String.prototype); [...s];`},
	{"kept, then deleted", `const f = String.prototype[Symbol.iterator]; delete String.prototype[Symbol.iterator];
        const it = f.call(s); while (!it.next().done) {}`},
	{"the iterators' next, kept", `const next = Object.getPrototypeOf(""[Symbol.iterator]()).next;
        const it = s[Symbol.iterator](); while (!next.call(it).done) {}`},
	{"the globals deleted first", `delete globalThis.String; delete globalThis.Symbol; delete globalThis.Array; [...s];`},
	{"a string passed through Function", `const s2 = Function("return arguments[0]")(s); for (const c of s2) {}`},
}

// Every route to a string iterator finds its next guarded, though it is
// guarded only once goja builds String.prototype[Symbol.iterator]. Each
// script first runs through in a runtime without guards.
func TestLazyStringIteratorRoutes(t *testing.T) {
	t.Parallel()
	k := keyOf(protoLimits())
	const setUp = `let s = "x"; while (s.length < 20000) s += s;` + "\n"
	for _, r := range stringIterRoutes {
		body := "(function () {\n" + setUp + r.code + "\nreturn 1;\n})()"
		if _, err := goja.New().RunString(body); err != nil {
			t.Errorf("%s, unguarded: %v", r.name, err)
			continue
		}
		f := newFresh(k, func() {})
		_, err := f.vm.RunString(body)
		var e *Error
		if !errors.As(f.sup.failure(), &e) || e.Kind != ErrResource || !strings.Contains(e.Message, "a string iterator went past") {
			t.Errorf("%s: err = %v, failure = %v; want the string iterator refused", r.name, err, f.sup.failure())
		}
	}
}

// A runtime's entry in guardsByRuntime goes with the runtime: the registry
// keeps neither it nor its guard alive.
func TestGuardsByRuntimeForgets(t *testing.T) {
	k := keyOf(withDefaults(testLimits()))
	var keys []weak.Pointer[goja.Runtime]
	for range 20 {
		f := newFresh(k, func() {})
		if guardOf(f.vm) != f.g {
			t.Fatal("guardOf does not find a new runtime's guard")
		}
		keys = append(keys, weak.Make(f.vm))
	}
	left := len(keys)
	for deadline := time.Now().Add(5 * time.Second); left > 0 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		left = 0
		for _, key := range keys {
			if _, ok := guardsByRuntime.Load(key); ok {
				left++
			}
		}
	}
	if left > 0 {
		t.Errorf("%d of %d runtimes dropped are still in guardsByRuntime", left, len(keys))
	}
}
