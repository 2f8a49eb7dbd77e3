// Package api is the API a front end (the TUI, the CLI, the daemon's
// socket clients) holds, and every type its methods take or give: one
// room below the run loop and authoring, which implement it together.
package api

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"keep/engine/ledger"
	"keep/sandbox"
	"keep/storage"
)

// API is everything a front end may ask of the engine. The run loop
// (engine.Engine) and authoring (engine/authoring's Author) implement it
// together, composed in engine/daemon; so does the client that talks to a
// daemon over its socket, so a front end never knows (or cares) which one
// it holds. Ids are strings.
type API interface {
	Workflows(ctx context.Context) ([]WorkflowView, error)
	Workflow(ctx context.Context, name string) (*WorkflowDetail, error)
	Inputs(ctx context.Context, workflow string, page Page) ([]InputView, error)
	Events(ctx context.Context, workflow string, f EventFilter) ([]EventView, error)
	Runs(ctx context.Context, workflow string, page Page) ([]RunView, error)
	Mutations(ctx context.Context, workflow string, status string) ([]MutationView, error)
	Trace(ctx context.Context, runID string) ([]TraceLine, error)
	Attention(ctx context.Context) ([]AttentionItem, error)
	Grants(ctx context.Context, workflow string) ([]GrantView, error)

	Deploy(ctx context.Context, fileName string, src []byte, name string) (*DeployResult, error)
	RunNow(ctx context.Context, workflow string) error
	Pause(ctx context.Context, workflow string) error
	Resume(ctx context.Context, workflow string) error
	Retry(ctx context.Context, workflow string) error
	// Approve answers a call waiting for approval: this call only, or
	// always (from now on, in the scope the approval showed). A mutation
	// id here (Approve, ApproveWide, Reject, Resolve) is "42", the call as
	// it is asked about now, or "42@2" (AttentionItem.AnswerID), the call
	// as its attempt 2 was asked about: refused when it asks about
	// another attempt now.
	Approve(ctx context.Context, mutationID string, always bool) error
	// ApproveWide approves and allows, from now on, the whole capability
	// (or what the grant that decided it covers), not only the call's scope.
	ApproveWide(ctx context.Context, mutationID string) error
	Reject(ctx context.Context, mutationID string) error
	Resolve(ctx context.Context, mutationID string, answer Answer) error
	SkipEvents(ctx context.Context, eventIDs []string) error
	SkipInput(ctx context.Context, inputID string) error
	Grant(ctx context.Context, workflow string, g GrantView) error
	// GrantReleasing is Grant saying how many calls already waiting for
	// approval the new grant allowed, and so released.
	GrantReleasing(ctx context.Context, workflow string, g GrantView) (released int, err error)
	// DryRun shows what a deployed workflow's next runs would do, on a
	// throw-away copy: real reads, captured mutations (engine/authoring/try.go).
	DryRun(ctx context.Context, workflow string, opts TryOptions) (*TryReport, error)
	// Script is a deployed workflow's current script (keep edit).
	Script(ctx context.Context, workflow string) (*ScriptView, error)
	// Propose offers a new script for a workflow; it waits in Attention
	// until the person accepts or rejects it (engine/authoring/propose.go
	// makes it, engine/proposal.go files it and takes the decision).
	Propose(ctx context.Context, p ProposalRequest) (*ProposalView, error)
	AcceptProposal(ctx context.Context, id string) (*DeployResult, error)
	RejectProposal(ctx context.Context, id string) error

	// Subscribe delivers notifications of changes until cancel is called.
	// Sends never block the engine: a slow reader misses notifications, and
	// should re-read what it shows on the next one it gets.
	Subscribe() (<-chan Notification, func())
	// SubscribeScreen is Subscribe for a screen a person watches (the
	// TUI): it also delivers what is meant for the person (NoteNotifySend,
	// NoteNotifyUser), which counts as delivered only when a screen took
	// it; without one, notify.send fails where notify-send is missing.
	SubscribeScreen() (<-chan Notification, func())
	// Info says where the engine runs and on which database.
	Info() Info
}

