package sandbox

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// Host JSON (a phase's state and prepared data, a mutation's result, what
// a read returns) becomes script values here rather than through the
// runtime's JSON.parse: goja's reads encoding/json's token stream, which
// allocated about twice what the values themselves take. The values are the
// ones goja's JSON.parse builds (plain objects, own properties in the
// order of first appearance, the last duplicate's value, "__proto__" an own
// property; numbers as encoding/json reads them; strings as it unquotes
// them). Text this parser does not take (malformed, nested past
// maxDecodeDepth, a number out of range, invalid UTF-8) goes to JSON.parse,
// which answers it as before.

// maxDecodeDepth bounds the recursion; deeper text goes to JSON.parse.
const maxDecodeDepth = 512

type jsonDecoder struct {
	vm    *goja.Runtime
	s     string
	i     int
	depth int
}

// decodeJSON is JSON.parse(s) without a reviver; ok is false when s is left
// to JSON.parse.
func decodeJSON(vm *goja.Runtime, s string) (v goja.Value, ok bool) {
	d := &jsonDecoder{vm: vm, s: s}
	v, ok = d.value()
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(s)
}

func (d *jsonDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value() (goja.Value, bool) {
	d.space()
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		return d.stringValue(s), true
	case c == 't':
		return d.literal("true", d.vm.ToValue(true))
	case c == 'f':
		return d.literal("false", d.vm.ToValue(false))
	case c == 'n':
		return d.literal("null", goja.Null())
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

// stringValue is s as JSON.parse makes it: an ASCII or a UTF-16 string
// (ToValue would make a longer or non-ASCII one a lazily converted string).
func (d *jsonDecoder) stringValue(s string) goja.Value {
	if len(s) <= 16 && isASCII(s) {
		return d.vm.ToValue(s)
	}
	var b goja.StringBuilder
	b.WriteUTF8String(s)
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (d *jsonDecoder) literal(word string, v goja.Value) (goja.Value, bool) {
	if !strings.HasPrefix(d.s[d.i:], word) {
		return nil, false
	}
	d.i += len(word)
	return v, true
}

// number reads the JSON number grammar, then converts it as encoding/json
// does (strconv.ParseFloat); out of range is left to JSON.parse, which
// throws.
func (d *jsonDecoder) number() (goja.Value, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case d.i < len(d.s) && d.s[d.i] >= '1' && d.s[d.i] <= '9':
		d.digits()
	default:
		return nil, false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if !d.digits() {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		return nil, false
	}
	return d.vm.ToValue(f), true
}

func (d *jsonDecoder) digits() bool {
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// str reads a string. Without escapes it is a slice of the text; escapes
// are unquoted as encoding/json does (a lone surrogate becomes U+FFFD).
func (d *jsonDecoder) str() (string, bool) {
	d.i++ // the quote
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			s := d.s[start:d.i]
			d.i++
			return s, utf8.ValidString(s)
		case c == '\\':
			return d.unquote(start)
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

func (d *jsonDecoder) unquote(start int) (string, bool) {
	var b strings.Builder
	b.WriteString(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			s := b.String()
			return s, utf8.ValidString(s)
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", false
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := d.hex4()
			if r < 0 {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				save := d.i
				if strings.HasPrefix(d.s[d.i:], `\u`) {
					d.i += 2
					if r2 := d.hex4(); r2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
							b.WriteRune(dec)
							continue
						}
					}
				}
				d.i = save
				r = unicode.ReplacementChar
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads four hex digits, -1 when they are not.
func (d *jsonDecoder) hex4() rune {
	if d.i+4 > len(d.s) {
		return -1
	}
	var r rune
	for _, c := range []byte(d.s[d.i : d.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	d.i += 4
	return r
}

func (d *jsonDecoder) nest() bool {
	d.depth++
	return d.depth <= maxDecodeDepth
}

func (d *jsonDecoder) object() (goja.Value, bool) {
	if !d.nest() {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.i++ // {
	o := d.vm.NewObject()
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return o, true
	}
	for {
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		// A data property, as JSON.parse creates: "__proto__" is an own
		// property, not the prototype.
		if o.DefineDataProperty(k, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE) != nil {
			return nil, false
		}
		more, ok := d.after('}')
		if !ok {
			return nil, false
		}
		if !more {
			return o, true
		}
	}
}

// after reads what follows a member or an element: a comma (more to come)
// or the closing bracket (none); anything else is malformed.
func (d *jsonDecoder) after(closing byte) (more, ok bool) {
	d.space()
	if d.i >= len(d.s) {
		return false, false
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

func (d *jsonDecoder) array() (goja.Value, bool) {
	if !d.nest() {
		return nil, false
	}
	defer func() { d.depth-- }()
	d.i++ // [
	var items []any
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return d.vm.NewArray(), true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		items = append(items, v)
		more, ok := d.after(']')
		if !ok {
			return nil, false
		}
		if !more {
			return d.vm.NewArray(items...), true
		}
	}
}
