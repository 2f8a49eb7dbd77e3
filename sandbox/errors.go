package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// errTooDeep is the cause of the Error of a worker whose stack overflowed:
// a recursion in Go (a parser's, a built-in's) that nesting drove too deep.
var errTooDeep = errors.New("nesting too deep")

// String renders the diagnostic the way `keep validate` prints it.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Message)
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Error renders e.g. `prepare of consumer "x": ctx.publish is not allowed in
// prepare (wf.js:12:5)`: the file as written, never the transformed source.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Phase == PhaseProducer:
		fmt.Fprintf(&b, "producer %q: ", e.Handler)
	case e.Phase != "":
		fmt.Fprintf(&b, "%s of consumer %q: ", e.Phase, e.Handler)
	}
	b.WriteString(e.Message)
	switch {
	case e.Line > 0 && e.File != "":
		fmt.Fprintf(&b, " (%s:%d:%d)", e.File, e.Line, e.Col)
	case e.Line > 0:
		fmt.Fprintf(&b, " (line %d:%d)", e.Line, e.Col)
	}
	return b.String()
}

// Unwrap reaches the cause of a cancellation or timeout (context.Canceled,
// context.DeadlineExceeded) when there is one.
func (e *Error) Unwrap() error { return e.cause }
