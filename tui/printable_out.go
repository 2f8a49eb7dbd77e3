package tui

// What the command line prints through, so main imports tui rather than
// tui/printable (issue 14): the same functions, nothing added.

import (
	"io"

	"keep/tui/printable"
)

// PrintableWriter passes text on with control and format characters made
// visible (see package printable).
type PrintableWriter = printable.Writer

func NewPrintableWriter(w io.Writer) *PrintableWriter { return printable.NewWriter(w) }

// PrintableString is s with control and format characters made visible.
func PrintableString(s string) string { return printable.String(s) }

// PrintableLine is PrintableString on one line: a newline and a tab shown
// as \n and \t too.
func PrintableLine(s string) string { return printable.Line(s) }

// PrintableJSON is JSON b with control and format characters in its
// strings escaped.
func PrintableJSON(b []byte) []byte { return printable.JSON(b) }
