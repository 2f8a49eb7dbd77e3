package storage

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestStepReads: the step's one statement reads what WorkflowByID,
// Schedules and ActiveRunRefs read one by one — the workflow's row, every
// schedule by handler, only its active runs oldest first, nothing of
// another workflow — and no workflow is ErrNotFound.
func TestStepReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	later := now.Add(time.Hour)
	var wid, other int64
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if wid, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
			return err
		}
		if other, err = tx.CreateWorkflow(ctx, "other", now); err != nil {
			return err
		}
		for _, s := range []struct {
			wf     int64
			h, typ string
		}{{wid, "zeta", "consumer"}, {wid, "alpha", "producer"}, {wid, "mid", "consumer"}, {other, "x", "consumer"}} {
			if err := tx.EnsureSchedule(ctx, s.wf, s.h, s.typ); err != nil {
				return err
			}
		}
		if err := tx.SetNextRun(ctx, wid, "alpha", &later); err != nil {
			return err
		}
		if err := tx.SetWake(ctx, wid, "zeta", &now); err != nil {
			return err
		}
		if err := tx.MarkUnrun(ctx, wid, "mid"); err != nil {
			return err
		}
		for _, r := range []*Run{
			{WorkflowID: wid, Handler: "zeta", Status: RunActive},
			{WorkflowID: wid, Handler: "mid", Status: RunCommitted, ClosedAt: &now},
			{WorkflowID: other, Handler: "x", Status: RunActive},
			{WorkflowID: wid, Handler: "mid", Status: RunPausedTransient},
			{WorkflowID: wid, Handler: "mid", Status: RunActive},
		} {
			r.HandlerType, r.ScriptVersion, r.Trigger, r.Phase, r.CreatedAt, r.UpdatedAt = "consumer", 1, "event", PhasePreparing, now, now
			if _, err := tx.InsertRun(ctx, r); err != nil {
				return err
			}
		}
		return tx.SetBlock(ctx, wid, "", 0, Block{Kind: "transient", Reason: "down", RunID: 1, RetryAt: &later}, now)
	}); err != nil {
		t.Fatal(err)
	}
	q := db.Read()
	got, err := q.StepReads(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	w, err := q.WorkflowByID(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	scheds, err := q.Schedules(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	active, err := q.ActiveRunRefs(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	if w.BlockKind == "" || w.RetryAt == nil || len(scheds) != 3 || len(active) != 2 {
		t.Fatalf("the fixture: %+v, %+v, %+v", w, scheds, active)
	}
	if want := (StepReads{Workflow: w, Schedules: scheds, Active: active}); !reflect.DeepEqual(got, want) {
		t.Fatalf("StepReads =\n%+v %+v %+v\nwant\n%+v %+v %+v", got.Workflow, got.Schedules, got.Active, want.Workflow, want.Schedules, want.Active)
	}
	if _, err := q.StepReads(ctx, other+100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("StepReads of no workflow: %v, want ErrNotFound", err)
	}
	// each branch through its index, the runs' from runs_open alone
	plan, err := queryPlan(ctx, db.r, stepReads, wid)
	if err != nil || !strings.Contains(strings.Join(plan, "\n"), "COVERING INDEX runs_open") {
		t.Fatalf("StepReads' plan = %q, %v; want the covering index runs_open", plan, err)
	}
	for _, p := range plan {
		if strings.HasPrefix(p, "SCAN") || strings.Contains(p, "TEMP B-TREE") {
			t.Fatalf("StepReads' plan = %q: %q", plan, p)
		}
	}
}

// TestCallReads: a call's one statement reads the workflow's status and
// block and its grants as WorkflowByID and Grants do, nothing of another
// workflow's; no workflow is ErrNotFound.
func TestCallReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var wid, other int64
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if wid, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
			return err
		}
		if other, err = tx.CreateWorkflow(ctx, "other", now); err != nil {
			return err
		}
		if err := tx.SetWorkflowStatus(ctx, wid, "active", "paused", now); err != nil {
			return err
		}
		if err := tx.SetBlock(ctx, wid, "", 0, Block{Kind: "permission", Reason: "asked"}, now); err != nil {
			return err
		}
		for _, g := range []Grant{
			{WorkflowID: wid, Capability: "http.request", Scope: "b.example", Mode: "ask", DailyLimit: 3},
			{WorkflowID: other, Capability: "http.request", Mode: "allow"},
			{WorkflowID: wid, Capability: "http.request", Mode: "allow"},
			{WorkflowID: wid, Capability: "gate.post", Scope: "x", Mode: "deny"},
		} {
			if err := tx.PutGrant(ctx, g, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q := db.Read()
	got, err := q.CallReads(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	w, err := q.WorkflowByID(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := q.Grants(ctx, wid)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != "paused" || w.BlockKind != "permission" || len(grants) != 3 {
		t.Fatalf("the fixture: %+v, %+v", w, grants)
	}
	if want := (CallReads{Status: w.Status, BlockKind: w.BlockKind, Grants: grants}); !reflect.DeepEqual(got, want) {
		t.Fatalf("CallReads = %+v, want %+v", got, want)
	}
	if got, err := q.CallReads(ctx, other); err != nil || got.Status != "active" || got.BlockKind != "" || len(got.Grants) != 1 {
		t.Fatalf("CallReads of the other workflow = %+v, %v", got, err)
	}
	if _, err := q.CallReads(ctx, other+100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("CallReads of no workflow: %v, want ErrNotFound", err)
	}
	plan, err := queryPlan(ctx, db.r, callReads, wid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan {
		if strings.HasPrefix(p, "SCAN") || strings.Contains(p, "TEMP B-TREE") {
			t.Fatalf("CallReads' plan = %q: %q", plan, p)
		}
	}
}

// TestStateAndPeek: the consumer's state and the topic's peek, read in
// one statement, are what HandlerState and PeekSkipping read: the state
// or nil, the first limit pending unreserved events of the topic oldest
// first less those skip names (their ids, message ids, payloads and
// creation times) — for a handler with a state and one without, and with
// nothing to skip.
func TestStateAndPeek(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var wid int64
	var ids []int64
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if wid, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
			return err
		}
		for _, topic := range []string{"t", "u"} {
			if err := tx.EnsureTopic(ctx, wid, topic); err != nil {
				return err
			}
		}
		run := &Run{WorkflowID: wid, Handler: "c", HandlerType: "consumer", ScriptVersion: 1, Trigger: "event",
			Phase: PhasePreparing, Status: RunActive, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.InsertRun(ctx, run); err != nil {
			return err
		}
		for i := range 12 {
			topic := []string{"t", "u", "t"}[i%3]
			id, err := tx.PublishEvent(ctx, wid, topic, strings.Repeat("m", i+1), []byte(`{"i":1}`), run.ID, nil, now)
			if err != nil {
				return err
			}
			if topic == "t" {
				ids = append(ids, id)
			}
		}
		if err := tx.Reserve(ctx, wid, run.ID, ids[1:2], now); err != nil {
			return err
		}
		return tx.SetHandlerState(ctx, wid, "c", []byte(`{"n":7}`), now)
	}); err != nil {
		t.Fatal(err)
	}
	q := db.Read()
	skip := func(id int64) bool { return id == ids[2] || id == ids[5] }
	for _, c := range []struct {
		handler         string
		limit, skipping int
		skip            func(int64) bool
	}{{"c", 3, 2, skip}, {"c", 8, 2, skip}, {"none", 2, 0, nil}, {"c", 20, 0, nil}} {
		state, evs, err := q.StateAndPeek(ctx, wid, c.handler, "t", c.limit, c.skipping, c.skip)
		if err != nil {
			t.Fatal(err)
		}
		wantState, err := q.HandlerState(ctx, wid, c.handler)
		if err != nil {
			t.Fatal(err)
		}
		noSkip := c.skip
		if noSkip == nil {
			noSkip = func(int64) bool { return false }
		}
		want, err := q.PeekSkipping(ctx, wid, "t", c.limit, c.skipping, noSkip)
		if err != nil {
			t.Fatal(err)
		}
		if (c.handler == "c") != (wantState != nil) || len(want) == 0 {
			t.Fatalf("the fixture: state %q, events %d", wantState, len(want))
		}
		for _, e := range want { // what StateAndPeek reads of an event, and what its query fixes
			*e = Event{ID: e.ID, WorkflowID: e.WorkflowID, Topic: e.Topic, Status: e.Status, MessageID: e.MessageID, Payload: e.Payload, CreatedAt: e.CreatedAt}
		}
		if !reflect.DeepEqual(state, wantState) || !reflect.DeepEqual(evs, want) {
			t.Errorf("StateAndPeek(%s, %d, %d) = %q, %v; want %q, %v", c.handler, c.limit, c.skipping, state, evIDs(evs), wantState, evIDs(want))
		}
	}
	if n, err := db.TemporaryBTrees(ctx, stateAndPeek); err != nil || n != 0 {
		t.Fatalf("StateAndPeek builds %d temporary b-trees, %v; want none", n, err)
	}
}

func evIDs(evs []*Event) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// TestInputIDByKey: the producer's look-up finds the id an input was stored with,
// ErrNotFound for a key not registered, from the key's index alone.
func TestInputIDByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTemp(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	var wid int64
	if err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if wid, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
			return err
		}
		for i, ext := range []string{"a", "b"} {
			if err := tx.InsertInput(ctx, &Input{ID: int64(40 + i), WorkflowID: wid, Source: "files", Type: "file", ExternalID: ext, Title: ext, CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q := db.Read()
	for i, ext := range []string{"a", "b"} {
		if id, err := q.InputIDByKey(ctx, wid, "files", "file", ext); err != nil || id != int64(40+i) {
			t.Errorf("InputIDByKey(%s) = %d, %v; want %d", ext, id, err, 40+i)
		}
	}
	for _, k := range [][3]string{{"files", "file", "c"}, {"files", "dir", "a"}, {"mail", "file", "a"}} {
		if id, err := q.InputIDByKey(ctx, wid, k[0], k[1], k[2]); !errors.Is(err, ErrNotFound) {
			t.Errorf("InputIDByKey(%v) = %d, %v; want ErrNotFound", k, id, err)
		}
	}
	if _, err := q.InputIDByKey(ctx, wid+1, "files", "file", "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("another workflow's input found: %v", err)
	}
	plan, err := queryPlan(ctx, db.r, inputIDByKey, wid, "files", "file", "a")
	if err != nil || len(plan) != 1 || !strings.Contains(plan[0], "COVERING INDEX") {
		t.Fatalf("InputIDByKey's plan = %q, %v; want the key's index alone", plan, err)
	}
}
