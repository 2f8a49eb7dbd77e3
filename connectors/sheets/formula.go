package sheets

import (
	"regexp"
	"strings"
)

// A spreadsheet program opening a CSV file takes a cell that begins with
// = + - or @ for a formula and evaluates it (=HYPERLINK sends whatever the
// sheet holds to any address; older ones ran commands), and some take a
// leading tab or CR the same way: the cells OWASP's CSV injection advice
// names. A value a script writes comes from mail, feeds, web pages, so it
// is written as the Google side writes it (valueInputOption RAW): as text,
// by the apostrophe those programs read as "text follows". A number is a
// number, not a formula (-12.50, +33), and is written as it is.
//
// Reading gives back the value written: a cell keep escaped loses its
// apostrophe. So that this holds for a value beginning with apostrophes
// too ('=x), the rule counts them: a value whose text after any leading
// apostrophes would be escaped gets one more, and a cell read loses one.
// Cells keep does not write (a formula the person typed) stay as they are.
const formulaStarts = "=+-@\t\r"

var plainNumber = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// formulaLike reports whether s, its leading apostrophes aside, begins
// like a formula.
func formulaLike(s string) bool {
	core := strings.TrimLeft(s, "'")
	return core != "" && strings.IndexByte(formulaStarts, core[0]) >= 0 && !plainNumber.MatchString(core)
}

// escapeFormula is the text of a CSV cell holding the value v.
func escapeFormula(v string) string {
	if formulaLike(v) {
		return "'" + v
	}
	return v
}

// unescapeFormula is the value of a CSV cell holding the text c.
func unescapeFormula(c string) string {
	if strings.HasPrefix(c, "'") && formulaLike(c) {
		return c[1:]
	}
	return c
}

// in is the text of a cell holding a script's value v.
func (t *table) in(v string) string {
	if t.escapes {
		return escapeFormula(v)
	}
	return v
}

// out is the value a script reads from a cell holding the text c.
func (t *table) out(c string) string {
	if t.escapes {
		return unescapeFormula(c)
	}
	return c
}
