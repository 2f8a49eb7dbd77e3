package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"keep/engine"
	"keep/engine/api"
)

// stubAPI is an engine.API holding fixed views and recording the calls
// made to it, so the TUI can be tested before and apart from the engine.
type stubAPI struct {
	mu        sync.Mutex
	info      api.Info
	workflows []api.WorkflowView
	inputs    map[string][]api.InputView // by workflow, newest first
	runs      map[string][]api.RunView
	traces    map[string][]api.TraceLine
	attention []api.AttentionItem
	// answers: what was answered about each workflow itself, oldest first
	answers map[string][]api.AnswerView
	calls   []string
	// fail makes every action return this error.
	fail  error
	notes chan api.Notification
	// onApprove, if set, runs inside Approve (to change the views as the
	// engine would).
	onApprove func(s *stubAPI, id string)
}

var _ api.API = (*stubAPI)(nil)

// testNow is the fixed clock every test uses.
var testNow = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func mins(n int) time.Time        { return testNow.Add(-time.Duration(n) * time.Minute) }
func tptr(t time.Time) *time.Time { return &t }

func newStub() *stubAPI {
	s := &stubAPI{
		info:  api.Info{Mode: "in-process", DBPath: "/var/lib/keep/keep.db", PID: 42},
		notes: make(chan api.Notification, 16),
	}
	s.workflows = []api.WorkflowView{
		{ID: "1", Name: "email-to-sheets", Status: "active", State: api.StateNeedsAttention,
			Block:    &api.Block{Kind: "approval", Reason: "waiting for approval"},
			Schedule: "Checks every 5 minutes", NextRun: tptr(testNow.Add(3 * time.Minute)), PendingInputs: 1, Attention: 1, Version: 3},
		{ID: "2", Name: "inbox-archive", Status: "active", State: api.StateIdle,
			Schedule: "Checks hourly", NextRun: tptr(testNow.Add(41 * time.Minute)), Attention: 1, Version: 1},
		{ID: "3", Name: "daily-digest", Status: "paused", State: api.StatePaused,
			Schedule: "Runs on cron 0 9 * * *", NextRun: tptr(testNow.Add(23 * time.Hour))},
	}
	s.inputs = map[string][]api.InputView{
		"email-to-sheets": {
			{InputID: "13", Workflow: "email-to-sheets", Title: `Email from alice@example.com: "Invoice December"`,
				Status: api.InputNeedsAttention, CreatedAt: mins(2), Outputs: []api.OutputView{
					{MutationID: "m7", Title: "Add row for alice@example.com", Status: "awaiting_approval",
						Connector: "sheets", Method: "appendRow",
						Params:  json.RawMessage(`{"sheet":"invoices.csv","values":["alice@example.com","Invoice December"]}`),
						Preview: "invoices.csv ← alice@example.com | Invoice December", UpdatedAt: mins(2)}}},
			{InputID: "12", Workflow: "email-to-sheets", Title: `Email from bob@example.com: "Lunch?"`,
				Status: api.InputDone, CreatedAt: mins(65), Outputs: []api.OutputView{
					{MutationID: "m6", Title: "Add row for bob@example.com", Status: "applied",
						Connector: "sheets", Method: "appendRow", Params: json.RawMessage(`{"sheet":"invoices.csv","values":["bob@example.com","Lunch?"]}`),
						UpdatedAt: mins(64)}}},
			{InputID: "11", Workflow: "email-to-sheets", Title: `Email from carol@example.com: "Newsletter"`,
				Status: api.InputDone, CreatedAt: mins(190)},
			{InputID: "10", Workflow: "email-to-sheets", Title: `Email from dave@example.com: "Receipt"`,
				Status: api.InputPending, Stale: true, CreatedAt: mins(3 * 24 * 60)},
		},
	}
	s.runs = map[string][]api.RunView{
		"email-to-sheets": {
			{ID: "14", Workflow: "email-to-sheets", Handler: "toSheet", HandlerType: "consumer", Phase: "mutating",
				Status: "paused:approval", Trigger: "event", CreatedAt: mins(2)},
			{ID: "13", Workflow: "email-to-sheets", Handler: "toSheet", HandlerType: "consumer", Phase: "emitting",
				Status: "committed", RetryOf: "12", Trigger: "retry", CreatedAt: mins(60)},
			{ID: "12", Workflow: "email-to-sheets", Handler: "toSheet", HandlerType: "consumer", Phase: "next",
				Status: "failed:logic", Error: "TypeError: cannot read property 'from' of undefined at toSheet.js:14",
				Trigger: "event", CreatedAt: mins(62)},
			{ID: "11", Workflow: "email-to-sheets", Handler: "fetchMail", HandlerType: "producer", Phase: "prepare",
				Status: "committed", Trigger: "schedule", CreatedAt: mins(66)},
		},
	}
	s.traces = map[string][]api.TraceLine{
		"12": {
			{At: mins(62), Phase: "prepare", Kind: "call", Connector: "mail", Method: "fetch", Args: `{"id":"<b@example.com>"}`,
				Result: `{"from":"bob@example.com","subject":"Lunch?"}`, DurationMS: 120},
			{At: mins(62), Phase: "next", Kind: "log", Args: "building the row"},
			{At: mins(62), Phase: "next", Kind: "note", Error: "TypeError: cannot read property 'from' of undefined"},
		},
	}
	s.attention = []api.AttentionItem{
		{Kind: api.AttentionApproval, Workflow: "email-to-sheets", ID: "m7", Title: "Add row for alice@example.com",
			Connector: "sheets", Method: "appendRow",
			Params:  json.RawMessage(`{"sheet":"invoices.csv","values":["alice@example.com","Invoice December"]}`),
			Reason:  "sheets.appendRow asks before it runs",
			Inputs:  []string{`Email from alice@example.com: "Invoice December"`},
			Answers: []string{"approve", "approve-always", "reject"}, CreatedAt: mins(2)},
		{Kind: api.AttentionReconciliation, Workflow: "inbox-archive", ID: "m3", Title: "Post summary to #finance",
			Connector: "slack", Method: "post",
			Params:  json.RawMessage(`{"channel":"#finance","text":"3 invoices arrived today"}`),
			Reason:  "the request timed out after it was sent; 3 checks could not confirm it.",
			Check:   "Look in #finance for a summary posted around 09:58.",
			Answers: []string{"try-again", "happened", "not-happened", "skip"}, CreatedAt: mins(10)},
	}
	return s
}

