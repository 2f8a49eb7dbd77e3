// Package ledger is the one writer of keep's statuses (DESIGN.md §7.0): the
// machines of mutations, runs, workflows and their blocks, the rules that
// turn a call's outcome into moves, and the only calls of storage's status
// writers (storage.StatusWriters; a test holds every other package to it).
// The runs a move acts on are found here too, in the move's transaction
// (Carrier, SkipInput): the engine passes what was answered, never a run.
//
// A move is checked against its table and written compare-and-set in the
// caller's transaction. What the engine must do about it — tell the front
// ends once the transaction commits, journal an event in it, remember a
// workflow's status — comes back as a Decision for the engine to act on:
// the ledger never calls into the engine or its scheduler (it cannot: the
// engine imports it).
package ledger

import (
	"errors"
	"time"

	"keep/storage"
)

// ErrRefused: the move is not in its machine's table (or the user's answer
// does not apply to what it answers).
var ErrRefused = errors.New("refused")

// The front ends' notification kinds (the engine re-exports them).
const (
	NoteChanged         = "changed"            // something a pane shows changed
	NoteApproval        = "approval.requested" // a toast-worthy prompt appeared
	NoteNeedsReconcile  = "mutation.needs_reconcile"
	NoteIndeterminate   = "mutation.indeterminate"
	NoteNeedsAttention  = "workflow.needs_attention"
	NoteWorkflowPaused  = "workflow.paused"
	NoteWorkflowResumed = "workflow.resumed"
	NoteRunFailed       = "run.failed"
	NoteRunCommitted    = "run.committed"
)

// Who moves a run, besides the user's answers ("user:approve", ...).
const (
	ByScheduler = "scheduler" // the engine running the handler
	ByRecovery  = "recovery"  // start-up after a crash
)

// Ledger performs moves. Its zero value is not usable: see New.
type Ledger struct {
	now       func() time.Time
	keyPrefix string
}

// Opts configures a Ledger.
type Opts struct {
	// Now is the clock moves are stamped with (required).
	Now func() time.Time
	// KeyPrefix starts every new mutation's idempotency key (the install's
	// id: "keep-<id>"; required).
	KeyPrefix string
}

// New returns a Ledger; a missing clock or key prefix is a programmer error.
func New(o Opts) *Ledger {
	if o.Now == nil || o.KeyPrefix == "" {
		panic("ledger.New: Now and KeyPrefix are required")
	}
	return &Ledger{now: o.Now, keyPrefix: o.KeyPrefix}
}

// Note is what the front ends are told of a move, once it commits.
type Note struct {
	Kind, Workflow, Text string
}

// Entry is an event to journal on the bus inside the move's transaction.
type Entry struct {
	Topic   string
	Payload map[string]any
}

// Decision is what the engine does about a move: announce Notes once the
// transaction commits (never a move rolled back), journal Entries in it,
// remember Status as the workflow's status once committed (when set),
// schedule or cancel a prompt's reminder, and, once committed, ask for a
// repair or mark the consumers.
type Decision struct {
	Notes    []Note
	Journal  []Entry
	Status   storage.WorkflowStatus
	StatusOf int64 // the workflow Status belongs to
	// Repair: once committed, the repairer is asked for a fix of this
	// run's logic failure (nil: none).
	Repair *storage.Run
	// MarkConsumers: once committed, every consumer of the workflow is
	// marked to run (a run ended, its events back in the queue).
	MarkConsumers bool
	// Remind: the mutation now waits on the person; its prompt's reminder
	// is to be scheduled in the same transaction.
	Remind *storage.Mutation
	// CancelReminders: the deferred reminders (their ids) of prompts that
	// were answered, to be cancelled in the same transaction.
	CancelReminders []int64
}

// add appends o's notes and entries to d's, in the order they were made.
func (d *Decision) add(o Decision) {
	d.Notes = append(d.Notes, o.Notes...)
	d.Journal = append(d.Journal, o.Journal...)
	if o.Status != "" {
		d.Status, d.StatusOf = o.Status, o.StatusOf
	}
	if o.Repair != nil {
		d.Repair = o.Repair
	}
	d.MarkConsumers = d.MarkConsumers || o.MarkConsumers
	if o.Remind != nil {
		d.Remind = o.Remind
	}
	d.CancelReminders = append(d.CancelReminders, o.CancelReminders...)
}

// cancel asks for a prompt's reminder (its id; 0: none) to be cancelled.
func (d *Decision) cancel(id int64) {
	if id != 0 {
		d.CancelReminders = append(d.CancelReminders, id)
	}
}

func (d *Decision) note(kind, workflow, text string) {
	d.Notes = append(d.Notes, Note{kind, workflow, text})
}

func (d *Decision) journal(topic string, payload map[string]any) {
	d.Journal = append(d.Journal, Entry{topic, payload})
}
