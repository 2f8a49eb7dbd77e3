// Package sandbox runs workflow scripts in goja: it compiles a workflow file
// (ESM or TypeScript, transformed by esbuild), checks its declarations, and
// runs one handler phase at a time in a fresh runtime that holds nothing but
// the phase's ctx facade.
//
// The sandbox knows the phase matrix of chapters 06/06b and enforces it; it
// knows nothing of SQL or the TUI. Everything a handler does to the world
// goes through the Host the engine hands to Run.
package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Phase is the handler phase being run.
type Phase string

const (
	PhaseProducer Phase = "producer"
	PhasePrepare  Phase = "prepare"
	PhaseMutate   Phase = "mutate"
	PhaseNext     Phase = "next"
)

// MethodKind mirrors connectors.Kind without importing it.
type MethodKind string

const (
	KindRead     MethodKind = "read"
	KindReadByID MethodKind = "read_by_id"
	KindMutate   MethodKind = "mutate"
)

// MethodSpec is one connector method the facade exposes as
// ctx.<Connector>.<Method>(params).
type MethodSpec struct {
	Connector string
	Method    string
	Kind      MethodKind
	// Args are the method's arguments with their TypeScript types, as
	// keep.d.ts declares them: validation checks literal values against
	// them.
	Args []ArgSpec
	// OpenArgs lets a literal argument hold fields beyond Args (an MCP
	// tool whose input schema allows them); otherwise validate refuses
	// such a field, as the host refuses it at the call.
	OpenArgs bool
	// Uncallable, when set, is why a call of the method is refused at
	// validate (an MCP tool keep cannot call, mcpcheck.go).
	Uncallable string
}

// ArgSpec is one argument of a method: its name and TypeScript type.
type ArgSpec struct {
	Name     string
	Type     string
	Required bool // a literal argument object without it is refused (MCP tools, mcpcheck.go)
	// Fields are an object argument's declared fields (connectors.Arg's):
	// a literal object there is checked as the argument object is.
	Fields []ArgSpec
}

// Diagnostic is one problem found in a workflow file.
type Diagnostic struct {
	File    string
	Line    int // 1-based; 0 when unknown
	Col     int // 1-based; 0 when unknown
	Message string
}

// ValidationError carries every diagnostic of a file; Error() is one
// "file:line:col: message" line per diagnostic.
type ValidationError struct{ Diagnostics []Diagnostic }

// Schedule is a producer's schedule: at most one of Interval and Cron, and
// a watched folder beside or instead of them (at least one of the three).
type Schedule struct {
	Interval time.Duration // from "30s", "5m", "1h", "1d"
	Cron     string        // 5 fields
	Text     string        // as written, e.g. "5m" or "0 9 * * *"; "watch inbox" for a watch alone
	// Watch is a folder under the files roots whose changes wake the
	// producer, as written ("inbox": relative to the first root). Without
	// Interval or Cron the producer still runs every WatchRescan.
	Watch string `json:",omitempty"`
}

type Producer struct {
	Name      string
	Publishes []string
	Schedule  Schedule
}

type Consumer struct {
	Name      string
	Subscribe []string
	Publishes []string
	// Concurrency is how many runs of the consumer may be under way at
	// once, on disjoint reservations (DESIGN.md §15); 1 unless declared.
	Concurrency int
	// EmptyNext: its next does nothing, so the host does not run it
	// (noop.go).
	EmptyNext bool
}

// MaxConcurrency bounds a consumer's declared concurrency: every run holds
// a worker and a share of the one writer.
const MaxConcurrency = 64

// Workflow is a workflow file's declaration, handlers in declaration order.
type Workflow struct {
	Name      string
	Topics    []string
	Producers []Producer
	Consumers []Consumer
}

// LoadOptions configures Load.
type LoadOptions struct {
	// Methods the facades expose; a ctx.x.y(...) in the source that names no
	// method here is a diagnostic.
	Methods []MethodSpec
	// MinInterval is the shortest producer interval allowed (policy).
	MinInterval time.Duration
	// Sources are the input sources and their types; a registerInput
	// naming another is a diagnostic. Nil: not checked.
	Sources map[string][]string
	// WatchFolder checks a producer's schedule.watch folder (under a files
	// root, there); its error is a diagnostic at the folder's literal. Nil:
	// not checked (a stored version, loaded again, was checked at deploy).
	WatchFolder func(dir string) error `json:"-"`
}