// Info describes the engine a front end is talking to.
type Info struct {
	Mode   string `json:"mode"` // "in-process" or "attached"
	DBPath string `json:"db_path"`
	PID    int    `json:"pid"`
	// Config is the digest of the config the engine runs on
	// (config.Digest): keep validate and keep try warn when the file they
	// read says otherwise.
	Config string `json:"config,omitempty"`
}

// Page asks for one page of a list. A page is always returned newest
// first; which items it holds is said by where it starts: from the newest
// end (the default, going down through Before), or from the oldest end
// (Oldest, or going up through After), so the oldest page of a long history
// is one bounded read rather than a walk down every page above it.
type Page struct {
	// Before: only items with an id lower than this (0: from the newest).
	Before int64
	Limit  int
	// Filter: a case-insensitive substring of the title (inputs) or handler (runs).
	Filter string
	// After: only items with an id higher than this, the Limit nearest to
	// it (the page just newer than After). With Before too, the page lies
	// between the two.
	After int64
	// Oldest: the Limit oldest items (After 0 would mean "not set").
	Oldest bool
}

// FromOldest says whether the page is counted from the oldest end.
func (p Page) FromOldest() bool { return p.Oldest || p.After > 0 }

// Answer is the user's answer to an uncertain mutation (DESIGN.md §7.1).
type Answer string

const (
	TryAgain    Answer = "try-again"
	Happened    Answer = "happened"
	NotHappened Answer = "not-happened"
	SkipIt      Answer = "skip"
)

// User-visible workflow states (DESIGN.md §7.1, §10).
const (
	StateRunning        = "running"
	StateIdle           = "idle"
	StateNeedsAttention = "needs_attention"
	StatePaused         = "paused"
	StateStopped        = "stopped"
)

type Block struct {
	Kind   storage.BlockKind `json:"kind"`
	Reason string            `json:"reason"`
	// N is which of the workflow's blocks this is: a retry or resume sent
	// as WORKFLOW@N (AnswerTo) is refused once another block stands.
	N int64 `json:"n"`
}

// AnswerTo is how to name the workflow in a retry or resume meant for
// the block b shows, nil meaning it was shown unblocked: "notes@7",
// "notes@0".
func (b *Block) AnswerTo(workflow string) string {
	var n int64
	if b != nil {
		n = b.N
	}
	return workflow + "@" + strconv.FormatInt(n, 10)
}

type WorkflowView struct {
	ID     string                 `json:"id"`
	Name   string                 `json:"name"`
	Status storage.WorkflowStatus `json:"status"` // the user's: active, paused, archived
	State  string                 `json:"state"`  // running, idle, needs_attention, paused, stopped
	Block  *Block                 `json:"block"`
	// Schedule in words: "Checks every 5 minutes", "Runs on cron 0 9 * * *"; several producers joined by "; ".
	Schedule      string     `json:"schedule"`
	NextRun       *time.Time `json:"next_run"`
	PendingInputs int        `json:"pending_inputs"`
	Attention     int        `json:"attention"`
	Version       int        `json:"version"`
	// LoadError: the deployed version no longer loads (a tool it calls
	// is gone), with file:line:col; its State is needs_attention.
	LoadError string `json:"load_error,omitempty"`
	// Unwatched: producers' watched folders whose watch is not in effect
	// (inotify refused it, the folder could not be found); Schedule then
	// leaves out "when FOLDER changes" and says "FOLDER is not watched".
	Unwatched []UnwatchedFolder `json:"unwatched,omitempty"`
}

// UnwatchedFolder is a producer's schedule.watch folder not watched now.
// The producer runs on its schedule (or its rescan) meanwhile, and each of
// those runs tries the watch again.
type UnwatchedFolder struct {
	Producer string `json:"producer"`
	Folder   string `json:"folder"` // as the workflow names it
	Why      string `json:"why"`
}

