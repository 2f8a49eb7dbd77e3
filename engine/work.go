package engine

import "strconv"

// workKind is what kind of thing a workflow does next (scheduler.go).
type workKind int

const (
	workContinue  workKind = iota // carry an active run on from its phase
	workUnblock                   // lift a block whose back-off ran out
	workReconcile                 // ask the connector whether an uncertain call happened
	workResend                    // send again a call the service put off
	workConsumer                  // run a consumer with events pending
	workProducer                  // run a producer that is due
	workKinds                     // how many kinds there are
)

var workNames = [workKinds]string{"continue", "unblock", "reconcile", "resend", "consumer", "producer"}

func (k workKind) String() string {
	if k < 0 || k >= workKinds {
		return "work(" + strconv.Itoa(int(k)) + ")"
	}
	return workNames[k]
}
