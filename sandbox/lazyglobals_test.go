package sandbox

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// The lazy globals are in use: goja's table is where lazyglobals.go expects
// it (a goja upgrade that moves it makes the guards eager again, safe but
// slower, and this test says so), and a runtime that runs a script naming
// none of them never builds any.
func TestLazyGlobalsUnbuilt(t *testing.T) {
	t.Parallel()
	if layout() == nil {
		t.Fatal("goja's property table is not where lazyglobals.go looks: the typed arrays, ArrayBuffer and Reflect are guarded eagerly")
	}
	f := newFresh(keyOf(withDefaults(testLimits())), func() {})
	lz := f.g.lazy
	if lz == nil {
		t.Fatal("a new runtime has no lazy globals")
	}
	if _, err := f.vm.RunString(`[1, 2].map((x) => x * 2).join(); String({ a: "x".repeat(3) }); Object.keys(globalThis);`); err != nil {
		t.Fatal(err)
	}
	for i, name := range lazyNames {
		if !lz.ours(i) {
			t.Errorf("%s was built by a script that never named it", name)
		}
	}
	if _, err := f.vm.RunString(`Float32Array`); err != nil {
		t.Fatal(err)
	}
	for i, name := range lazyNames {
		if want := i == lazyReflect || i == lazyJSON; lz.ours(i) != want {
			t.Errorf("after reading Float32Array, %s still lazy = %v, want %v", name, lz.ours(i), want)
		}
	}
}

// lazyRoute reaches a built-in by one route: a handler body that leaves the
// built-in in C. NAME stands for the built-in's global name; acc(d) is the
// getter of descriptor d, which must be an accessor (lazyAccessor), or in a
// runtime without guards a function returning its value.
type lazyRoute struct{ name, code string }

var lazyRoutes = []lazyRoute{
	{"the name", `const C = NAME;`},
	{"globalThis[name]", `const C = globalThis["NAME"];`},
	{"Reflect.get", `const C = Reflect.get(globalThis, "NAME");`},
	{"the descriptor's getter, before any read", `const C = acc(Object.getOwnPropertyDescriptor(globalThis, "NAME")).call({});`},
	{"getOwnPropertyDescriptors", `const C = acc(Object.getOwnPropertyDescriptors(globalThis).NAME)();`},
	{"a getter kept, called after the name was read", `const get = acc(Object.getOwnPropertyDescriptor(globalThis, "NAME"));
        NAME; const C = get();`},
	{"a getter kept, called after another of its group was read", `const get = acc(Object.getOwnPropertyDescriptor(globalThis, "NAME"));
        Uint16Array; Reflect; const C = get();`},
	{"a proxy of globalThis", `const C = new Proxy(globalThis, {}).NAME;`},
	{"an object inheriting from globalThis", `const C = Object.create(globalThis).NAME;`},
	{"Reflect.getOwnPropertyDescriptor's getter", `const C = acc(Reflect.getOwnPropertyDescriptor(globalThis, "NAME"))();`},
	{"with", `const C = Function("with (globalThis) { return NAME; }")();`},
	{"indirect eval", `const C = globalThis["ev" + "al"]("NAME");`},
	{"every own name of globalThis", `let C;
        for (const n of Object.getOwnPropertyNames(globalThis)) { const v = globalThis[n]; if (n === "NAME") C = v; }`},
	{"a frozen global object", `Object.freeze(globalThis); const C = NAME;`},
	{"another name assigned first", `Int16Array = 1; BigUint64Array = undefined; const C = NAME;`},
	{"another name deleted first", `delete globalThis.Int32Array; const C = NAME;`},
	{"the constructor of an instance's prototype", `const C = Object.getPrototypeOf(new NAME(1)).constructor;`},
}

// typedRoutes reach the typed arrays and ArrayBuffer by further routes.
var typedRoutes = []lazyRoute{
	{"an instance's constructor", `const C = new NAME(1).constructor;`},
	{"%TypedArray%.from's species", `const C = Object.getPrototypeOf(NAME).from.call(NAME, []).constructor;`},
}

// bufferRoutes reach the original ArrayBuffer, which goja builds for any
// typed array's buffer, with its global read, deleted or replaced first.
var bufferRoutes = []lazyRoute{
	{"a typed array's buffer", `const C = new Uint8Array(1).buffer.constructor;`},
	{"a typed array's buffer, the global deleted first", `delete globalThis.ArrayBuffer; const C = new Float64Array(1).buffer.constructor;`},
	{"a typed array's buffer, the global replaced first", `ArrayBuffer = null; const C = new Int8Array(1).buffer.constructor;`},
	{"a buffer's slice's constructor", `const C = new Uint16Array(2).buffer.slice(0, 1).constructor;`},
}

