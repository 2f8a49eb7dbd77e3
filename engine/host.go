package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"keep/connectors"
	"keep/sandbox"
	"keep/storage"
)

// trace buffers a run's trace until the transition that records the run.
// It is bounded: past traceMaxEntries entries or traceMaxBytes bytes over
// the run, calls and log lines are counted, not kept, and one note says how
// much was cut (a script that logs in a loop cannot fill the disk). The
// host's own notes (a failure, a wait) are always kept, clipped.
type trace struct {
	entries []storage.TraceEntry
	now     func() time.Time
	// secrets cleans what is recorded: a script's console lines and errors
	// are scrubbed like connector answers (take).
	secrets *connectors.Held

	kept, bytes   int // what was kept over the run, across takes
	cut, cutBytes int // what was not
	reported      int // cut entries already reported in a note
}

const (
	traceArgsMax, traceResultMax = 2000, 500
	traceNoteMax                 = 2000
	traceMaxEntries              = 1000
	traceMaxBytes                = 256 << 10
)

func (e *Engine) newTrace() *trace { return &trace{now: e.now, secrets: e.reg.Held()} }

func (t *trace) add(e storage.TraceEntry) {
	size := len(e.Args) + len(e.Result) + len(e.Error) + len(e.Connector) + len(e.Method) + len(e.Phase)
	if e.Kind != "note" && (t.cut > 0 || t.kept >= traceMaxEntries || t.bytes+size > traceMaxBytes) {
		t.cut++
		t.cutBytes += size
		return
	}
	t.kept++
	t.bytes += size
	t.entries = append(t.entries, e)
}

// merge adds what a phase run early traced on its own, under this trace's
// caps, in its order.
func (t *trace) merge(o *trace) {
	for _, e := range o.entries {
		t.add(e)
	}
	t.cut += o.cut - o.reported
	t.cutBytes += o.cutBytes
}

func (t *trace) call(phase, connector, method string, args, result any, d time.Duration, err error) {
	e := storage.TraceEntry{At: t.now(), Phase: phase, Kind: "call", Connector: connector, Method: method,
		Args: clip(jsonText(args), traceArgsMax), Result: clip(jsonText(result), traceResultMax), DurationMS: d.Milliseconds()}
	if err != nil {
		e.Error = clip(err.Error(), traceNoteMax)
	}
	t.add(e)
}

func (t *trace) log(phase, level, line string) {
	t.add(storage.TraceEntry{At: t.now(), Phase: phase, Kind: "log", Method: level, Result: line})
}

func (t *trace) note(phase, text string) {
	t.add(storage.TraceEntry{At: t.now(), Phase: phase, Kind: "note", Result: clip(text, traceNoteMax)})
}

// take returns the buffered entries bound to a run and empties the buffer;
// what was cut since the last take is said in a closing note.
func (t *trace) take(runID int64) []storage.TraceEntry {
	if t.cut > t.reported {
		t.entries = append(t.entries, storage.TraceEntry{At: t.now(), Kind: "note", Result: fmt.Sprintf(
			"the trace was cut: %d more entries (%d bytes) were not kept; a run keeps at most %d entries and %d bytes",
			t.cut-t.reported, t.cutBytes, traceMaxEntries, traceMaxBytes)})
		t.reported = t.cut
	}
	out := t.entries
	// the one point where a run's trace leaves for the database: a secret
	// a script got back from a server, and whatever it made of it, is
	// cleaned here (console lines, errors, what calls carried)
	redact := t.secrets.Redactor()
	for i := range out {
		out[i].RunID = runID
		out[i].Args, out[i].Result, out[i].Error = redact(out[i].Args), redact(out[i].Result), redact(out[i].Error)
	}
	t.entries = nil
	return out
}

