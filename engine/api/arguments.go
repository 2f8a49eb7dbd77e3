package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"keep/connectors"
)

// What a person approves is every argument of the call, each named: an
// approval lists them one per line ("json.to: \"attacker-iban\""), a value
// longer than its room is cut with the count of bytes not shown, and keep's
// own fields (reconcile) are listed apart, since they are not sent. The
// red team's `{"memo":"buy milk…` hid a second key behind one long value.

// Argument is one leaf of a call's parameters.
type Argument struct {
	// Name is its path from the top: "to", "json.memo", "rows[2].amount",
	// a key that is no plain word quoted (headers["X-Api-Key"]).
	Name string `json:"name"`
	// Value is its JSON text, cut to the room it was listed with.
	Value string `json:"value"`
	// Hidden is how many bytes of Value were cut away (0: it is whole).
	Hidden int `json:"hidden_bytes,omitempty"`
	// Keep: a field keep reads itself (reconcile), not sent to the service.
	Keep bool `json:"keep,omitempty"`
}

// ArgumentRoom is the bytes of one value a listing shows; `keep attention
// ID` and an opened card show every value whole.
const ArgumentRoom = 160

// Shown is how the argument reads on one line: name: value, and the count
// of what was cut.
func (a Argument) Shown() string {
	s := a.Name + ": " + a.Value
	if a.Hidden > 0 {
		s += fmt.Sprintf("…(+%d bytes)", a.Hidden)
	}
	return s
}

// Arguments lists every leaf of params (a JSON object, as the host
// observed the call), objects and lists walked into, in the order written;
// each value is cut to room bytes (0: whole). keep's own fields come last.
// params that are not an object are one argument named "params".
func Arguments(params json.RawMessage, room int) []Argument {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	var tool, own []Argument
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return []Argument{cut("params", text(params), room)}
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		key, _ := k.(string)
		if connectors.IsKeepField(key) {
			own = walkArgs(own, argName("", key), v, room)
			for i := range own {
				own[i].Keep = true
			}
			continue
		}
		tool = walkArgs(tool, argName("", key), v, room)
	}
	return append(tool, own...)
}

func walkArgs(out []Argument, name string, v json.RawMessage, room int) []Argument {
	v = bytes.TrimSpace(v)
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return append(out, cut(name, string(v), room))
	}
	switch tok {
	case json.Delim('{'):
		n := len(out)
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				break
			}
			var e json.RawMessage
			if dec.Decode(&e) != nil {
				break
			}
			key, _ := k.(string)
			out = walkArgs(out, argName(name, key), e, room)
		}
		if len(out) == n {
			out = append(out, Argument{Name: name, Value: "{}"})
		}
		return out
	case json.Delim('['):
		// a list of plain values is one value; a list holding objects or
		// lists is walked into, so every key in it is named
		var elems []json.RawMessage
		for dec.More() {
			var e json.RawMessage
			if dec.Decode(&e) != nil {
				break
			}
			elems = append(elems, e)
		}
		nested := false
		for _, e := range elems {
			if e = bytes.TrimSpace(e); len(e) > 0 && (e[0] == '{' || e[0] == '[') {
				nested = true
			}
		}
		if !nested {
			return append(out, cut(name, text(v), room))
		}
		for i, e := range elems {
			out = walkArgs(out, name+"["+strconv.Itoa(i)+"]", e, room)
		}
		return out
	}
	return append(out, cut(name, text(v), room))
}

// text is the JSON v as a person reads it: compact, and without the
// \u003c that Go's encoder writes for <, > and & (it is what the service
// receives as those characters).
func text(v json.RawMessage) string {
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&x) != nil {
		return string(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(x) != nil {
		return string(v)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// argName is key under parent: dotted when key is a plain word, else
// quoted in brackets, so a key holding a dot or a space names itself
// unambiguously.
func argName(parent, key string) string {
	if !plainKey.MatchString(key) {
		q, _ := json.Marshal(key)
		if parent == "" {
			return string(q)
		}
		return parent + "[" + string(q) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// cut is the argument with its value cut to room bytes on a character
// boundary, the rest counted.
func cut(name, value string, room int) Argument {
	if room <= 0 || len(value) <= room {
		return Argument{Name: name, Value: value}
	}
	end := room
	for end > 0 && !utf8.RuneStart(value[end]) {
		end--
	}
	return Argument{Name: name, Value: value[:end], Hidden: len(value) - end}
}