// lazyUse is what each built-in is asked to do, over the per-call limit of
// lazyLimits but small enough to run where it is not guarded, and what its
// refusal names.
func lazyUse(name string) (code, refusal string) {
	const bytes = 32 << 20
	switch name {
	case "JSON":
		return `C.parse("[" + "0,".repeat(` + strconv.Itoa(bytes/parseValueBytes) + `) + "0]");`, "JSON.parse would allocate"
	case "Reflect":
		return `C.apply(function () {}, null, { length: ` + strconv.Itoa(bytes/elemBytes) + ` });`, "Reflect.apply would allocate"
	case "ArrayBuffer":
		return `new C(` + strconv.Itoa(bytes) + `);`, "new ArrayBuffer() would allocate"
	}
	for i, n := range typedArrays {
		if n == name {
			return `new C(` + strconv.Itoa(int(bytes/typedArraySizes[i])) + `);`, "new " + name + "() would allocate"
		}
	}
	panic(name)
}

const (
	lazyAccessor = `const acc = (d) => { if (typeof d.get !== "function") throw new Error("not an accessor: the route is not tested"); return d.get; };` + "\n"
	bareAccessor = "const acc = (d) => () => d.value;\n"
)

func lazyLimits() Limits {
	lim := testLimits()
	lim.MaxHeapGrowth = 64 << 20 // 16 MiB per call
	return lim
}

// Every route to a lazily guarded built-in finds it guarded: the oversized
// allocation is refused, by name. Each script is first run in a runtime
// without guards, where it must allocate and return: so it is the guard
// that refuses, and the route does reach the built-in.
func TestLazyGlobalRoutes(t *testing.T) {
	t.Parallel()
	heavy.RLock()
	defer heavy.RUnlock()
	type tc struct {
		name string
		r    lazyRoute
	}
	var cases []tc
	for _, name := range lazyNames {
		for _, r := range lazyRoutes {
			if (name == "Reflect" || name == "JSON") && strings.Contains(r.code, "new NAME") || strings.Contains(r.code, name) {
				continue // Reflect and JSON are not constructors; a route that assigns or deletes this very name reaches nothing
			}
			cases = append(cases, tc{name, r})
		}
		if name != "Reflect" && name != "JSON" {
			for _, r := range typedRoutes {
				if name != "ArrayBuffer" || !strings.Contains(r.code, "TypedArray") && !strings.Contains(r.code, "from") {
					cases = append(cases, tc{name, r})
				}
			}
		}
	}
	for _, r := range bufferRoutes {
		cases = append(cases, tc{"ArrayBuffer", r})
	}
	for _, c := range cases {
		use, refusal := lazyUse(c.name)
		body := strings.ReplaceAll(c.r.code, "NAME", c.name) + "\n" + use + "\nreturn 1;"

		bare := goja.New()
		if _, err := bare.RunString("(function () {\n" + bareAccessor + body + "\n})()"); err != nil {
			t.Errorf("%s by %s, unguarded: %v (the route does not reach it)", c.name, c.r.name, err)
			continue
		}
		s := loadLocal(t, handlers{producer: lazyAccessor + body})
		_, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, lazyLimits())
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrResource || !strings.Contains(e.Message, refusal) {
			t.Errorf("%s by %s: err = %v; want %q", c.name, c.r.name, err, refusal)
		}
	}
}