// String is the one sentence the CLI and the TUI show for u.
func (u UnwatchedFolder) String() string {
	return u.Folder + " is not watched: " + u.Why + "; " + u.Producer + " runs on its schedule meanwhile, and each of its runs tries the watch again"
}

type WorkflowDetail struct {
	WorkflowView
	Handlers []HandlerView `json:"handlers"`
	Counts   Counts        `json:"counts"`
	LastRun  *RunView      `json:"last_run"`
	// Answers: what the person answered about the workflow itself (retry,
	// resume), oldest first; a call's answers are its MutationView's.
	Answers []AnswerView `json:"answers,omitempty"`
}

type HandlerView struct {
	Name      string     `json:"name"`
	Type      string     `json:"type"` // producer, consumer
	Schedule  string     `json:"schedule,omitempty"`
	NextRunAt *time.Time `json:"next_run_at,omitempty"`
	WakeAt    *time.Time `json:"wake_at,omitempty"`
	Topics    []string   `json:"topics"` // publishes (producer) or subscribe (consumer)
}

// Counts per workflow (DESIGN.md §7.5).
type Counts struct {
	InputsPending        int                       `json:"inputs_pending"`
	InputsDone           int                       `json:"inputs_done"`
	InputsSkipped        int                       `json:"inputs_skipped"`
	InputsNeedsAttention int                       `json:"inputs_needs_attention"`
	Outputs              map[string]OutputCounters `json:"outputs"` // by connector
}

type OutputCounters struct {
	Applied int `json:"applied"`
	Failed  int `json:"failed"`
	Waiting int `json:"waiting"`
}

// Input statuses (DESIGN.md §7.5).
const (
	InputPending        = "pending"
	InputDone           = "done"
	InputSkipped        = "skipped"
	InputNeedsAttention = "needs_attention"
)

type InputView struct {
	InputID    string       `json:"input_id"`
	Workflow   string       `json:"workflow"`
	Source     string       `json:"source"`
	Type       string       `json:"type"`
	ExternalID string       `json:"external_id"`
	Title      string       `json:"title"`
	Status     string       `json:"status"`
	Stale      bool         `json:"stale"`
	CreatedAt  time.Time    `json:"created_at"`
	Outputs    []OutputView `json:"outputs"`
}

type OutputView struct {
	MutationID string                 `json:"mutation_id"`
	Title      string                 `json:"title"`
	Status     storage.MutationStatus `json:"status"`
	Connector  string                 `json:"connector"`
	Method     string                 `json:"method"`
	Params     json.RawMessage        `json:"params"`
	Preview    string                 `json:"preview"`
	// Target is what the call acts on, read by the host from the actual
	// parameters (the scope a grant narrows to: a path, a host, domains).
	Target string `json:"target,omitempty"`
	// Attempts: how many times the call was made, when more than once: a
	// send put off (a 429) or an earlier attempt that did nothing and was
	// made again for the same input (engine/attempts.go).
	Attempts  int       `json:"attempts,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

type EventFilter struct {
	Topic  string
	Status string
	// Before: only events with an id lower than this (0: from the newest).
	Before int64
	Limit  int
}

type EventView struct {
	ID         string              `json:"id"`
	Topic      string              `json:"topic"`
	MessageID  string              `json:"message_id"`
	Status     storage.EventStatus `json:"status"`
	Payload    json.RawMessage     `json:"payload"`
	CausedBy   []string            `json:"caused_by"`
	ReservedBy string              `json:"reserved_by"`
	CreatedBy  string              `json:"created_by"`
	CreatedAt  time.Time           `json:"created_at"`
}

type RunView struct {
	ID          string            `json:"id"`
	Workflow    string            `json:"workflow"`
	Handler     string            `json:"handler"`
	HandlerType string            `json:"handler_type"`
	Phase       storage.Phase     `json:"phase"`
	Status      storage.RunStatus `json:"status"`
	RetryOf     string            `json:"retry_of"`
	Trigger     string            `json:"trigger"`
	MovedBy     string            `json:"moved_by"` // who made its last move: scheduler, recovery, user:approve, ...
	Error       string            `json:"error"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	// WorkflowBlock: the workflow's standing block (Block.N) when the run
	// was read, which a retry from this row answers; 0 when unblocked.
	WorkflowBlock int64 `json:"workflow_block,omitempty"`
}

