package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// A statement costs the driver about as much as the small rows it writes
// (its arguments bound one by one, its step, its reset, its result), and a
// producer's commit of a folder of 1,000 new files ran 3,000 of them: an
// input, an event and a cause each. Runs of rowsPerStatement rows go in one
// statement of that many rows instead; what is left over goes row by row,
// so each table has one statement text of each kind to cache.
const rowsPerStatement = 64

// rowsOf repeats a statement's row of n placeholders rowsPerStatement
// times, after head and before tail.
func rowsOf(head string, n int, tail string) func() string {
	return sync.OnceValue(func() string {
		row := "(" + strings.Repeat("?, ", n-1) + "?)"
		return head + strings.Repeat(row+", ", rowsPerStatement-1) + row + tail
	})
}

// InsertInputs is InsertInput for each of ins, in order.
func (tx *Tx) InsertInputs(ctx context.Context, ins []*Input) error {
	full := len(ins) - len(ins)%rowsPerStatement
	args := make([]any, 0, 8*rowsPerStatement)
	for i := 0; i < full; i += rowsPerStatement {
		args = args[:0]
		for _, in := range ins[i : i+rowsPerStatement] {
			args = append(args, in.ID, in.WorkflowID, in.Source, in.Type, in.ExternalID, in.Title, nullID(in.CreatedBy), ms(in.CreatedAt))
		}
		if _, err := tx.exec(ctx, insertInputRows(), args...); err != nil {
			return err
		}
	}
	for _, in := range ins[full:] {
		if err := tx.InsertInput(ctx, in); err != nil {
			return err
		}
	}
	return nil
}

var insertInputRows = rowsOf(`INSERT INTO inputs(id, workflow_id, source, type, external_id, title, created_by, created_at) VALUES `, 8,
	` ON CONFLICT(workflow_id, source, type, external_id) DO UPDATE SET title = excluded.title`)

// Publication is one event of a run's commit: Publish's arguments, and
// News, what Publish answers, once PublishAll has run.
type Publication struct {
	Topic, MessageID string
	Payload          json.RawMessage
	Causes           []int64
	News             bool
}

// payload is p's, or null when it has none.
func (p *Publication) payload() json.RawMessage {
	if len(p.Payload) == 0 {
		return json.RawMessage("null")
	}
	return p.Payload
}

// PublishAll is Publish for each of ps, in order, with the run's id and
// time, setting each one's News.
func (tx *Tx) PublishAll(ctx context.Context, workflowID int64, ps []Publication, runID int64, now time.Time) error {
	full := len(ps) - len(ps)%rowsPerStatement
	for i := 0; i < full; i += rowsPerStatement {
		if err := tx.publishRows(ctx, workflowID, ps[i:i+rowsPerStatement], runID, now); err != nil {
			return err
		}
	}
	for i := range ps[full:] {
		p := &ps[full+i]
		var err error
		if _, p.News, err = tx.Publish(ctx, workflowID, p.Topic, p.MessageID, p.payload(), runID, p.Causes, now); err != nil {
			return err
		}
	}
	return nil
}

// publishRows publishes rowsPerStatement publications in one statement, and
// their causes in as few as they fill. The rows come back in no order
// SQLite promises: each is matched to its publications by topic and
// message id. One published twice in the run is one row, updated by the
// second, as two Publish calls leave it; both are told what the row became.
func (tx *Tx) publishRows(ctx context.Context, workflowID int64, ps []Publication, runID int64, now time.Time) error {
	args := make([]any, 0, 7*len(ps))
	for _, p := range ps {
		args = append(args, workflowID, p.Topic, p.MessageID, string(p.payload()), nullID(runID), ms(now), ms(now))
	}
	rows, err := tx.q.QueryContext(ctx, publishRowsQuery(), args...)
	if err != nil {
		return fmt.Errorf("publish to %s: %w", ps[0].Topic, err)
	}
	type answer struct {
		id   int64
		news bool
	}
	got := make(map[[2]string]answer, len(ps))
	for rows.Next() {
		var topic, messageID, status string
		var id, updated int64
		if err := rows.Scan(&id, &topic, &messageID, &status, &updated); err != nil {
			rows.Close()
			return fmt.Errorf("publish to %s: %w", ps[0].Topic, err)
		}
		got[[2]string{topic, messageID}] = answer{id, status == string(EventPending) && updated == ms(now)}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("publish to %s: %w", ps[0].Topic, err)
	}
	var causes [][2]int64
	for i := range ps {
		p := &ps[i]
		a, ok := got[[2]string{p.Topic, p.MessageID}]
		if !ok {
			return fmt.Errorf("publish to %s: message %q came back without its row", p.Topic, p.MessageID)
		}
		p.News = a.news
		for _, in := range p.Causes {
			causes = append(causes, [2]int64{a.id, in})
		}
	}
	return tx.insertCauses(ctx, causes)
}

var publishRowsQuery = rowsOf(`INSERT INTO events(workflow_id, topic, message_id, payload, created_by, created_at, updated_at) VALUES `, 7,
	` ON CONFLICT(workflow_id, topic, message_id) DO UPDATE SET payload = excluded.payload,
			updated_at = CASE WHEN events.payload IS excluded.payload THEN events.updated_at ELSE excluded.updated_at END
		RETURNING id, topic, message_id, status, updated_at`)

// insertCauses adds each (event, input) pair to the events' causes.
func (tx *Tx) insertCauses(ctx context.Context, causes [][2]int64) error {
	full := len(causes) - len(causes)%rowsPerStatement
	args := make([]any, 0, 2*rowsPerStatement)
	for i := 0; i < full; i += rowsPerStatement {
		args = args[:0]
		for _, c := range causes[i : i+rowsPerStatement] {
			args = append(args, c[0], c[1])
		}
		if _, err := tx.exec(ctx, insertCauseRows(), args...); err != nil {
			return fmt.Errorf("publish: cause: %w", err)
		}
	}
	for _, c := range causes[full:] {
		if _, err := tx.exec(ctx, insertCause, c[0], c[1]); err != nil {
			return fmt.Errorf("publish: cause: %w", err)
		}
	}
	return nil
}

const insertCause = `INSERT INTO event_causes(event_id, input_id) VALUES (?, ?) ON CONFLICT DO NOTHING`

var insertCauseRows = rowsOf(`INSERT INTO event_causes(event_id, input_id) VALUES `, 2, ` ON CONFLICT DO NOTHING`)
