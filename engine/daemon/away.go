package daemon

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// AwayError says the daemon a client acts through is not there: it was
// stopped or killed, or is starting again. Front ends tell the person so in
// their own words (the TUI says how to start it and that it reconnects);
// Err, the transport's own cause, stays for the log.
type AwayError struct {
	Socket string // the daemon's socket, next to the database
	Err    error
}

func (e *AwayError) Error() string {
	return fmt.Sprintf("keep's engine is not running: nothing answers on %s (%v)", e.Socket, e.Err)
}

func (e *AwayError) Unwrap() error { return e.Err }

// EngineAway names the socket nobody answers on. Front ends recognise an
// AwayError by this method, so they need not import the transport.
func (e *AwayError) EngineAway() string { return e.Socket }

// away wraps err in an AwayError when it says the daemon is not there:
// nothing listens on the socket (refused, or the file gone), or the
// connection was cut under a call by a daemon ending. Anything else (the
// caller's context, a timeout) is left as it is.
func away(socket string, err error) error {
	var op *net.OpError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &op) && op.Op == "dial",
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &AwayError{Socket: socket, Err: err}
	}
	return err
}
