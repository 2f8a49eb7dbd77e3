package connectors

import (
	"context"
)

// A connector reads what a service sends, often through a library (a
// calendar's iCalendar parser, a feed's XML reader), and a server can send
// what makes one panic. The engine calls connectors on its own goroutines,
// where a panic ends the daemon, and after a restart the same call (a
// mutation's check) panics again. So every call the host makes goes
// through these, and a panic is the call's failure, said as one.

// Do is c.Do, a panic in it made the call's error: for a mutation it is
// uncertain (it may have reached the service before the panic), for a
// read internal.
func Do(ctx context.Context, c Connector, call Call, mutation bool) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			class := Internal
			if mutation {
				class = Uncertain
			}
			res, err = nil, Errorf(class, "%s.%s: the connector failed on what it was handling (%v)", c.Name(), call.Method, p)
		}
	}()
	return c.Do(ctx, call)
}

// Reconcile is r.Reconcile, a panic in it made an unknown outcome with the
// error, which leaves the question to the person.
func Reconcile(ctx context.Context, r Reconciler, name string, call Call) (v Verdict, res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, res, err = Unknown, nil, Errorf(Internal, "%s.%s: checking the call failed (%v)", name, call.Method, p)
		}
	}()
	return r.Reconcile(ctx, call)
}