// A lazy global behaves as the built-in it stands for: it reads as the
// constructor, reads back as a plain non-enumerable property once read,
// takes an assignment, and a deleted one is gone.
func TestLazyGlobalsBehave(t *testing.T) {
	t.Parallel()
	s := loadLocal(t, handlers{producer: `
        const before = Object.getOwnPropertyNames(globalThis).includes("Uint8Array") && !Object.keys(globalThis).includes("Uint8Array");
        const u = new Uint8Array([1, 2, 3]);
        const d = Object.getOwnPropertyDescriptor(globalThis, "Uint8Array");
        Int8Array = 7;
        delete globalThis.Float32Array;
        "use strict";
        Reflect = { marker: 1 };
        return [before, typeof Uint8Array, Uint8Array.name, Uint8Array.BYTES_PER_ELEMENT, u.length, u instanceof Uint8Array,
          "value" in d, d.writable, d.enumerable, d.configurable, Int8Array, typeof Float32Array, Reflect.marker,
          new ArrayBuffer(8).byteLength, Array.isArray(Object.keys(globalThis)), JSON.stringify(JSON.parse('{"a":[1]}'))];`})
	out, err := invokeUnlocked(s, PhaseProducer, &recordingHost{}, testLimits())
	if want := `[true,"function","Uint8Array",1,3,true,true,true,false,true,7,"undefined",1,8,true,"{\"a\":[1]}"]`; err != nil || string(out.State) != want {
		t.Errorf("got %s, %v; want %s", out.State, err, want)
	}

	// Assigned or redefined before their group was built, they keep what
	// the script gave them when the group is built.
	s = loadLocal(t, handlers{producer: `
        Int8Array = 7;
        Object.defineProperty(globalThis, "Uint16Array", { value: 9, writable: true, configurable: true });
        Object.defineProperty(globalThis, "Reflect", { get() { return 11; }, configurable: true });
        new Float32Array(1);
        return [Int8Array, Uint16Array, Reflect];`})
	out, err = invokeUnlocked(s, PhaseProducer, &recordingHost{}, testLimits())
	if want := `[7,9,11]`; err != nil || string(out.State) != want {
		t.Errorf("got %s, %v; want %s", out.State, err, want)
	}
}

// The host's own decoding falls back to the runtime's JSON.parse for what
// its decoder leaves (nesting past 512 levels here). It works whether the
// script left JSON alone (the host's read guards it: the script's own
// JSON.parse is then refused over the limit) or deleted or replaced it
// first (the host borrows the original, and the script's JSON stays as the
// script left it).
func TestLazyJSONHostParse(t *testing.T) {
	t.Parallel()
	heavy.RLock()
	defer heavy.RUnlock()
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	host := func() *recordingHost {
		return &recordingHost{events: map[string][]Event{"a": {{MessageID: "m1", Payload: json.RawMessage(deep)}}}}
	}
	depth := `const evs = await ctx.peek("a", { limit: 1 });
        let d = 0;
        for (let v = evs[0].payload; Array.isArray(v); v = v[0]) d++;`
	for _, c := range []struct{ before, want string }{
		{`delete globalThis.JSON;`, `{"d":600,"json":"undefined"}`},
		{`JSON = 5;`, `{"d":600,"json":"number"}`},
		{`Object.defineProperty(globalThis, "JSON", { get() { return "mine"; }, configurable: true });`, `{"d":600,"json":"string"}`},
	} {
		s := loadLocal(t, handlers{prepare: c.before + "\n" + depth + "\nreturn { reservations: [], data: { d, json: typeof JSON } };"})
		out, err := invokeUnlocked(s, PhasePrepare, host(), lazyLimits(), json.RawMessage(`{}`))
		if err != nil || out.Prepare == nil || !strings.Contains(string(out.Prepare.Raw), c.want) {
			t.Errorf("%s: %v, %v; want data %s", c.before, out, err, c.want)
		}
	}
	use, refusal := lazyUse("JSON")
	s := loadLocal(t, handlers{prepare: depth + "\nconst C = JSON;\n" + use + "\nreturn { reservations: [], data: {} };"})
	_, err := invokeUnlocked(s, PhasePrepare, host(), lazyLimits(), json.RawMessage(`{}`))
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrResource || !strings.Contains(e.Message, refusal) {
		t.Errorf("JSON read after the host parsed with it: err = %v; want %q", err, refusal)
	}
}

// console is built on its first read: until then it is an accessor (so a
// phase that never logs builds none of its functions), enumerable as before;
// once read it is one object that logs, and an assignment replaces it.
func TestLazyConsole(t *testing.T) {
	t.Parallel()
	s := loadLocal(t, handlers{producer: `
        const d = Object.getOwnPropertyDescriptor(globalThis, "console");
        const lazy = typeof d.get === "function" && Object.keys(globalThis).includes("console");
        console.log("one");
        const same = console === console && console === d.get();
        globalThis.console.info("two");
        console = 5;
        const assigned = console === 5 && Object.getOwnPropertyDescriptor(globalThis, "console").value === 5;
        d.get().warn("three");
        return [lazy, same, assigned, console];`})
	h := &recordingHost{}
	out, err := invokeUnlocked(s, PhaseProducer, h, testLimits())
	if want := `[true,true,true,5]`; err != nil || string(out.State) != want {
		t.Errorf("got %v, %v; want %s", out, err, want)
	}
	if got, want := strings.Join(h.logged(), "|"), "log: one|info: two|warn: three"; got != want {
		t.Errorf("logged %q, want %q", got, want)
	}
}