type MutationView struct {
	ID         string                 `json:"id"`
	RunID      string                 `json:"run_id"`
	Workflow   string                 `json:"workflow"`
	Connector  string                 `json:"connector"`
	Method     string                 `json:"method"`
	Params     json.RawMessage        `json:"params"`
	Preview    string                 `json:"preview"`
	Target     string                 `json:"target,omitempty"` // as OutputView's
	Status     storage.MutationStatus `json:"status"`
	Result     json.RawMessage        `json:"result"`
	Error      string                 `json:"error"`
	UITitle    string                 `json:"ui_title"`
	ResolvedBy string                 `json:"resolved_by"`
	CreatedAt  time.Time              `json:"created_at"`
	UpdatedAt  time.Time              `json:"updated_at"`
	// Arguments: every parameter named, each value cut to ArgumentRoom
	// with the bytes not shown counted (engine/arguments.go).
	Arguments []Argument `json:"arguments"`
	// Answers: what the person answered about it (approve, reject,
	// happened, …), oldest first. ResolvedBy says who settled it last —
	// "host" for a call performed after an approval — so without these
	// the history could not say that it was approved, or by whom.
	Answers []AnswerView `json:"answers"`
}

// AnswerView is one answer a person gave (DESIGN.md §7.1: who gave it and
// when).
type AnswerView struct {
	Answer     string    `json:"answer"`
	AnsweredBy string    `json:"answered_by"`
	At         time.Time `json:"at"`
	// Attempt: the attempt of the call the answer was given to, when
	// known (a row asked again after it was sent again is answered anew).
	Attempt int `json:"attempt,omitempty"`
	// Block: the workflow's block a retry or resume answered (Block.N);
	// 0 for a pause, or an answer recorded before blocks were numbered.
	Block int64 `json:"block,omitempty"`
}

type TraceLine struct {
	At         time.Time `json:"at"`
	Phase      string    `json:"phase"`
	Kind       string    `json:"kind"` // call, log, note
	Connector  string    `json:"connector,omitempty"`
	Method     string    `json:"method,omitempty"`
	Args       string    `json:"args,omitempty"`
	Result     string    `json:"result,omitempty"`
	DurationMS int64     `json:"duration_ms"`
	Error      string    `json:"error,omitempty"`
}

// AttentionKind is what an item of `keep attention` asks (DESIGN.md §5).
type AttentionKind string

const (
	AttentionApproval        AttentionKind = "approval"
	AttentionReconciliation  AttentionKind = "reconciliation"
	AttentionFailedRun       AttentionKind = "failed_run"
	AttentionBlockedWorkflow AttentionKind = "blocked_workflow"
	AttentionStaleInput      AttentionKind = "stale_input"
	// AttentionAuth: sign in to an account again (DESIGN.md §14).
	AttentionAuth AttentionKind = "auth"
	// AttentionPermission: a call outside the workflow's grants was refused.
	AttentionPermission AttentionKind = "permission"
)

