package sandbox

import "context"

// RunThen runs prep, a prepare phase, and, when its result reserves
// something, mut, the mutate phase, right after it in the same worker, with
// that result as mut.Prepared (whatever mut.Prepared holds is replaced).
// A run's mutate then costs no conversation of its own: no frame to wake a
// worker, no job for the host to set up and wait on. Mutate reads nothing and
// its one mutation call is only captured, so running it before the host
// has looked at prepare's result shows nobody anything; the host may
// still drop it.
//
// prepared gets prepare's outcome, or its error, once, as soon as the
// worker has it, and then, which says whether mutate runs now: the host
// goes on with prepare's outcome while it does. RunThen then returns
// mutate's outcome and error with ran true, or ran false when mutate did
// not run (prepare failed, or reserved nothing).
func (s *Script) RunThen(ctx context.Context, prep, mut Invocation, prepared func(out *Outcome, err error, then bool)) (out *Outcome, ran bool, err error) {
	if prep.Phase != PhasePrepare || mut.Phase != PhaseMutate || prep.Handler != mut.Handler {
		out, err := s.Run(ctx, prep)
		prepared(out, err, false)
		return nil, false, nil
	}
	if s.program == nil {
		return s.runRemote(ctx, prep, &mut, prepared)
	}
	pout, err := s.runHere(ctx, prep)
	then := err == nil && reserves(pout.Prepare)
	prepared(pout, err, then)
	if !then {
		return nil, false, nil
	}
	mut.Prepared = pout.Prepare.Raw
	out, err = s.runHere(ctx, mut)
	return out, true, err
}

// reserves says whether a prepare's result reserves any event: only then
// does the engine run mutate.
func reserves(p *PrepareResult) bool {
	if p == nil {
		return false
	}
	for _, r := range p.Reservations {
		if len(r.IDs) > 0 {
			return true
		}
	}
	return false
}