func (s *stubAPI) record(format string, args ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
	return s.fail
}

func (s *stubAPI) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// actions are the recorded calls that change something (reads are noise
// for most tests).
func (s *stubAPI) actions() []string {
	var out []string
	for _, c := range s.Calls() {
		if !strings.HasPrefix(c, "read ") {
			out = append(out, c)
		}
	}
	return out
}

func (s *stubAPI) Workflows(ctx context.Context) ([]api.WorkflowView, error) {
	s.record("read Workflows")
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.workflows), nil
}

func (s *stubAPI) Workflow(ctx context.Context, name string) (*api.WorkflowDetail, error) {
	s.record("read Workflow %s", name)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.workflows {
		if w.Name == name {
			return &api.WorkflowDetail{WorkflowView: w, Answers: slices.Clone(s.answers[name])}, nil
		}
	}
	return nil, fmt.Errorf("workflow %s: %w", name, engine.ErrNotFound)
}

// fromOldestWords names a page counted from the oldest end in a call's
// record, and adds nothing to one from the newest.
func fromOldestWords(p api.Page) string {
	switch {
	case p.After > 0:
		return fmt.Sprintf(" after=%d", p.After)
	case p.Oldest:
		return " oldest"
	}
	return ""
}

// pageOf applies a Page to a newest-first list the way the engine does.
func pageOf[T any](all []T, id func(T) string, title func(T) string, p api.Page) []T {
	fromOldest := p.Oldest || p.After > 0
	if fromOldest {
		all = slices.Clone(all)
		slices.Reverse(all)
	}
	var out []T
	for _, it := range all {
		n, _ := strconv.ParseInt(id(it), 10, 64)
		if p.Before != 0 && n >= p.Before || n <= p.After {
			continue
		}
		if p.Filter != "" && !strings.Contains(strings.ToLower(title(it)), strings.ToLower(p.Filter)) {
			continue
		}
		out = append(out, it)
		if p.Limit > 0 && len(out) == p.Limit {
			break
		}
	}
	if fromOldest {
		slices.Reverse(out)
	}
	return out
}

func (s *stubAPI) Inputs(ctx context.Context, workflow string, p api.Page) ([]api.InputView, error) {
	s.record("read Inputs %s before=%d limit=%d filter=%q%s", workflow, p.Before, p.Limit, p.Filter, fromOldestWords(p))
	s.mu.Lock()
	defer s.mu.Unlock()
	return pageOf(s.inputs[workflow], func(i api.InputView) string { return i.InputID },
		func(i api.InputView) string { return i.Title }, p), nil
}

func (s *stubAPI) Events(ctx context.Context, workflow string, f api.EventFilter) ([]api.EventView, error) {
	return nil, nil
}

func (s *stubAPI) Runs(ctx context.Context, workflow string, p api.Page) ([]api.RunView, error) {
	s.record("read Runs %s before=%d limit=%d%s", workflow, p.Before, p.Limit, fromOldestWords(p))
	s.mu.Lock()
	defer s.mu.Unlock()
	return pageOf(s.runs[workflow], func(r api.RunView) string { return r.ID },
		func(r api.RunView) string { return r.Handler }, p), nil
}

