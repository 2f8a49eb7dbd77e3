package sandbox

import (
	"encoding/json"
	"unicode/utf8"
)

// What prepare returned is read from the JSON text this package's
// JSON.stringify made of it (compact, keys written plainly), and what is
// kept of it is written back by appending the parts: no map of its fields,
// no second encoding of its data. Anything the quick reading does not
// expect goes to encoding/json, as before.

// jsonMember is one field of a JSON object: its key and its value's text.
type jsonMember struct {
	key string
	val json.RawMessage
}

// objectMembers splits a compact JSON object into its members, in order;
// ok is false for anything else (whitespace, an escaped key, a fault),
// which the caller then reads with encoding/json.
func objectMembers(b []byte) (ms []jsonMember, ok bool) {
	if len(b) < 2 || b[0] != '{' {
		return nil, false
	}
	i := 1
	if b[i] == '}' {
		return nil, i+1 == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' && b[end] != '\\' {
			end++
		}
		if end+1 >= len(b) || b[end] != '"' || b[end+1] != ':' {
			return nil, false
		}
		key := string(b[i+1 : end])
		start := end + 2
		stop, ok := skipValue(b, start)
		if !ok || stop == start {
			return nil, false
		}
		ms = append(ms, jsonMember{key, b[start:stop:stop]})
		switch {
		case stop < len(b) && b[stop] == ',':
			i = stop + 1
		case stop == len(b)-1 && b[stop] == '}':
			return ms, true
		default:
			return nil, false
		}
	}
}

// skipValue is where the JSON value at b[i] ends: at the ',' or '}' after
// it, at depth 0. It checks only nesting and strings; the text came from
// JSON.stringify.
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return 0, false
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, b[i] == '}'
			}
			depth--
			i++
		case ',':
			if depth == 0 {
				return i, true
			}
			i++
		case ' ', '\t', '\n', '\r':
			return 0, false
		default:
			i++
		}
	}
	return 0, false
}

// lookup is the value of key in ms, nil if absent; the last one wins, as
// it does for encoding/json.
func lookup(ms []jsonMember, key string) json.RawMessage {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return ms[i].val
		}
	}
	return nil
}

// preparedJSON is the kept prepare result: {reservations, data, ui?, wakeAt?}.
func preparedJSON(res []Reservation, data, ui json.RawMessage, wakeAt string) json.RawMessage {
	b := make([]byte, 0, 64+len(data)+len(ui)+len(wakeAt))
	b = append(b, `{"reservations":[`...)
	for i, r := range res {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(append(b, `{"topic":`...), r.Topic)
		b = append(b, `,"ids":[`...)
		for j, id := range r.IDs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendQuoted(b, id)
		}
		b = append(b, "]}"...)
	}
	b = append(append(b, `],"data":`...), data...)
	if len(ui) > 0 {
		b = append(append(b, `,"ui":`...), ui...)
	}
	if wakeAt != "" {
		b = appendQuoted(append(b, `,"wakeAt":`...), wakeAt)
	}
	return append(b, '}')
}

// appendQuoted writes s as a JSON string (bytes that are not UTF-8 as
// U+FFFD, as encoding/json writes them).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for _, c := range s {
		if c == utf8.RuneError {
			b = append(b, `\ufffd`...)
			continue
		}
		b = appendEscaped(b, c)
	}
	return append(b, '"')
}