type AttentionItem struct {
	Kind     AttentionKind `json:"kind"`
	Workflow string        `json:"workflow"`
	// ID is what answers it: a mutation id (approval, reconciliation), a run
	// id (failed_run), a workflow name (blocked_workflow), an input id (stale_input).
	ID    string `json:"id"`
	Title string `json:"title"`
	// Connector and Method name the call of an approval or reconciliation.
	Connector string          `json:"connector,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params"`
	Preview   string          `json:"preview"`
	Target    string          `json:"target,omitempty"` // as OutputView's
	Reason    string          `json:"reason"`
	// Scope: what "always" allows from now on (an approval): the call's
	// file, host or mailbox; empty when the capability has no scope.
	Scope string `json:"scope,omitempty"`
	// Check: what the user can check by hand (reconciliation).
	Check string `json:"check,omitempty"`
	// Inputs: titles of the inputs behind it ("because of").
	Inputs []string `json:"inputs"`
	// Answers: the answers accepted now, e.g. ["approve","approve-always","reject"].
	Answers []string `json:"answers"`
	// Answered: what the person (or a grant) already answered about the
	// call of an approval or reconciliation, oldest first, each with the
	// attempt it answered: a call asked again after "try again", or sent
	// again, reads as the same question asked anew, not a new one.
	Answered []AnswerView `json:"answered,omitempty"`
	// Attempt: which attempt of the call an approval or reconciliation
	// asks about (from 1). The same mutation is asked again when its call
	// is sent again; an answer sent with AnswerID is to this attempt only.
	Attempt int `json:"attempt,omitempty"`
	// Block: which of the workflow's blocks a retry or resume from this
	// item answers (Block.N), 0 when it stood unblocked: WorkflowAnswerID.
	Block int64 `json:"block,omitempty"`
	// Command is the command that fixes it when no answer does
	// ("keep auth login google").
	Command   string    `json:"command,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Arguments: every parameter of the call named, each value cut to
	// ArgumentRoom with the bytes not shown counted; keep's own (reconcile)
	// marked and last (engine/arguments.go).
	Arguments []Argument `json:"arguments,omitempty"`
}

// AnswerID is the id to answer the item with: for an approval or a
// reconciliation, its mutation as this attempt asked about it ("42@2"),
// which the engine refuses once the call has been sent again and asks
// anew, rather than apply an answer to a question no longer asked; else
// ID.
func (it AttentionItem) AnswerID() string {
	if it.Attempt > 0 && (it.Kind == AttentionApproval || it.Kind == AttentionReconciliation) {
		return it.ID + "@" + strconv.Itoa(it.Attempt)
	}
	if it.Block > 0 && it.ID == it.Workflow {
		return it.WorkflowAnswerID() // a blocked workflow, a refused credential or permission
	}
	return it.ID
}

// WorkflowAnswerID is the workflow to retry or resume from this item, as
// it stood when the item was read ("notes@7"): the engine refuses it once
// the block is answered and another stands, rather than clear a block
// nobody was shown.
func (it AttentionItem) WorkflowAnswerID() string {
	return it.Workflow + "@" + strconv.FormatInt(it.Block, 10)
}

type GrantView struct {
	Capability string            `json:"capability"`
	Scope      string            `json:"scope"`
	Mode       storage.GrantMode `json:"mode"`
	DailyLimit int               `json:"daily_limit"`
	// Used: the script calls this capability (read from its source on deploy).
	Used bool `json:"used"`
}

type DeployResult struct {
	Workflow string `json:"workflow"`
	Version  int    `json:"version"`
	Created  bool   `json:"created"`
	// Unchanged: the file is the deployed version's, as it was: no new
	// version was made.
	Unchanged    bool        `json:"unchanged,omitempty"`
	Capabilities []GrantView `json:"capabilities"`
	// Manifest is all the stored version may do: the engine holds its
	// every call to it.
	Manifest *sandbox.Manifest `json:"manifest,omitempty"`
}

// Notification kinds (the ledger's: it decides what a move announces).
const (
	NoteChanged         = ledger.NoteChanged
	NoteApproval        = ledger.NoteApproval
	NoteNeedsReconcile  = ledger.NoteNeedsReconcile
	NoteIndeterminate   = ledger.NoteIndeterminate
	NoteNeedsAttention  = ledger.NoteNeedsAttention
	NoteWorkflowPaused  = ledger.NoteWorkflowPaused
	NoteWorkflowResumed = ledger.NoteWorkflowResumed
	NoteRunFailed       = ledger.NoteRunFailed
	NoteRunCommitted    = ledger.NoteRunCommitted
)

// Notifications meant for the person, which only screens receive
// (SubscribeScreen): a script's notify.send (the TUI rings the bell and
// shows a toast) and the bus's notify_user (a toast). Title is the
// script's title or the event's topic; Text the body.
const (
	NoteNotifySend = "notify.send"
	NoteNotifyUser = "notify_user"
)

type Notification struct {
	Kind     string    `json:"kind"`
	Workflow string    `json:"workflow"`
	Title    string    `json:"title,omitempty"`
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
}

// The API's answers about scripts, dry runs and proposals: the types
// of the methods above whose work lives in engine/authoring.

// ScriptView is the current script of a deployed workflow.
type ScriptView struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"` // its label: "3", "3.1" after a repair
	FileName string `json:"file_name"`
	Source   string `json:"source"`
}

