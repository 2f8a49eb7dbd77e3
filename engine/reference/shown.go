package reference

import (
	"fmt"
	"strings"
	"unicode"
)

// shown is s with what could make it read as other than it is escaped:
// control characters (newline and tab kept), the line and paragraph
// separators, and every invisible character by Unicode property (format
// characters, default-ignorable code points: bidi overrides, zero-width
// characters, Hangul fillers, the grapheme joiner, variation selectors).
// It is the rule tui/printable applies to everything keep prints
// (tui/printable's tests hold the two equal), kept here because the engine
// knows nothing of the TUI.
func shown(s string) string {
	if !strings.ContainsFunc(s, Escaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !Escaped(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// Escaped says whether the reference shows r escaped.
func Escaped(r rune) bool {
	if r < 0x80 {
		return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f
	}
	return r <= 0x9f || r == '\u2028' || r == '\u2029' ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// EscapeShown is s with every rune Escaped names written as \uXXXX: what
// a model's text (a proposal, a draft's header) could use to look other
// than it is on a terminal is shown, never obeyed.
func EscapeShown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if Escaped(r) {
			fmt.Fprintf(&b, "\\u%04X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