// Script is a loaded, validated workflow file. It is safe for concurrent use:
// the compiled program is shared, every Run gets its own runtime.
type Script struct {
	FileName string
	Source   []byte
	Workflow Workflow
	// Capabilities lists the "connector.method" mutators the source calls,
	// sorted, read statically from the source (for grants on deploy).
	Capabilities []string
	// Manifest is everything the script may do, named by the analysis
	// that validated it (manifest.go).
	Manifest *Manifest

	program  *goja.Program
	bare     *goja.Program                    // program without esbuild's export helpers; nil: use program
	methods  map[string]map[string]MethodKind // connector → method → kind
	facade   []facadeConn                     // the connectors of ctx, precomputed
	handlers map[string]handlerDecl           // producer or consumer name
	opts     LoadOptions                      // what Load was given, for the workers that load it again
	key      string                           // scriptKey: names the script to workers
}

// Event is a topic event as a script sees it.
type Event struct {
	MessageID string          `json:"messageId"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
}

// InputRequest is the argument of ctx.registerInput.
type InputRequest struct {
	Source, Type, ID, Title string
}

// InputID is the inputId ctx.registerInput returns for in: its source, type
// and id, which name one input of a workflow. The same three give the same
// inputId in every run, and no host is asked for it: a worker answers a
// registerInput without a round trip (proxy.go). Sources and types have no
// colon (connectors.Registry.AddSource refuses one), so the id after the
// second is the input's own, whatever it holds.
func InputID(in InputRequest) string { return in.Source + ":" + in.Type + ":" + in.ID }

// ParseInputID is InputID read back; ok is false for anything else.
func ParseInputID(s string) (in InputRequest, ok bool) {
	source, rest, ok1 := strings.Cut(s, ":")
	typ, id, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || source == "" || typ == "" || id == "" {
		return InputRequest{}, false
	}
	return InputRequest{Source: source, Type: typ, ID: id}, true
}

// PublishRequest is the argument of ctx.publish (topics given separately).
type PublishRequest struct {
	MessageID string
	InputID   string // producers: required; consumers: must be empty
	Payload   json.RawMessage
}

// Host is the engine side of a run. Every method may return an error; the
// sandbox then ends the run (the script cannot catch it) and Run returns an
// error that wraps the host's error unchanged, so errors.As reaches it.
type Host interface {
	// Read performs a read or read-by-id connector call. The sandbox has
	// already checked that the phase allows it.
	Read(ctx context.Context, connector, method string, params map[string]any) (any, error)
	// RegisterInput notes an input the producer found; the script's inputId
	// for it is InputID(in).
	RegisterInput(ctx context.Context, in InputRequest) error
	Publish(ctx context.Context, topics []string, ev PublishRequest) error
	Peek(ctx context.Context, topic string, limit int) ([]Event, error)
	GetByIDs(ctx context.Context, topic string, ids []string) ([]Event, error)
	// Log receives each console.log/info/warn/error line, already capped.
	Log(level, line string)
}

// Limits are host policy (DESIGN.md §8).
type Limits struct {
	WallTime      time.Duration // per phase
	MaxStackDepth int           // goja call stack
	MaxHeapGrowth uint64        // bytes of Go heap growth while the handler runs
	MaxMemory     uint64        // bytes of address space a worker process may map beyond what it maps at start
	MaxState      int           // bytes of JSON, returned state
	MaxPayload    int           // bytes of JSON, one published payload
	MaxData       int           // bytes of JSON, PrepareResult (data, reservations, ui)
	MaxResult     int           // bytes of JSON, one connector result handed to the script
	MaxParams     int           // bytes of JSON, the params of one connector call
	MaxField      int           // bytes of one string the host stores: input fields, message ids
	MaxLogLine    int           // characters of one console line
	MaxLogLines   int           // console lines of one run; the rest are cut, with a note
	MaxLogBytes   int           // bytes of console lines of one run; likewise
	MaxPeek       int           // largest peek limit
	DefaultPeek   int           // peek limit when none is given
}

// DefaultLimits are DESIGN.md §8's numbers.
func DefaultLimits() Limits {
	return Limits{
		WallTime:      5 * time.Minute,
		MaxStackDepth: 1000,
		MaxHeapGrowth: 256 << 20,
		MaxMemory:     768 << 20,
		MaxState:      64 << 10,
		MaxPayload:    256 << 10,
		MaxData:       1 << 20,
		MaxResult:     10 << 20,
		MaxParams:     1 << 20,
		MaxField:      4 << 10,
		MaxLogLine:    1000,
		MaxLogLines:   1000,
		MaxLogBytes:   256 << 10,
		MaxPeek:       1000,
		DefaultPeek:   100,
	}
}

// Invocation is one handler phase to run.
type Invocation struct {
	Handler string // producer or consumer name
	Phase   Phase
	// State: the handler's previous state (producer, prepare); nil = undefined.
	State json.RawMessage
	// Prepared: the PrepareResult as persisted (mutate, next).
	Prepared json.RawMessage
	// MutationResult: {"status":"applied","result":...} | {"status":"none"} |
	// {"status":"skipped"} (next).
	MutationResult json.RawMessage
	Host           Host
	Limits         Limits
}

// Reservation is one entry of PrepareResult.reservations.
type Reservation struct {
	Topic string   `json:"topic"`
	IDs   []string `json:"ids"`
}

// PrepareResult is what prepare returned, checked for shape.
type PrepareResult struct {
	Reservations []Reservation
	UITitle      string
	WakeAt       string // as returned; the engine parses and clamps it
	// Raw is the whole result as JSON ({reservations, data, ui, wakeAt}),
	// what the engine persists and later hands back as Invocation.Prepared.
	Raw json.RawMessage
}

// MutationCall is the terminal mutator call captured in mutate. The script
// was stopped at the call; the host performs it.
type MutationCall struct {
	Connector string
	Method    string
	Params    map[string]any
}

// Outcome is what one phase produced.
type Outcome struct {
	// State returned by a producer or by next; nil when the handler returned
	// undefined (next: keep the previous state; producer: store none).
	State json.RawMessage
	// StateReturned is true when the handler returned a value (even null).
	StateReturned bool
	Prepare       *PrepareResult // prepare
	Mutation      *MutationCall  // mutate, when a mutator was called
}

// ErrorKind classifies a failed Run. Host errors are not among them: they
// are returned wrapped, unchanged, for the engine to classify.
type ErrorKind string

const (
	// ErrLogic: the script threw, broke a phase rule, returned a malformed
	// result, exceeded a size limit of its own making.
	ErrLogic ErrorKind = "logic"
	// ErrTimeout: the phase ran past Limits.WallTime.
	ErrTimeout ErrorKind = "timeout"
	// ErrResource: the stack or heap limit was hit.
	ErrResource ErrorKind = "resource"
	// ErrCancelled: the context passed to Run was cancelled (shutdown).
	ErrCancelled ErrorKind = "cancelled"
)

// Error is a failed Run that is the script's doing (or a limit it hit).
type Error struct {
	Kind    ErrorKind
	Phase   Phase
	Handler string
	Op      string // the operation that broke a rule, e.g. "ctx.publish"
	Message string
	File    string
	Line    int
	Col     int
	Stack   string

	cause error // context.Canceled or DeadlineExceeded, for errors.Is
	// abandoned: the run's goroutine may still be running in a built-in;
	// a worker that gave up on one retires (worker.go)
	abandoned bool
}

// Run-time and load-time API, implemented in the other files of this package:
//
//	func Load(fileName string, src []byte, opts LoadOptions) (*Script, error)
//	    errors: *ValidationError (syntax errors included, with file:line:col)
//	func (s *Script) Run(ctx context.Context, inv Invocation) (*Outcome, error)
//	    errors: *Error, or a Host error wrapped unchanged
//	func ParseInterval(s string) (time.Duration, error)      // "30s", "5m", "1h", "1d"
//	func ParseCron(s string) (cron.Schedule, error)           // 5 fields
//	func ParseSchedule(text string) (Schedule, error)         // Schedule.Text back to a Schedule
//	func (s Schedule) Next(after time.Time) time.Time         // next run strictly after `after`
//	func (d Diagnostic) String() string                       // "file:line:col: message"
var _ = context.Background
