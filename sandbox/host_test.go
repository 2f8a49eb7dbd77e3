package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingHost is the engine's side of a run, reduced to recording calls.
type recordingHost struct {
	mu        sync.Mutex
	logs      []string // "level: line"
	reads     []string // "connector.method <params JSON>"
	inputs    []InputRequest
	published []publishCall
	events    map[string][]Event // topic → events for peek and getByIds
	result    any                // what Read returns
	err       error              // when set, every method but Log returns it
	block     bool               // Read blocks until its ctx is done
}

type publishCall struct {
	Topics []string
	Req    PublishRequest
}

var _ Host = (*recordingHost)(nil)

func (h *recordingHost) Read(ctx context.Context, connector, method string, params map[string]any) (any, error) {
	h.mu.Lock()
	b, _ := json.Marshal(params)
	h.reads = append(h.reads, connector+"."+method+" "+string(b))
	block, err, res := h.block, h.err, h.result
	h.mu.Unlock()
	if block {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(testWait):
			return nil, errors.New("recordingHost: the blocked Read was never cancelled")
		}
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		return []any{}, nil
	}
	return res, nil
}

func (h *recordingHost) RegisterInput(_ context.Context, in InputRequest) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	h.inputs = append(h.inputs, in)
	return nil
}

func (h *recordingHost) Publish(_ context.Context, topics []string, ev PublishRequest) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	h.published = append(h.published, publishCall{topics, ev})
	return nil
}

func (h *recordingHost) Peek(_ context.Context, topic string, limit int) ([]Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	evs := h.events[topic]
	if len(evs) > limit {
		evs = evs[:limit]
	}
	return evs, nil
}

func (h *recordingHost) GetByIDs(_ context.Context, topic string, ids []string) ([]Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	var out []Event
	for _, e := range h.events[topic] {
		for _, id := range ids {
			if e.MessageID == id {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func (h *recordingHost) Log(level, line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, level+": "+line)
}

func (h *recordingHost) logged() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.logs...)
}

// testMethods are the connector methods every test script may call.
// testMethods are the tests' own connectors: their Args are the fields
// the tests' scripts pass, as validate refuses any other.
var testMethods = []MethodSpec{
	{Connector: "files", Method: "list", Kind: KindRead, Args: args("dir", "glob")},
	{Connector: "files", Method: "read", Kind: KindReadByID, Args: args("path")},
	{Connector: "files", Method: "write", Kind: KindMutate, Args: args("path", "content", "text", "n")},
	{Connector: "gmail", Method: "search", Kind: KindRead, Args: args("after", "limit")},
	{Connector: "sheets", Method: "appendRow", Kind: KindMutate, Args: args("spreadsheetId", "values")},
}

// args declares fields of any type.
func args(names ...string) []ArgSpec {
	out := make([]ArgSpec, len(names))
	for i, n := range names {
		out[i] = ArgSpec{Name: n, Type: "any"}
	}
	return out
}

// handlers fills a one-producer, one-consumer workflow with handler bodies.
// Topic "a" is published by producer p and read by consumer c, which
// publishes "b".
type handlers struct{ producer, prepare, mutate, next string }

func (h handlers) source() string {
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	return fmt.Sprintf(`export default Keep.workflow({
  name: "t",
  topics: { "a": {}, "b": {} },
  producers: {
    p: {
      publishes: ["a"],
      schedule: { interval: "1m" },
      handler: async (ctx, state) => {
%s
      },
    },
  },
  consumers: {
    c: Keep.consumer({
      subscribe: ["a"],
      publishes: ["b"],
      async prepare(ctx, state) {
%s
      },
      async mutate(ctx, prepared) {
%s
      },
      async next(ctx, prepared, mutationResult) {
%s
      },
    }),
  },
});
`, or(h.producer, "return state;"), or(h.prepare, "return { reservations: [], data: {} };"), h.mutate, h.next)
}

func load(t testing.TB, h handlers) *Script {
	t.Helper()
	s, err := Load("t.js", []byte(h.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatalf("load: %v\n%s", err, numbered(h.source()))
	}
	return s
}

// loadLocal loads a script in this process, for the tests of what happens
// inside a worker (the runtime pool, the watchdog, the bare program): its
// runs do not go to a worker process.
func loadLocal(t testing.TB, h handlers) *Script {
	t.Helper()
	s, err := loadHere("t.js", []byte(h.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatalf("load: %v\n%s", err, numbered(h.source()))
	}
	return s
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%3d %s\n", i+1, l)
	}
	return b.String()
}

// heavy serialises the tests that grow the heap on purpose: the heap
// watchdog samples the process's heap, so they would trip the limits of
// runs in other tests.
var heavy sync.RWMutex

// invoke runs one phase with test limits; handler is "p" for the producer
// phase, else "c".
func invoke(t testing.TB, s *Script, phase Phase, host Host, lim Limits, args ...json.RawMessage) (*Outcome, error) {
	t.Helper()
	heavy.RLock()
	defer heavy.RUnlock()
	return invokeUnlocked(s, phase, host, lim, args...)
}

func invokeUnlocked(s *Script, phase Phase, host Host, lim Limits, args ...json.RawMessage) (*Outcome, error) {
	inv := Invocation{Handler: "c", Phase: phase, Host: host, Limits: lim}
	arg := func(i int) json.RawMessage {
		if i < len(args) {
			return args[i]
		}
		return nil
	}
	switch phase {
	case PhaseProducer:
		inv.Handler, inv.State = "p", arg(0)
	case PhasePrepare:
		inv.State = arg(0)
	case PhaseMutate:
		inv.Prepared = arg(0)
	case PhaseNext:
		inv.Prepared, inv.MutationResult = arg(0), arg(1)
	}
	return s.Run(context.Background(), inv)
}

// testWait bounds every wait of a test on a channel: a run that never ends
// fails its test instead of hanging the package.
const testWait = 30 * time.Second

func testLimits() Limits {
	l := DefaultLimits()
	l.WallTime = 5 * time.Second
	return l
}
