package sandbox

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestObjectMembersAgreeWithEncodingJSON: the quick reading of prepare's
// result finds what encoding/json finds, or leaves the text to it.
func TestObjectMembersAgreeWithEncodingJSON(t *testing.T) {
	t.Parallel()
	read := []string{
		`{}`,
		`{"data":null}`,
		`{"reservations":[{"topic":"a","ids":["x","y"]}],"data":{"s":"a\"}],{[","n":[1,[2,{}]],"t":true},"ui":{"title":"T"},"wakeAt":"2026-01-01T00:00:00Z"}`,
		`{"data":"\\","x":-1.5e3}`,
		`{"data":"é ☃ \ud83d\ude00"}`,
		`{"a":1,"a":2}`,
	}
	left := []string{`{"d\u0061ta":1}`, `{ "data":1}`, `{"data" :1}`, `{"data":1 }`, `[1]`, `"s"`, `{"data":1`, `{"data":}`,
		`{"data":1,}`, `{"data":[1}`, `{"data":"x}`, `{"data":1]`, `{"data":1}x`, `{"a":1 ,"b":2}`, ``, `{`, `{"`}
	for _, s := range read {
		ms, ok := objectMembers([]byte(s))
		if !ok {
			t.Errorf("%s: left to encoding/json", s)
			continue
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		got := map[string]json.RawMessage{}
		for _, m := range ms {
			got[m.key] = m.val
		}
		for k := range want {
			if string(lookup(ms, k)) != string(want[k]) {
				t.Errorf("%s: %s is %s, encoding/json says %s", s, k, lookup(ms, k), want[k])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d keys, encoding/json finds %d", s, len(got), len(want))
		}
	}
	for _, s := range left {
		if ms, ok := objectMembers([]byte(s)); ok {
			t.Errorf("%s: read as %v, not left to encoding/json", s, ms)
		}
	}
	// cut or flipped anywhere: read or left, never a panic
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, s := range read {
		for cut := range len(s) {
			objectMembers([]byte(s[:cut]))
		}
		for range 500 {
			b := []byte(s)
			b[rnd.IntN(len(b))] = byte(rnd.Uint32())
			objectMembers(b)
		}
	}
}

// TestPreparedJSONIsWhatEncodingJSONWrote: the kept result says what the
// struct encoding/json wrote said.
func TestPreparedJSONIsWhatEncodingJSONWrote(t *testing.T) {
	t.Parallel()
	cases := []struct {
		res    []Reservation
		data   string
		ui     string
		wakeAt string
	}{
		{[]Reservation{}, `null`, ``, ``},
		{[]Reservation{{Topic: "a\"\\<>&\u2028", IDs: []string{"x\n", "bad \xff utf8"}}, {Topic: "b", IDs: []string{}}}, `{"n":[1,{"s":"<"}]}`, `{"title":"T"}`, "2026-01-01T00:00:00Z"},
	}
	for _, c := range cases {
		got := preparedJSON(c.res, json.RawMessage(c.data), json.RawMessage(c.ui), c.wakeAt)
		want, err := json.Marshal(struct {
			Reservations []Reservation   `json:"reservations"`
			Data         json.RawMessage `json:"data"`
			UI           json.RawMessage `json:"ui,omitempty"`
			WakeAt       string          `json:"wakeAt,omitempty"`
		}{c.res, json.RawMessage(c.data), json.RawMessage(c.ui), c.wakeAt})
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s is not JSON: %v", got, err)
		}
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("wrote %s\nencoding/json %s", got, want)
		}
	}
}