func (s *stubAPI) Mutations(ctx context.Context, workflow string, status string) ([]api.MutationView, error) {
	return nil, nil
}

func (s *stubAPI) Trace(ctx context.Context, runID string) ([]api.TraceLine, error) {
	s.record("read Trace %s", runID)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.traces[runID], nil
}

func (s *stubAPI) Attention(ctx context.Context) ([]api.AttentionItem, error) {
	s.record("read Attention")
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.attention), nil
}

func (s *stubAPI) Grants(ctx context.Context, workflow string) ([]api.GrantView, error) {
	return nil, nil
}

func (s *stubAPI) Deploy(ctx context.Context, fileName string, src []byte, name string) (*api.DeployResult, error) {
	return nil, s.record("Deploy %s", fileName)
}

func (s *stubAPI) RunNow(ctx context.Context, workflow string) error {
	return s.record("RunNow %s", workflow)
}
func (s *stubAPI) Pause(ctx context.Context, workflow string) error {
	return s.record("Pause %s", workflow)
}
func (s *stubAPI) Resume(ctx context.Context, workflow string) error {
	return s.record("Resume %s", workflow)
}
func (s *stubAPI) Retry(ctx context.Context, workflow string) error {
	return s.record("Retry %s", workflow)
}

func (s *stubAPI) Approve(ctx context.Context, mutationID string, always bool) error {
	err := s.record("Approve %s always=%v", mutationID, always)
	if err == nil && s.onApprove != nil {
		s.mu.Lock()
		s.onApprove(s, mutationID)
		s.mu.Unlock()
	}
	return err
}

func (s *stubAPI) Reject(ctx context.Context, mutationID string) error {
	return s.record("Reject %s", mutationID)
}

func (s *stubAPI) Resolve(ctx context.Context, mutationID string, answer api.Answer) error {
	return s.record("Resolve %s %s", mutationID, answer)
}

func (s *stubAPI) SkipEvents(ctx context.Context, eventIDs []string) error {
	return s.record("SkipEvents %v", eventIDs)
}

func (s *stubAPI) SkipInput(ctx context.Context, inputID string) error {
	return s.record("SkipInput %s", inputID)
}

func (s *stubAPI) ApproveWide(ctx context.Context, mutationID string) error {
	return s.record("ApproveWide %s", mutationID)
}

func (s *stubAPI) GrantReleasing(ctx context.Context, workflow string, g api.GrantView) (int, error) {
	return 0, s.record("Grant %s %s", workflow, g.Capability)
}

func (s *stubAPI) Grant(ctx context.Context, workflow string, g api.GrantView) error {
	return s.record("Grant %s %s", workflow, g.Capability)
}

func (s *stubAPI) Subscribe() (<-chan api.Notification, func()) { return s.notes, func() {} }

func (s *stubAPI) SubscribeScreen() (<-chan api.Notification, func()) { return s.notes, func() {} }

func (s *stubAPI) Info() api.Info { return s.info }

// bigAPI serves 100,000 inputs made on demand, one page at a time, so a
// benchmark measures the TUI and not the building of a huge slice.
type bigAPI struct {
	stubAPI
	n     int64
	pages int
}

func newBigAPI(n int64) *bigAPI {
	b := &bigAPI{stubAPI: *newStub(), n: n}
	b.workflows = b.workflows[:1]
	return b
}

func (b *bigAPI) Inputs(ctx context.Context, workflow string, p api.Page) ([]api.InputView, error) {
	b.pages++
	top := b.n
	if p.Before != 0 {
		top = p.Before - 1
	}
	if p.Oldest || p.After > 0 {
		top = min(top, p.After+int64(p.Limit))
	}
	out := make([]api.InputView, 0, p.Limit)
	for id := top; id > p.After && len(out) < p.Limit; id-- {
		in := api.InputView{InputID: strconv.FormatInt(id, 10), Workflow: workflow,
			Title:  fmt.Sprintf("Email #%d from someone@example.com: \"Invoice %d\"", id, id),
			Status: api.InputDone, CreatedAt: testNow.Add(-time.Duration(b.n-id) * time.Minute)}
		if id%3 == 0 {
			in.Outputs = []api.OutputView{{MutationID: "m" + in.InputID, Title: "Add row", Status: "applied",
				Connector: "sheets", Method: "appendRow", UpdatedAt: in.CreatedAt}}
		}
		out = append(out, in)
	}
	return out, nil
}

func (b *bigAPI) Runs(ctx context.Context, workflow string, p api.Page) ([]api.RunView, error) {
	return nil, nil
}
