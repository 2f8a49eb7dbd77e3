package sandbox

import (
	"encoding/json"
	"testing"
)

// The host JSON.stringify answers as the specification (and goja's own)
// does on the cases scripts rely on.
func TestJSONStringify(t *testing.T) {
	t.Parallel()
	cases := []stringCase{
		{`JSON.stringify({ b: 1, a: [1, "x", null, undefined, () => 1, NaN, -0, 1.5e300] })`, `{"b":1,"a":[1,"x",null,null,null,null,0,1.5e+300]}`},
		{`JSON.stringify({ u: undefined, f() {}, s: Symbol("x"), n: null })`, `{"n":null}`},
		{`JSON.stringify(undefined)`, `undefined`},
		{`JSON.stringify("q\"\\\n\t\u0001é😀")`, `"q\"\\\n\t\u0001é😀"`},
		{`JSON.stringify({ 2: "b", 1: "a", z: 1, y: 2 }, ["y", "1", 2, "y"])`, `{"y":2,"1":"a","2":"b"}`},
		{`JSON.stringify({ a: 1, b: { c: 2 } }, function (k, v) { return k === "c" ? v * 10 + (this.c === 2 ? 1 : 0) : v; })`, `{"a":1,"b":{"c":21}}`},
		{`JSON.stringify({ a: [1, { b: 2 }], e: {}, l: [] }, null, 2)`, "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n  \"e\": {},\n  \"l\": []\n}"},
		{`JSON.stringify([1], null, "--")`, "[\n--1\n]"},
		{`JSON.stringify({ a: 1 }, null, new Number(3))`, "{\n   \"a\": 1\n}"},
		{`JSON.stringify({ d: new Date(0), t: { toJSON(k) { return "key " + k; } } })`, `{"d":"1970-01-01T00:00:00.000Z","t":"key t"}`},
		{`JSON.stringify([new Number(1), new String("s"), new Boolean(false), Object(true)])`, `[1,"s",false,true]`},
		{`JSON.stringify(new Proxy([1, 2], {}))`, `[1,2]`},
		{`JSON.stringify(new Proxy({ a: new Proxy([1], {}) }, {}))`, `{"a":[1]}`},
		{`JSON.stringify({ a: 1, b: 2 }, new Proxy(["b"], {}))`, `{"b":2}`},
		{`JSON.stringify(5, function (k, v) { return k === "" ? JSON.stringify(Object.keys(this)) + ":" + this[""] : v; })`, `"[\"\"]:5"`},
		{`(() => { const p = Proxy.revocable([], {}); p.revoke(); try { JSON.stringify([p.proxy]); } catch (e) { return e instanceof TypeError ? "TypeError" : String(e); } })()`, `TypeError`},
		{`JSON.stringify(Object.create({ inherited: 1 }, { own: { value: 2, enumerable: true }, hidden: { value: 3 } }))`, `{"own":2}`},
		{`JSON.stringify({ r: JSON.rawJSON("1e1000") })`, `{"r":1e1000}`},
		{`(() => { try { const o = {}; o.o = o; JSON.stringify(o); } catch (e) { return e instanceof TypeError ? "TypeError" : String(e); } })()`, `TypeError`},
		{`(() => { try { JSON.stringify({ n: 1n }); } catch (e) { return e instanceof TypeError ? "TypeError" : String(e); } })()`, `TypeError`},
		{`(() => { try { JSON.stringify({ get x() { throw new Error("boom"); } }); } catch (e) { return e.message; } })()`, `boom`},
		{`(() => { const a = [1]; return JSON.stringify([a, a]); })()`, `[[1],[1]]`},
	}
	expectStrings(t, cases)

	// A lone surrogate is escaped, also in the host's own encoding.
	s := load(t, handlers{producer: `return [JSON.stringify("\ud800"), "\udc00"];`})
	out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
	if want := `["\"\\ud800\"","\udc00"]`; err != nil || string(out.State) != want {
		t.Errorf("lone surrogates: %s, %v; want %s", out.State, err, want)
	}
}

// The host's Array.prototype.join and toLocaleString answer as goja's do.
func TestArrayJoin(t *testing.T) {
	t.Parallel()
	cases := []stringCase{
		{`[1, null, undefined, "a", [2, [3]]].join()`, `1,,,a,2,3`},
		{`[1, 2].join(" - ")`, `1 - 2`},
		{`[1, 2].join(undefined)`, `1,2`},
		{`String([1, [2, 3]])`, `1,2,3`},
		{`(() => { const a = [1]; a.push(a, 2); return a.join(); })()`, `1,,2`},
		{`Array.prototype.join.call({ length: 2, 0: "x", 1: "y" }, "+")`, `x+y`},
		{`Array.prototype.join.call("ab", "|")`, `a|b`},
		{`[{ toLocaleString() { return "L"; } }, 1].toLocaleString()`, `L,1`},
		{`[].join()`, ``},
		{`(() => { try { Array.prototype.join.call(null); } catch (e) { return e instanceof TypeError ? "TypeError" : String(e); } })()`, `TypeError`},
	}
	expectStrings(t, cases)
}

// Replacements go through the host's counting replacer; $ patterns expand
// as the specification says.
func TestReplaceSubstitutions(t *testing.T) {
	t.Parallel()
	cases := []stringCase{
		{`"abcabc".replace("b", "[$&|$$|$` + "`" + `|$']")`, "a[b|$|a|cabc]cabc"},
		{`"abcabc".replaceAll("b", "-")`, "a-ca-c"},
		{`"abcabc".replace(/(b)(c)/g, "$2$1$3$10")`, "acb$3b0acb$3b0"},
		{`"2024-05-06".replace(/(?<y>\d+)-(?<m>\d+)-(?<d>\d+)/, "$<d>.$<m>.$<y> $<x>")`, "06.05.2024 "},
		{`"aaa".replace(/a/g, (m, off) => off)`, "012"},
		{`"aaa".replaceAll("a", { toString() { return "b"; } })`, "bbb"},
		{`"x".replace("x", "$")`, "$"},
		{`"abc".split("").concat("d", 1).join("")`, "abcd1"},
		{`"a,b,,c".split(",", 2).join("|")`, "a|b"},
		{`"a1b2c".split(/\d/).join("|")`, "a|b|c"},
		{`"aXbX".match(/X/g).length`, "2"},
		{`[[1, [2]], [3]].flat(Infinity).join()`, "1,2,3"},
		{`[1, 2].flatMap(x => [x, x * 10]).join()`, "1,10,2,20"},
		{`Math.max.apply(null, [1, 5, 3])`, "5"},
		{`JSON.parse('{"a":[1,{"b":"c,d"}]}', (k, v) => k === "b" ? v.toUpperCase() : v).a[1].b`, "C,D"},
	}
	expectStrings(t, cases)
}

type stringCase struct{ code, want string }

// expectStrings runs each code as a producer returning String(code) and
// compares the result.
func expectStrings(t *testing.T, cases []stringCase) {
	t.Helper()
	for _, c := range cases {
		s := load(t, handlers{producer: "return String(" + c.code + ");"})
		out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
		if err != nil {
			t.Errorf("%s: %v", c.code, err)
			continue
		}
		var got string
		if err := json.Unmarshal(out.State, &got); err != nil || got != c.want {
			t.Errorf("%s\n got %s (%v)\nwant %s", c.code, out.State, err, c.want)
		}
	}
}
