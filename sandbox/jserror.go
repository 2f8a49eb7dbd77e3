package sandbox

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// stackPos finds the first "file:line:col(pc)" of a goja stack string.
var stackPos = regexp.MustCompile(`:(\d+):(\d+)\(\d+\)`)

// exceptionInfo describes a goja error for a diagnostic: position from the
// first frame that has one (source-mapped to the file as written).
func exceptionInfo(err error) (line, col int, msg string) {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		line, col = framePos(ex.Stack())
		return line, col, safeString(ex.Value())
	}
	return 0, 0, err.Error()
}

func framePos(frames []goja.StackFrame) (line, col int) {
	for _, f := range frames {
		if p := f.Position(); p.Line > 0 {
			return p.Line, p.Column
		}
	}
	return 0, 0
}

// safeString stringifies a thrown value. Converting an object may run its
// toString; callers do this while the run's limits still hold, and a panic
// (an interrupt, a throwing toString) yields a placeholder.
func safeString(v goja.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = "(a value that cannot be shown)"
		}
	}()
	if v == nil {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		name, msg := o.Get("name"), o.Get("message")
		if !isAbsent(name) && !isAbsent(msg) {
			if m := msg.String(); m != "" {
				return name.String() + ": " + m
			}
			return name.String()
		}
	}
	return v.String()
}

// thrown turns a value the script threw (or rejected with) into a logic
// error with its position.
func thrown(v goja.Value, frames []goja.StackFrame) *Error {
	e := &Error{Kind: ErrLogic, Message: capText(safeString(v))}
	if o, ok := v.(*goja.Object); ok && o.ClassName() != "Error" {
		e.Message = "uncaught exception: " + e.Message
	} else if !ok {
		e.Message = "uncaught exception: " + e.Message
	}
	e.Line, e.Col = framePos(frames)
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		func() {
			defer func() { _ = recover() }()
			if st := o.Get("stack"); !isAbsent(st) {
				e.Stack = capText(st.String())
			}
		}()
		if e.Line == 0 {
			if m := stackPos.FindStringSubmatch(e.Stack); m != nil {
				e.Line, _ = strconv.Atoi(m[1])
				e.Col, _ = strconv.Atoi(m[2])
			}
		}
	}
	return e
}

// jsError classifies an error goja returned from running script code.
func (r *run) jsError(err error) error {
	if f := r.sup.failure(); f != nil {
		return stoppedAt(f, err)
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		line, col := framePos(so.Stack())
		return &Error{Kind: ErrResource, Message: fmt.Sprintf("the call stack grew past %d frames", r.lim.MaxStackDepth), Line: line, Col: col}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		e := thrown(ex.Value(), ex.Stack())
		if e.Stack == "" {
			e.Stack = capText(ex.String())
		}
		return e
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Errorf("sandbox: runtime interrupted without a recorded cause: %w", err)
	}
	return fmt.Errorf("sandbox: %w", err)
}

// scriptCall runs f, host code that reads values a script made. Reading one
// (Get, Keys, Export, String) runs whatever the script hung on it: a getter,
// a proxy trap, a toString. Called from Go with no script frame below, what
// that code throws, and the interrupt or stack overflow that stops it,
// arrive as Go panics; scriptCall returns them as errors (a *goja.Exception,
// *goja.InterruptedError or *goja.StackOverflowError, as RunProgram would),
// so a script that throws from a getter fails as a script, not as keep.
// Any other panic is a bug of ours and goes on.
func scriptCall(vm *goja.Runtime, f func()) (err error) {
	defer func() {
		if x := recover(); x != nil {
			switch e := x.(type) {
			case *goja.InterruptedError:
				err = e
			case *goja.StackOverflowError:
				err = e
			default:
				panic(x)
			}
		}
	}()
	if ex := vm.Try(f); ex != nil {
		return ex
	}
	return nil
}

// maxErrorText caps the message and the stack of an error a script threw:
// both are stored with the run and shown, and a script may throw a 60 MB
// string.
const maxErrorText = 4 << 10

// capText cuts s to maxErrorText bytes, on a character boundary, noting
// the cut.
func capText(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes cut)", len(s)-cut)
}

// stoppedAt gives a built-in call refused for its size the position of
// the call, where the interrupt stopped the script. Not a timeout or the
// heap sampler's stop: the instruction an interrupt lands on in a loop maps
// to an unrelated place of the file.
func stoppedAt(f, err error) error {
	var e *Error
	var ie *goja.InterruptedError
	if errors.As(f, &e) && e.Line == 0 && e.Kind == ErrResource && e.Op != "" && errors.As(err, &ie) {
		e.Line, e.Col = framePos(ie.Stack())
	}
	return f
}
