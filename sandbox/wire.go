package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The worker protocol, on one screen. The host and a worker process speak
// in frames: a 4-byte big-endian length, then the frame's op and its
// fields, binary (framecodec.go). A job is a conversation the host starts and the worker
// ends; one worker has one conversation at a time.
//
//	host → worker  load      compile a script and say what it declares
//	host → worker  run       run one phase (and the mutate it may go on to)
//	worker → host  started   compiled what came with the job: its time starts
//	worker → host  call      run a host call (hostCallName), wait for a reply
//	host → worker  reply     the call's result or error
//	worker → host  log       one console line; nothing answers it
//	worker → host  prepared  the prepare ended, its mutate runs next (Then)
//	worker → host  done      the job's outcome, error or declaration: the end
//
// The host may also ask a run to stop with a signal (cancelSignal), which
// reaches a run that is busy and not reading its pipe.

// op is what a frame is: the constants below are the whole protocol.
type op string

const (
	opLoad     op = "load"     // host → worker: compile Script, answer done with Loaded
	opRun      op = "run"      // host → worker: run Inv on the script Key (Script if sent)
	opStarted  op = "started"  // worker → host: the compile is over, the phase's bound starts
	opCall     op = "call"     // worker → host: host call Name with Args (and Told first)
	opReply    op = "reply"    // host → worker: Result, or Err, of the call in hand
	opLog      op = "log"      // worker → host: Args is a logArgs; one way
	opPrepared op = "prepared" // worker → host: the prepare's Outcome; its Then runs now
	opDone     op = "done"     // worker → host: Outcome, Loaded or Err (Retire, Missing)
)

// Why a run stopped, when a context ended it: wireErr.Cause.
const (
	causeCanceled = "canceled" // the run's context was cancelled
	causeDeadline = "deadline" // the run's deadline passed
)

// maxFrame bounds one frame: a connector result (MaxResult, 10 MiB by
// default) plus room for its envelope. A bigger length means a broken pipe.
const maxFrame = 64 << 20