// DefaultTryLimit is how many mutations a dry run captures before it stops.
const DefaultTryLimit = 20

// TryOptions narrows a dry run.
type TryOptions struct {
	// Producer runs only this producer (default: every producer once).
	Producer string `json:"producer,omitempty"`
	// Limit stops the run after this many captured mutations (0: DefaultTryLimit).
	Limit int `json:"limit,omitempty"`
	// Grants are the deployed workflow's, which decide what would wait for
	// approval; nil for a file never deployed (the default mode applies).
	Grants []GrantView `json:"grants,omitempty"`
	// Deployed says Grants are the deployed workflow's.
	Deployed bool `json:"deployed,omitempty"`
	// CallsToday are the deployed workflow's calls in the last day that
	// each grant with a daily limit covers, as the limit counts them (by
	// LimitKey): a captured call past the limit would wait for approval.
	CallsToday map[string]int `json:"calls_today,omitempty"`
	// CaptureReads shows reads instead of performing them, as mutations
	// are: nothing outside keep is touched (keep new and edit without
	// --with-reads, proposals). A captured read answers empty.
	CaptureReads bool `json:"capture_reads,omitempty"`
}

// LimitKey names a grant's daily limit in TryOptions.CallsToday.
func LimitKey(capability, scope string) string { return capability + " " + scope }

// TryReport is what a dry run would have done.
type TryReport struct {
	Workflow string `json:"workflow"`
	// StartedFrom is "empty" for a file (keep try: producers read as on a
	// first deploy), or "from a copy of the database" for a deployed
	// workflow (API.DryRun: its events, state and grants as they are).
	StartedFrom string `json:"started_from"`
	// Note says why nothing may have run: the workflow is paused, or waits
	// for you.
	Note      string        `json:"note,omitempty"`
	Inputs    []TryInput    `json:"inputs"`
	Mutations []TryMutation `json:"mutations"`
	// Reads are every read the runs made, performed or captured, and
	// Hosts every host their arguments name.
	Reads []TryRead `json:"reads"`
	Hosts []string  `json:"hosts"`
	Runs  []TryRun  `json:"runs"`
	// PendingEvents were left unhandled (the limit, or a consumer that
	// reserved nothing).
	PendingEvents int  `json:"pending_events"`
	LimitReached  bool `json:"limit_reached"`
	// Capabilities the workflow calls, with what each would need.
	Capabilities []GrantView `json:"capabilities"`
	// ApprovalsFrom says what decided NeedsApproval: the deployed
	// workflow's grants, or the default mode a new workflow starts with.
	ApprovalsFrom string `json:"approvals_from"`
	// Manifest is all the tried version may do, whatever this run did:
	// what it would be held to once deployed.
	Manifest *sandbox.Manifest `json:"manifest"`
}

// TryInput is an input the producers registered.
type TryInput struct {
	Source     string `json:"source"`
	Type       string `json:"type"`
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
}

