package sandbox

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var paramsCorpus = []string{
	`{}`,
	`null`,
	`{"url":"http://127.0.0.1:8080/sink","json":{"path":"inbox/f1.txt","n":12,"ok":true,"none":null,"tags":["a","b",[]],"o":{}}}`,
	`{"n":-0,"f":1.5e-7,"g":1E+21,"h":123456789012345678901234567890,"i":0.1}`,
	`{"s":"é ☃ 😀","e":"","a":[1,-2.5,"x",false,null,{"k":[{}]}]}`,
	`{"dup":1,"dup":2}`,
	`{"esc":"a\"b\\c\n\u0041\ud83d\ude00\ud800"}`,
	`{"ws" : 1 }`,
	` {"lead":1}`,
	`{"big":1e400}`,
	`{"bad":"` + "\xff\xfe" + `"}`,
	`{"ctl":"` + "\x01" + `"}`,
	`[1,2]`, `"s"`, `1`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":1,}`, `{"a"}`, `{"a":[1,]}`, `{`, ``,
	`{"deep":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`,
	`{"deeper":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`,
}

// TestDecodeParamsIsEncodingJSON: whatever params a worker sends, the host
// reads them as encoding/json would: the same map, or the same refusal.
func TestDecodeParamsIsEncodingJSON(t *testing.T) {
	t.Parallel()
	check := func(s string) {
		got, err := decodeParams([]byte(s))
		var want map[string]any
		werr := json.Unmarshal([]byte(s), &want)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("%.80q: error %v, encoding/json's %v", s, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%.80q: read as %#v, encoding/json reads %#v", s, got, want)
		}
	}
	for _, s := range paramsCorpus {
		check(s)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte(`{}[]":,-+.eE0123456789truefalsn \\u` + "\xff\x01é")
	for _, s := range paramsCorpus[:7] {
		for range 3000 {
			b := []byte(s)
			for range 1 + rnd.IntN(2) {
				if len(b) == 0 {
					break
				}
				switch i := rnd.IntN(len(b)); rnd.IntN(3) {
				case 0:
					b[i] = alphabet[rnd.IntN(len(alphabet))]
				case 1:
					b = append(b[:i], b[i+1:]...)
				default:
					b = append(b[:i], append([]byte{alphabet[rnd.IntN(len(alphabet))]}, b[i:]...)...)
				}
			}
			check(string(b))
		}
	}
}

// TestAppendParamsReadsBack: params written by the worker read back as the
// same map, through either reader.
func TestAppendParamsReadsBack(t *testing.T) {
	t.Parallel()
	for _, s := range paramsCorpus {
		var p map[string]any
		if json.Unmarshal([]byte(s), &p) != nil || p == nil {
			continue
		}
		b, ok := appendParams(nil, p)
		if !ok {
			if !strings.Contains(s, "deep") {
				t.Errorf("%.80q: not written", s)
			}
			continue
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, p) {
			t.Errorf("%.80q: wrote %s, read back %#v (%v)", s, b, back, err)
		}
		if quick, err := decodeParams(b); err != nil || !reflect.DeepEqual(quick, p) {
			t.Errorf("%.80q: wrote %s, read back quickly %#v (%v)", s, b, quick, err)
		}
	}
	if _, ok := appendParams(nil, map[string]any{"f": func() {}}); ok {
		t.Error("a value of another shape was written")
	}
}
