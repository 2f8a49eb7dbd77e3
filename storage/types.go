package storage

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Times are stored as Unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func rawOrNil(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func raw(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

type Workflow struct {
	ID                int64
	Name              string
	Status            WorkflowStatus
	BlockKind         BlockKind
	BlockReason       string
	BlockRunID        int64
	Version           int
	TransientFailures int
	RetryAt           *time.Time
	Repairs           int
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// BlockSeq numbers the workflow's blocks, the standing one's while
	// BlockKind is set (the last one's after a lift): the block a retry or
	// resume names (WORKFLOW@N) is this one, or it was answered already.
	BlockSeq int64
	// BlockedAt is when the standing block was set; nil while unblocked.
	BlockedAt *time.Time
}

type ScriptVersion struct {
	WorkflowID  int64
	Version     int
	Label       string
	Origin      string // deploy, repair
	FileName    string
	Source      string
	Declaration json.RawMessage
	// Manifest is what the version may do (sandbox.Manifest as JSON);
	// empty for a version stored before manifests were.
	Manifest  json.RawMessage
	CreatedAt time.Time
}

type Run struct {
	ID            int64
	WorkflowID    int64
	Handler       string
	HandlerType   string // producer, consumer
	ScriptVersion int
	RetryOf       int64
	MutationID    int64
	Trigger       string
	Phase         Phase
	Status        RunStatus
	MovedBy       string // who made the last move: "scheduler", "recovery", "user:approve", ...
	// Was is the status and phase the row had when it was read or last
	// written: UpdateRun writes only while the row is still there.
	Was RunState
	// Via is a state the run reached in memory after Was without its row
	// being written (ledger.RecordOutcomeUnwritten): the next UpdateRun
	// writes both moves in one statement. Zero when none.
	Via RunState
	// was: the indexed columns as read or last written (UpdateRun)
	was struct {
		mutationID int64
		closedAt   any // msPtr: nil or milliseconds
	}
	PrepareResult  json.RawMessage
	MutationResult json.RawMessage
	Error          string
	ClosedAt       *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

type Input struct {
	ID         int64
	WorkflowID int64
	Source     string
	Type       string
	ExternalID string
	Title      string
	CreatedBy  int64
	CreatedAt  time.Time
	SkippedAt  *time.Time
}

type Event struct {
	ID         int64
	WorkflowID int64
	Topic      string
	MessageID  string
	Payload    json.RawMessage
	Status     EventStatus
	ReservedBy int64
	CreatedBy  int64
	Attempts   int
	CreatedAt  time.Time
	UpdatedAt  time.Time
	CausedBy   []int64
}

type Mutation struct {
	ID             int64
	RunID          int64
	WorkflowID     int64
	Connector      string
	Method         string
	Params         json.RawMessage
	Preview        string
	UITitle        string
	IdempotencyKey string
	Status         MutationStatus
	// WasStatus is the status the row had when it was read or last
	// written: UpdateMutation writes only while the row is still there.
	WasStatus         MutationStatus
	Result            json.RawMessage
	Error             string
	ResolvedBy        string
	Attempts          int
	ReconcileAttempts int
	NextAttemptAt     *time.Time
	ReminderID        int64 // the deferred bus event announcing it again
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

type Schedule struct {
	WorkflowID  int64
	Handler     string
	HandlerType string
	NextRunAt   *time.Time
	WakeAt      *time.Time
	// Unrun: a consumer deployed and not committed a run since.
	Unrun bool
}

type TraceEntry struct {
	ID         int64
	RunID      int64
	At         time.Time
	Phase      string
	Kind       string // call, log, note
	Connector  string
	Method     string
	Args       string
	Result     string
	DurationMS int64
	Error      string
}

type Grant struct {
	ID         int64
	WorkflowID int64
	Capability string
	Scope      string
	Mode       GrantMode
	DailyLimit int
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

type AnswerRecord struct {
	ID         int64
	WorkflowID int64
	Subject    string // mutation, run, event, input, workflow
	SubjectID  int64
	Answer     string
	AnsweredBy string
	// Attempt is the attempt of the subject the answer was given to (a
	// mutation's call: attempts counted from 1; a workflow's retry or
	// resume: the block it answered, Workflow.BlockSeq); 0 for a subject
	// without attempts.
	Attempt   int
	CreatedAt time.Time
}
