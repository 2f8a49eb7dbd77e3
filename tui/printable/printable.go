// Package printable keeps text a script controls from driving the
// terminal or disguising itself. Titles, log lines, errors, parameters and
// payloads come from workflow scripts and the services they read; written
// raw, an ESC or a C1 control character in them could clear the screen, set
// the window title, write the clipboard (OSC 52) or move the cursor over
// what keep printed, and an invisible format character (a bidi override
// such as U+202E, an isolate, a zero-width space, a BOM, a tag character)
// could make an approval read as something other than what it does.
// Every human-readable output path of keep passes its text through here:
// those characters are shown escaped (`\x1b`, `\u009b`, `\u202e`), never sent.
package printable

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns s with every C0 control character except newline and tab,
// DEL, every C1 control character, every invisible character (Unicode
// category Cf: bidi embeddings, overrides and isolates, zero-width
// characters, BOM, tags; and every default-ignorable code point: Hangul
// fillers, the grapheme joiner, variation selectors), the line and paragraph separators and every byte
// that is not UTF-8 shown escaped: ESC becomes the four characters \x1b,
// U+202E the six characters \u202e, U+E0041 \U000e0041.
func String(s string) string {
	if clean(s) {
		return s
	}
	return string(appendEscaped(nil, []byte(s)))
}

// Line is String for text shown on one line (a table cell, the target of
// a call, a grant's scope): a newline and a tab are shown escaped too, as
// \n and \t, so text a script controls (a file name may hold a newline)
// cannot start a line of its own where a reader expects one of keep's.
func Line(s string) string {
	s = String(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
	}
	return s
}

func clean[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			// DEL, or a byte of a multi-byte rune that may be C1 or invalid
			if c >= 0x80 {
				return cleanRunes(string(s[i:]))
			}
			return false
		}
	}
	return true
}

func cleanRunes(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			return false
		}
	}
	return true
}

// unsafeRune is the one definition of what is never written raw. Format
// characters are invisible yet reorder or hide what is around them, and
// U+2028/2029 break a line where nothing shows that one was broken.
func unsafeRune(r rune) bool {
	if r < 0x80 {
		return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f
	}
	return r <= 0x9f || r == '\u2028' || r == '\u2029' || Invisible(r)
}

// Invisible is Unicode's own class of what renders as nothing: every
// format character (Cf) and every default-ignorable code point (the
// Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the combining grapheme
// joiner U+034F, the variation selectors U+FE00–FE0F and U+E0100–E01EF,
// and the code points Unicode reserves as ignorable). By property, not by
// list: a filler that reads as a blank cannot hide a word of an approval.
func Invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

func appendEscaped(dst, b []byte) []byte {
	return appendMapped(dst, b, func(dst []byte, r rune, bad byte) []byte {
		switch {
		case r == utf8.RuneError:
			return fmt.Appendf(dst, `\x%02x`, bad)
		case r < 0x80:
			return fmt.Appendf(dst, `\x%02x`, r)
		case r > 0xffff:
			return fmt.Appendf(dst, `\U%08x`, r)
		}
		return fmt.Appendf(dst, `\u%04x`, r)
	})
}

// appendMapped appends b to dst with every byte that is not UTF-8 (r is
// RuneError, bad the byte) and every control rune replaced by esc's text.
func appendMapped(dst, b []byte, esc func(dst []byte, r rune, bad byte) []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1:
			dst = esc(dst, utf8.RuneError, b[0])
		case unsafeRune(r):
			dst = esc(dst, r, 0)
		default:
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}

// JSON makes encoded JSON safe to print and keeps it valid: encoding/json
// escapes C0 controls but passes DEL and C1 controls through, which may
// only occur inside strings, where \u escapes mean the same.
func JSON(b []byte) []byte {
	if clean(b) {
		return b
	}
	return appendMapped(make([]byte, 0, len(b)+16), b, func(dst []byte, r rune, _ byte) []byte {
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			return fmt.Appendf(dst, `\u%04x\u%04x`, hi, lo)
		}
		return fmt.Appendf(dst, `\u%04x`, r)
	})
}

// Writer escapes everything written through it (see String); a rune split
// across two writes is held back until it is whole. Flush writes what is
// held back at the end.
type Writer struct {
	w     io.Writer
	carry []byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (w *Writer) Write(p []byte) (int, error) {
	buf := p
	if len(w.carry) > 0 {
		buf = append(w.carry, p...)
		w.carry = nil
	}
	end := len(buf)
	// an incomplete rune at the very end waits for the next write
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				end = i
			}
			break
		}
	}
	w.carry = append([]byte(nil), buf[end:]...)
	out := buf[:end]
	if !clean(out) {
		out = appendEscaped(nil, out)
	}
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes, escaped, a rune left incomplete by the last write.
func (w *Writer) Flush() error {
	if len(w.carry) == 0 {
		return nil
	}
	out := appendEscaped(nil, w.carry)
	w.carry = nil
	_, err := w.w.Write(out)
	return err
}

var rawJSON = reflect.TypeFor[json.RawMessage]()

// Deep escapes, in place, every string reachable from ptr (a pointer)
// through exported struct fields, slices, arrays, maps and pointers. Views the engine hands a front end
// are walked whole, so a field added later is covered without a change here.
// A json.RawMessage stays JSON (see JSON): a screen shows it as JSON text,
// so a control character in it reads \u001b, as on the command line.
func Deep(ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer {
		panic("printable.Deep: not a pointer")
	}
	deep(v.Elem())
}

// deep escapes what v reaches and says whether it changed anything. It
// writes only where something needed escaping: a view may share what it
// reaches with other readers (a map, a raw argument), and a write of the
// same value back is still a write beside their reads.
func deep(v reflect.Value) (changed bool) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); v.CanSet() && !clean(s) {
			v.SetString(String(s))
			return true
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		e := v.Elem()
		if v.Kind() == reflect.Pointer {
			return deep(e)
		}
		// what an interface holds is not addressable: copy, fix, put back
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		if deep(c) && v.CanSet() {
			v.Set(c)
			return true
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && deep(v.Field(i)) {
				changed = true
			}
		}
	case reflect.Slice:
		if v.Type() == rawJSON {
			if v.CanSet() && !v.IsNil() && !clean(v.Bytes()) {
				v.SetBytes(JSON(v.Bytes()))
				return true
			}
			return false
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false // bytes, not text
		}
		for i := 0; i < v.Len(); i++ {
			if deep(v.Index(i)) {
				changed = true
			}
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if deep(v.Index(i)) {
				changed = true
			}
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return false
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			kc, ec := deep(k), deep(e) // both, whichever changed
			if kc || ec {
				changed = true
			}
			out.SetMapIndex(k, e)
		}
		if changed {
			v.Set(out)
		}
	}
	return changed
}
