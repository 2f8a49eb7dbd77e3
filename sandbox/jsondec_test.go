package sandbox

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// The host's JSON decoding builds the values goja's JSON.parse builds, and
// leaves to JSON.parse the text it does not take.
func TestDecodeJSONAsJSONParse(t *testing.T) {
	t.Parallel()
	vm := goja.New()
	parse, _ := goja.AssertFunction(vm.Get("JSON").(*goja.Object).Get("parse"))
	taken := []string{
		`{}`, `[]`, ` {"a": 1, "b": [1, 2, {"c": null}], "d": "x"} `, "\t[true,false,null]\r\n",
		`{"b":1,"a":2,"b":3}`, `{"__proto__":{"x":1}}`, `{"1":1,"0":0,"a":2}`, `{"":1}`,
		`-0`, `0`, `-1`, `1.5e300`, `-1E-7`, `2.5E+3`, `12345678901234567890`, `9007199254740993`,
		`"é😀"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800x"`, `"\udc00\ud800"`, `"\ud83d\u0041"`,
		`"a\"\\\/\b\f\n\r\t"`, `"\u003chtml\u003e \u2028"`, `true`, `false`, `null`, `[[[[1]]]]`,
		`{"k\u00e9y":"v","ké":[]}`, `"` + strings.Repeat("a", 40) + `"`, `"` + strings.Repeat("é", 20) + `"`,
		`"` + strings.Repeat(`a\n`, 20) + `"`, `{"` + strings.Repeat("k", 30) + `":1}`, `[{"reservations":[{"topic":"a","ids":["m1"]}],"data":{"n":1.25}}]`,
	}
	for _, text := range taken {
		got, ok := decodeJSON(vm, text)
		if !ok {
			t.Errorf("%s: left to JSON.parse", text)
			continue
		}
		want, err := parse(goja.Undefined(), vm.ToValue(text))
		if err != nil {
			t.Fatalf("%s: JSON.parse: %v", text, err)
		}
		if diff := sameValue(got, want, "value"); diff != "" {
			t.Errorf("%s: %s", text, diff)
		}
	}
	left := []string{
		``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `+1`, `-`, `1e`, `1e400`,
		`"\x"`, `"a`, `tru`, `nul`, `[1] x`, `"\u12"`, "\"\xff\"", "\"tab\there\"", `'a'`, `NaN`,
		strings.Repeat("[", maxDecodeDepth+1) + strings.Repeat("]", maxDecodeDepth+1),
	}
	for _, text := range left {
		if _, ok := decodeJSON(vm, text); ok {
			t.Errorf("%q: taken; JSON.parse should answer it", text)
		}
	}
}

// sameValue describes how a differs from b, "" when they are the same
// values: the same primitive of the same kind (an integer is not a float,
// -0 is not 0), or objects of the same class and prototype whose own
// properties, in order, are the same values.
func sameValue(a, b goja.Value, at string) string {
	ao, aObj := a.(*goja.Object)
	bo, bObj := b.(*goja.Object)
	switch {
	case aObj != bObj:
		return at + ": an object and a primitive"
	case !aObj:
		if reflect.TypeOf(a) != reflect.TypeOf(b) || !a.StrictEquals(b) {
			return at + ": " + a.String() + " is not " + b.String()
		}
		if goja.IsNumber(a) && math.Signbit(a.ToFloat()) != math.Signbit(b.ToFloat()) {
			return at + ": the signs of zero differ"
		}
		return ""
	case ao.ClassName() != bo.ClassName() || !ao.Prototype().SameAs(bo.Prototype()):
		return at + ": class or prototype differ"
	}
	ak, bk := ao.GetOwnPropertyNames(), bo.GetOwnPropertyNames()
	if !reflect.DeepEqual(ak, bk) {
		return at + ": own properties " + strings.Join(ak, ",") + " are not " + strings.Join(bk, ",")
	}
	for _, k := range ak {
		if d := sameValue(ao.Get(k), bo.Get(k), at+"."+k); d != "" {
			return d
		}
	}
	return ""
}