// TryMutation is one captured mutation: a ledger row that was not performed.
type TryMutation struct {
	Connector string          `json:"connector"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Preview   string          `json:"preview"`
	Title     string          `json:"ui_title"`
	RunID     string          `json:"run_id"`
	// CausedBy are the titles of the inputs whose events the run reserved.
	CausedBy []string `json:"caused_by"`
	// Approval is "allowed" or why it would wait for you.
	NeedsApproval bool   `json:"needs_approval"`
	Approval      string `json:"approval"`
}

// TryRead is one read of a dry run.
type TryRead struct {
	Connector string          `json:"connector"`
	Method    string          `json:"method"`
	Args      json.RawMessage `json:"args"`
	// Performed: the read was made; else it was captured and answered empty.
	Performed bool `json:"performed"`
}

// Failed are the runs of the dry run that failed (keep try exits 1).
func (rep *TryReport) Failed() []TryRun {
	var out []TryRun
	for _, r := range rep.Runs {
		if r.Status == storage.RunFailedLogic || r.Status == storage.RunFailedInternal {
			out = append(out, r)
		}
	}
	return out
}

// TryRun is a run of the dry run with its trace.
type TryRun struct {
	RunView
	Trace []TraceLine `json:"trace"`
}

// ProposalRequest offers Source as the next version of Workflow (empty:
// the name in the file, which may be a workflow not deployed yet).
type ProposalRequest struct {
	Workflow, FileName string
	Source             []byte
	Origin, Reason     string
}

// Proposal origins.
const (
	OriginRepair = "repair"
	OriginMCP    = "mcp"
	OriginEdit   = "edit"
)

// Proposal statuses: open waits for the person; the others are decisions.
const (
	ProposalOpen     = "open"
	ProposalAccepted = "accepted"
	ProposalRejected = "rejected"
	ProposalRefused  = "refused"
)

// AttentionProposal: a new version waits for the person to accept or reject it.
const AttentionProposal AttentionKind = "proposal"

// ProposalView is a proposal as a front end shows it.
type ProposalView struct {
	ID          string          `json:"id"` // "p12": what keep approve and keep reject take
	Workflow    string          `json:"workflow"`
	Origin      string          `json:"origin"`
	Reason      string          `json:"reason"`
	FileName    string          `json:"file_name"`
	BaseVersion int             `json:"base_version"` // the version it would replace (0: none)
	Source      string          `json:"source"`
	Diff        string          `json:"diff"`
	Summary     ProposalSummary `json:"summary"`
	DryRun      *TryReport      `json:"dry_run"`
	// DryRunError says why there is no dry run.
	DryRunError string     `json:"dry_run_error,omitempty"`
	Status      string     `json:"status"`
	Why         string     `json:"why,omitempty"`     // a refusal's reason
	Version     int        `json:"version,omitempty"` // the version an accept made
	CreatedAt   time.Time  `json:"created_at"`
	DecidedAt   *time.Time `json:"decided_at,omitempty"`
}

// ProposalSummary is what a proposed script uses and what it adds to the
// version it would replace: the person reads this before the diff. It is
// read from the two versions' manifests (sandbox.Manifest), the same the
// engine holds every call of the running version against, so it is an
// upper bound of what the new version may do.
type ProposalSummary struct {
	Reads     []string `json:"reads"`     // connector.method of every read it calls
	Hosts     []string `json:"hosts"`     // hosts its source names: the only ones it may reach
	Handlers  []string `json:"handlers"`  // producer and consumer names
	Topics    []string `json:"topics"`    // declared topics
	Schedules []string `json:"schedules"` // "producer: every 5m"
	Mutations []string `json:"mutations"` // connector.method of every mutation it calls (MCP tools as mcp.NAME.TOOL)
	// Grants are the mutations the workflow's grants do not allow yet:
	// accepting does not grant them, each would wait for you.
	Grants []string `json:"grants"`
	// UsesGrants are the workflow's existing grants the new version's
	// mutations would be made under, in words ("your grant files.write
	// allow, any path"): accepting lets it use them.
	UsesGrants []string `json:"uses_grants"`
	// Adds says, in words, what is new against the deployed version
	// (everything, for a workflow not deployed yet).
	Adds []string `json:"adds"`
	// Widens is the part of Adds a repair may not bring: a read, a host,
	// a handler, a topic or a faster schedule (a mutation waits on the
	// grants). A repair with any is refused.
	Widens []string `json:"widens"`
}