type frame struct {
	Op op `json:"op"`

	// load, run
	Key    string    `json:"key,omitempty"`
	Script *wireLoad `json:"script,omitempty"` // the source, when the worker may not have it
	Inv    *wireInv  `json:"inv,omitempty"`

	// call, reply
	Name   hostCallName    `json:"name,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	// Deadline of a call: the worker's phase deadline (Unix ns), which the
	// host's side of the call keeps too, so both see the same timeout.
	Deadline int64 `json:"deadline,omitempty"`
	// Told (call, done): registrations and publishes the host takes
	// before the call, or before the phase ends, in order (proxy.go)
	Told []toldCall `json:"told,omitempty"`

	// done
	Outcome *wireOutcome `json:"outcome,omitempty"`
	Loaded  *wireScript  `json:"loaded,omitempty"`

	Err *wireErr `json:"err,omitempty"` // reply, done
	// Retire (done): the worker gave up on a run still running in it and
	// exits; the host does not reuse it
	Retire bool `json:"retire,omitempty"`
	// Missing (done): the worker no longer has the script (its cache is
	// bounded); the host sends it again
	Missing bool `json:"missing,omitempty"`
}

// wireLoad is what Load was given: all of it, so that a worker validates
// exactly as this process would.
type wireLoad struct {
	File   string      `json:"file"`
	Source []byte      `json:"source"`
	Opts   LoadOptions `json:"opts"`
}

// wireScript is what Load found, for the host's copy of a Script.
type wireScript struct {
	Workflow     Workflow            `json:"workflow"`
	Capabilities []string            `json:"capabilities,omitempty"`
	Manifest     *Manifest           `json:"manifest,omitempty"`
	Handlers     map[string]wireDecl `json:"handlers"`
}

type wireDecl struct {
	Consumer  bool              `json:"consumer,omitempty"`
	Publishes []string          `json:"publishes,omitempty"`
	Subscribe []string          `json:"subscribe,omitempty"`
	At        map[string][2]int `json:"at,omitempty"`
}

// wireInv is an Invocation without its Host. Nil raw values are omitted, so
// "undefined" (nil) and "null" stay apart.
type wireInv struct {
	Handler        string          `json:"handler"`
	Phase          Phase           `json:"phase"`
	State          json.RawMessage `json:"state,omitempty"`
	Prepared       json.RawMessage `json:"prepared,omitempty"`
	MutationResult json.RawMessage `json:"mutationResult,omitempty"`
	Limits         Limits          `json:"limits"`
	// Prefetched: what the prepare phase's peeks may be answered from
	// (prefetch.go); a topic missing is asked of the host.
	Prefetched map[string][]Event `json:"prefetched,omitempty"`
	// Then, with a prepare: the mutate phase the worker runs next in the
	// same job when prepare reserved something (Script.RunThen), with
	// prepare's result as its Prepared. The worker says "prepared" with
	// prepare's outcome when it moves on to it.
	Then *wireInv `json:"then,omitempty"`
}

type wireOutcome struct {
	State         json.RawMessage `json:"state,omitempty"`
	StateReturned bool            `json:"stateReturned,omitempty"`
	Prepare       *wirePrepare    `json:"prepare,omitempty"`
	Mutation      *MutationCall   `json:"mutation,omitempty"`
}

type wirePrepare struct {
	Reservations []Reservation   `json:"reservations,omitempty"`
	UITitle      string          `json:"uiTitle,omitempty"`
	WakeAt       string          `json:"wakeAt,omitempty"`
	Raw          json.RawMessage `json:"raw,omitempty"`
}

// wireErr is an error of a run or of a host call. Host is the 1-based index
// of the host error the worker's error wraps: the host keeps the error
// values, so errors.As reaches the engine's own error types unchanged.
type wireErr struct {
	Text       string       `json:"text"` // Error() of the whole error
	Host       int          `json:"host,omitempty"`
	Script     *Error       `json:"script,omitempty"`
	Cause      string       `json:"cause,omitempty"` // causeCanceled, causeDeadline
	Validation []Diagnostic `json:"validation,omitempty"`
}

// writeFrame writes f and flushes it: its length and body are built in the
// writer's own buffer when they fit, and go out in one write.
func writeFrame(w *bufio.Writer, f *frame) error {
	b := w.AvailableBuffer()
	b = append(b, 0, 0, 0, 0)
	b, err := appendFrame(b, f)
	if err != nil {
		return err
	}
	if len(b)-4 > maxFrame {
		return fmt.Errorf("sandbox: a %s frame of %d bytes, over %d", f.Op, len(b)-4, maxFrame)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Flush()
}

// readFrame reads a frame from a worker: its body is checked as input
// (framecodec.go). A fault of the pipe is its error; a frame that is not
// one is a *malformedFrame.
func readFrame(r *bufio.Reader) (*frame, error) { return readFrameOf(r, true) }

// readHostFrame reads a frame from the host, in a worker.
func readHostFrame(r *bufio.Reader) (*frame, error) { return readFrameOf(r, false) }

// malformedFrame is a frame that arrived whole but cannot be read.
type malformedFrame struct{ err error }

func (e *malformedFrame) Error() string { return e.err.Error() }
func (e *malformedFrame) Unwrap() error { return e.err }

func readFrameOf(r *bufio.Reader, checked bool) (*frame, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return nil, &malformedFrame{fmt.Errorf("sandbox: a frame of %d bytes, over %d: the pipe is out of step", size, maxFrame)}
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	f, err := decodeFrame(b, checked)
	if err != nil {
		return nil, &malformedFrame{err}
	}
	return f, nil
}

func toWireOutcome(o *Outcome) *wireOutcome {
	w := &wireOutcome{State: o.State, StateReturned: o.StateReturned, Mutation: o.Mutation}
	if p := o.Prepare; p != nil {
		w.Prepare = &wirePrepare{Reservations: p.Reservations, UITitle: p.UITitle, WakeAt: p.WakeAt, Raw: p.Raw}
	}
	return w
}

func (w *wireOutcome) outcome() *Outcome {
	o := &Outcome{State: w.State, StateReturned: w.StateReturned, Mutation: w.Mutation}
	if p := w.Prepare; p != nil {
		o.Prepare = &PrepareResult{Reservations: p.Reservations, UITitle: p.UITitle, WakeAt: p.WakeAt, Raw: p.Raw}
	}
	return o
}

// hostCallError is, in a worker, the error a host call returned in the host
// process: its text, and its index among the run's host errors there.
type hostCallError struct {
	index int
	text  string
}

func (e *hostCallError) Error() string { return e.text }

// toWireErr is err as sent by the worker.
func toWireErr(err error) *wireErr {
	w := &wireErr{Text: err.Error()}
	var v *ValidationError
	var h *hostCallError
	if e, ok := err.(*Error); ok {
		c := *e
		c.cause = nil
		w.Script = &c
		if errors.As(e.cause, &h) {
			w.Host = h.index
		}
	} else if errors.As(err, &v) {
		w.Validation = v.Diagnostics
	} else if errors.As(err, &h) {
		w.Host = h.index
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		w.Cause = causeDeadline
	case errors.Is(err, context.Canceled):
		w.Cause = causeCanceled
	}
	return w
}

// hostWrapped is a worker's error that wraps a host error: the worker's text,
// the host's error value.
type hostWrapped struct {
	text string
	err  error
}

func (e *hostWrapped) Error() string { return e.text }
func (e *hostWrapped) Unwrap() error { return e.err }

// error is w back as an error in the host; hostErrs are the run's host
// errors, by index.
func (w *wireErr) error(hostErrs []error) error {
	var cause error
	switch w.Cause {
	case causeDeadline:
		cause = context.DeadlineExceeded
	case causeCanceled:
		cause = context.Canceled
	}
	switch {
	case w.Script != nil:
		e := *w.Script
		e.cause = cause
		if w.Host > 0 && w.Host <= len(hostErrs) {
			e.cause = hostErrs[w.Host-1]
		}
		return &e
	case w.Validation != nil:
		return &ValidationError{Diagnostics: w.Validation}
	case w.Host > 0 && w.Host <= len(hostErrs):
		return &hostWrapped{text: w.Text, err: hostErrs[w.Host-1]}
	case cause != nil:
		return &hostWrapped{text: w.Text, err: cause}
	}
	return errors.New(w.Text)
}