func jsonText(v any) string {
	if v == nil {
		return ""
	}
	// as it was, not as HTML wants it: a trace shows "<" and ">" as
	// themselves, never \u003c (json.Marshal escapes them)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// host is the engine side of one handler phase (sandbox.Host). Producers'
// inputs and events and consumers' publishes are buffered here and written
// by the transition that commits the run, so a handler that throws halfway
// leaves nothing behind but its run record.
type host struct {
	e     *Engine
	wf    *storage.Workflow
	phase sandbox.Phase
	// producer, for a producer's run: its name (a listing of its watched
	// folder ends the changes that woke it)
	producer string
	// the handler's declared topics
	publishes []string
	subscribe []string
	tr        *trace
	// claims, for a concurrent consumer's prepare: events runs in hand
	// chose, which peek does not offer again (concurrent.go)
	claims *hand
	// prefetched, for a prepare: what Prefetch answers, read with the
	// scheduler step that started it
	prefetched map[string][]sandbox.Event
	// ownReads: the phase read keep's database (store), beyond what it was
	// handed: a prepare ahead that did is not taken (ahead.go)
	ownReads atomic.Bool

	// inputs are the inputs new to the workflow this run registered, by
	// inputId in fresh; known has every input it registered, new or
	// already there, so that publishing under one costs no read (a scan of
	// a folder of 1,000 known files read each input twice)
	inputs []*storage.Input
	fresh  map[string]*storage.Input
	known  map[string]int64
	pubs   []storage.Publication // each ctx.publish, written by the commit

	// listings: the folders a producer's run listed, each with whether a
	// listing of it left out a file still being written, told to the watch
	// as the run ends (doneListing). Not at each listing: a run that lists
	// a folder twice (two globs) must not have the second, which found
	// nothing open, forget what the first left out. Reads may be served
	// at once, each on a goroutine of its own.
	listMu   sync.Mutex
	listings map[string]bool
}

func (h *host) noteListing(dir string, unfinished bool) {
	h.listMu.Lock()
	defer h.listMu.Unlock()
	if h.listings == nil {
		h.listings = map[string]bool{}
	}
	h.listings[dir] = h.listings[dir] || unfinished
}

// doneListing tells the watch, as a producer's run ends, whether its
// listings of each folder left out a file still being written: if so, the
// watch looks again, as nothing tells of the writer's close.
func (h *host) doneListing() {
	h.listMu.Lock()
	defer h.listMu.Unlock()
	for dir, unfinished := range h.listings {
		h.e.watching().looked(h.wf.ID, h.producer, dir, unfinished)
	}
	h.listings = nil
}

func (h *host) phaseName() string { return string(h.phase) }

// store is keep's database as the phase reads it. Every read of it is
// noted (ownReads): what the phase found there depends on when it read.
func (h *host) store() storage.Q {
	h.ownReads.Store(true)
	return h.e.db.Read()
}

func (h *host) Read(ctx context.Context, connector, method string, params map[string]any) (any, error) {
	c, m, err := h.e.reg.Lookup(connector, method)
	if err != nil {
		return nil, connectors.Errorf(connectors.Logic, "%v", err)
	}
	if m.Kind == connectors.Mutate {
		return nil, connectors.Errorf(connectors.Logic, "%s.%s is a mutation, not a read", connector, method)
	}
	if err := h.e.checkCall(ctx, h.wf.ID, h.wf.Version, connector, method, h.phase, params); err != nil {
		h.tr.call(h.phaseName(), connector, method, connectors.Shown(c, method, params), nil, 0, err)
		return nil, err
	}
	call := connectors.Call{Method: method, Params: params}
	var listed string // the folder a producer's run lists
	var unfinished bool
	if l, ok := c.(connectors.FolderLister); ok && h.producer != "" {
		if dir, ok := l.ListedFolder(method, params); ok {
			listed = dir
			h.e.watching().listed(h.wf.ID, h.producer, dir)
			call.Unfinished = func() { unfinished = true }
		}
	}
	start := time.Now()
	res, err := h.e.reg.Held().Scrub(connectors.Do(ctx, c, call, false))
	if listed != "" && err == nil {
		h.noteListing(listed, unfinished)
	}
	h.tr.call(h.phaseName(), connector, method, connectors.Shown(c, method, params), res, time.Since(start), err)
	if err != nil {
		if connectors.ClassOf(err) == connectors.Uncertain {
			// a read changes nothing: an unclear read is just a failed one
			return nil, &connectors.Error{Class: connectors.Transient, Err: err}
		}
		return nil, err
	}
	return res, nil
}

func (h *host) RegisterInput(ctx context.Context, in sandbox.InputRequest) error {
	if h.phase != sandbox.PhaseProducer {
		return connectors.Errorf(connectors.Logic, "ctx.registerInput is only for producers, not %s", h.phase)
	}
	if err := h.e.reg.CheckInput(in.Source, in.Type); err != nil {
		return connectors.Errorf(connectors.Logic, "ctx.registerInput: %v", err)
	}
	if in.ID == "" {
		return connectors.Errorf(connectors.Logic, "ctx.registerInput: id is required (the item's identifier in %s)", in.Source)
	}
	if in.Title == "" {
		return connectors.Errorf(connectors.Logic, "ctx.registerInput: title is required (what the item is, for the user)")
	}
	key := sandbox.InputID(in)
	if got, ok := h.fresh[key]; ok {
		got.Title = in.Title
		return nil
	}
	if _, ok := h.known[key]; ok {
		return nil
	}
	if h.known == nil {
		h.known, h.fresh = map[string]int64{}, map[string]*storage.Input{}
	}
	existing, err := h.store().InputIDByKey(ctx, h.wf.ID, in.Source, in.Type, in.ID)
	if err == nil {
		h.known[key] = existing
		return nil
	}
	if err != storage.ErrNotFound {
		return err
	}
	rec := &storage.Input{ID: h.e.inputSeq.Add(1), WorkflowID: h.wf.ID, Source: in.Source, Type: in.Type,
		ExternalID: in.ID, Title: in.Title, CreatedAt: h.e.now()}
	h.fresh[key], h.known[key] = rec, rec.ID
	h.inputs = append(h.inputs, rec)
	return nil
}

func (h *host) Publish(ctx context.Context, topics []string, ev sandbox.PublishRequest) error {
	// the sandbox's rules (sandbox/publish.go), in its words
	rules := sandbox.PublishRules{Publishes: h.publishes, Producer: h.phase == sandbox.PhaseProducer, Who: "this handler"}
	if err := sandbox.CheckPublish(rules, topics, ev); err != nil {
		return connectors.Errorf(connectors.Logic, "%v", err)
	}
	var causes []int64
	if rules.Producer {
		id, err := h.inputOf(ctx, ev.InputID)
		if err != nil {
			return err
		}
		causes = []int64{id}
	}
	payload := ev.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	for _, t := range topics {
		h.pubs = append(h.pubs, storage.Publication{Topic: t, MessageID: ev.MessageID, Payload: payload, Causes: causes})
	}
	return nil
}

// inputOf resolves an inputId given to publish: one registered in this run,
// or an existing input of this workflow, by the inputId registerInput
// returned for it in an earlier run or by its number (what registerInput
// returned before inputIds named their input).
func (h *host) inputOf(ctx context.Context, s string) (int64, error) {
	if id, ok := h.known[s]; ok {
		return id, nil
	}
	if in, ok := sandbox.ParseInputID(s); ok {
		if id, err := h.store().InputIDByKey(ctx, h.wf.ID, in.Source, in.Type, in.ID); err == nil {
			return id, nil
		}
	} else if id, err := strconv.ParseInt(s, 10, 64); err == nil {
		in, err := h.store().InputByID(ctx, id)
		if err == nil && in.WorkflowID == h.wf.ID {
			return id, nil
		}
	}
	return 0, connectors.Errorf(connectors.Logic, "ctx.publish: inputId %q is not an input registered by this workflow", s)
}

func (h *host) Peek(ctx context.Context, topic string, limit int) ([]sandbox.Event, error) {
	if !slices.Contains(h.subscribe, topic) {
		return nil, connectors.Errorf(connectors.Logic, "ctx.peek: topic %q is not in this consumer's subscribe %v", topic, h.subscribe)
	}
	evs, err := pendingIn(ctx, h.store(), h.wf.ID, topic, limit, h.claimed())
	return scriptEvents(evs), err
}

// claimed are the events runs in hand chose, which a concurrent consumer's
// peeks do not offer again; read before the peek's read (see hand.claimed).
func (h *host) claimed() map[int64]int64 {
	if h.claims == nil {
		return nil
	}
	return h.claims.claimed()
}

// pendingIn is a peek through q: a topic's first limit pending events,
// less those skip holds (runs in hand chose them; read before q's
// snapshot).
func pendingIn(ctx context.Context, q storage.Q, workflowID int64, topic string, limit int, skip map[int64]int64) ([]*storage.Event, error) {
	if len(skip) == 0 {
		return q.Peek(ctx, workflowID, topic, limit)
	}
	// most of the events skip holds are reserved already, which the read
	// passes over: it stops at limit others, not at limit+len(skip) rows
	return q.PeekSkipping(ctx, workflowID, topic, limit, len(skip), skipping(skip))
}

// skipping is skip as the storage's peeks take it; nil when it is empty.
func skipping(skip map[int64]int64) func(id int64) bool {
	if len(skip) == 0 {
		return nil
	}
	return func(id int64) bool { _, ok := skip[id]; return ok }
}

// Prefetch is what the consumer's peeks would find now, for its prepare
// phase to start with (sandbox.Prefetcher): read in the scheduler step's
// snapshot when the step could (prefetched), else now.
func (h *host) Prefetch(ctx context.Context, depth int) (map[string][]sandbox.Event, error) {
	if h.prefetched != nil && depth == sandbox.PrefetchDepth {
		return h.prefetched, nil
	}
	pre, _, err := prefetchIn(ctx, h.store(), h.wf.ID, h.subscribe, depth, h.claimed())
	return pre, err
}

// prefetchIn is what peeks of depth events of each topic find through q,
// and the ids of those events, by topic and message id.
func prefetchIn(ctx context.Context, q storage.Q, workflowID int64, topics []string, depth int, skip map[int64]int64) (map[string][]sandbox.Event, pendingIDs, error) {
	var first []*storage.Event
	if len(topics) > 0 {
		var err error
		if first, err = pendingIn(ctx, q, workflowID, topics[0], depth, skip); err != nil {
			return nil, nil, err
		}
	}
	return prefetchFrom(ctx, q, workflowID, topics, first, depth, skip)
}

// prefetchFrom is prefetchIn with the first topic's events read already:
// first (storage.Q.StateAndPeek reads them with the consumer's state: of
// each, only what is handed on here).
func prefetchFrom(ctx context.Context, q storage.Q, workflowID int64, topics []string, first []*storage.Event, depth int, skip map[int64]int64) (map[string][]sandbox.Event, pendingIDs, error) {
	out := make(map[string][]sandbox.Event, len(topics))
	ids := make(pendingIDs, len(topics))
	for i, t := range topics {
		evs := first
		if i > 0 {
			var err error
			if evs, err = pendingIn(ctx, q, workflowID, t, depth, skip); err != nil {
				return nil, nil, err
			}
		}
		out[t] = scriptEvents(evs)
		ids[t] = make(map[string]int64, len(evs))
		for _, ev := range evs {
			ids[t][ev.MessageID] = ev.ID
		}
	}
	return out, ids, nil
}

// pendingIDs are events found pending and unreserved in one read, by topic
// and message id: their ids.
type pendingIDs map[string]map[string]int64

func (h *host) GetByIDs(ctx context.Context, topic string, ids []string) ([]sandbox.Event, error) {
	if !slices.Contains(h.subscribe, topic) {
		return nil, connectors.Errorf(connectors.Logic, "ctx.getByIds: topic %q is not in this consumer's subscribe %v", topic, h.subscribe)
	}
	evs, err := h.store().EventsByMessageIDs(ctx, h.wf.ID, topic, ids)
	if err != nil {
		return nil, err
	}
	return scriptEvents(evs), nil
}

func (h *host) Log(level, line string) { h.tr.log(h.phaseName(), level, line) }

func scriptEvents(evs []*storage.Event) []sandbox.Event {
	out := make([]sandbox.Event, len(evs))
	for i, e := range evs {
		out[i] = sandbox.Event{MessageID: e.MessageID, Payload: e.Payload, CreatedAt: e.CreatedAt}
	}
	return out
}
