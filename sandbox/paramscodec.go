package sandbox

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A mutation's params cross the pipe as JSON: the worker has them as the
// values encoding/json decoded from the script's object (map[string]any of
// strings, float64s, bools, nil, []any and maps), and the host needs them
// so again. Both ends go through reflection in encoding/json for a few
// dozen bytes; these write and read that shape directly. The reader takes
// only the plain case (no escapes, no whitespace, shallow) and leaves all
// else to encoding/json, so what it returns is what encoding/json would.

// appendParams writes p as JSON; ok is false for a value not of the shape
// above, which the caller encodes with encoding/json.
func appendParams(b []byte, p map[string]any) ([]byte, bool) {
	return appendAny(b, p, 0)
}

func appendAny(b []byte, v any, depth int) ([]byte, bool) {
	if depth > paramsDepth {
		return b, false
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, v), true
	case string:
		return appendQuotedParam(b, v), true
	case float64:
		if v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308 {
			return b, false
		}
		return strconv.AppendFloat(b, v, 'g', -1, 64), true
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendAny(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendQuotedParam(b, k), ':')
			var ok bool
			if b, ok = appendAny(b, v[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendQuotedParam writes s as a JSON string; bytes that are not UTF-8
// become U+FFFD, as encoding/json makes them.
func appendQuotedParam(b []byte, s string) []byte {
	b = append(b, '"')
	for _, c := range s {
		b = appendEscaped(b, c)
	}
	return append(b, '"')
}

// paramsDepth is how deep the quick reader and writer go; deeper params
// are left to encoding/json.
const paramsDepth = 32

// decodeParams reads params as encoding/json would into a map[string]any.
func decodeParams(b []byte) (map[string]any, error) {
	if string(b) == "null" {
		return nil, nil
	}
	d := paramsReader{b: b}
	if v, ok := d.value(0); ok && d.i == len(b) {
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

type paramsReader struct {
	b []byte
	i int
}

func (d *paramsReader) value(depth int) (any, bool) {
	if d.i >= len(d.b) || depth > paramsDepth {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		m := map[string]any{}
		if d.i < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return m, true
		}
		for {
			k, ok := d.str()
			if !ok || d.i >= len(d.b) || d.b[d.i] != ':' {
				return nil, false
			}
			d.i++
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
			if more, ok := d.next('}'); !ok {
				return nil, false
			} else if !more {
				return m, true
			}
		}
	case c == '[':
		d.i++
		a := []any{}
		if d.i < len(d.b) && d.b[d.i] == ']' {
			d.i++
			return a, true
		}
		for {
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if more, ok := d.next(']'); !ok {
				return nil, false
			} else if !more {
				return a, true
			}
		}
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.word("true")
	case c == 'f':
		return false, d.word("false")
	case c == 'n':
		return nil, d.word("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

// next reads the ',' between members or elements, or the closing byte.
func (d *paramsReader) next(closing byte) (more, ok bool) {
	if d.i >= len(d.b) {
		return false, false
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

func (d *paramsReader) word(w string) bool {
	if len(d.b)-d.i < len(w) || string(d.b[d.i:d.i+len(w)]) != w {
		return false
	}
	d.i += len(w)
	return true
}

// str reads a string with no escapes, of UTF-8.
func (d *paramsReader) str() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			s := d.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			d.i = j + 1
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// number reads a JSON number (its grammar exactly) as a float64.
func (d *paramsReader) number() (any, bool) {
	b, start := d.b, d.i
	j := start
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(b[start:j]), 64)
	if err != nil {
		return nil, false
	}
	d.i = j
	return f, true
}
