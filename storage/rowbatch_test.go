package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rowsDump is every row of query, one line each.
func rowsDump(t *testing.T, db *DB, query string) []string {
	t.Helper()
	rows, err := db.r.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return out
}

// TestRowBatchesAreEachRowInTurn: InsertInputs and PublishAll leave the
// database, and answer News, exactly as InsertInput and Publish called for
// each in turn — over two full statements of rows and a rest, with a key
// registered twice, an event published twice in one statement's rows and
// once across two, events already there (one consumed, one pending with
// the same payload) and events with two causes.
func TestRowBatchesAreEachRowInTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	later := now.Add(time.Minute)
	n := 2*rowsPerStatement + 7
	var ins []*Input
	for i := range n {
		id := fmt.Sprintf("f%d", i)
		if i == 70 {
			id = "f3" // registered again: its title changes
		}
		ins = append(ins, &Input{ID: int64(100 + i), Source: "files", Type: "file", ExternalID: id, Title: fmt.Sprint("File ", i), CreatedAt: later})
	}
	var pubs []Publication
	for i := range n {
		p := Publication{Topic: "t", MessageID: fmt.Sprintf("m%d", i), Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Causes: []int64{int64(100 + i)}}
		switch i {
		case 5:
			p.MessageID = "m1" // twice within the first statement's rows
		case 80:
			p.MessageID = "m2" // again in the second
		case 9:
			p.Causes = append(p.Causes, 101)
		case 70:
			p.Causes = []int64{103} // f3's: its second registration kept the first row
		case n - 1:
			p.Topic, p.Payload = "u", nil
		}
		pubs = append(pubs, p)
	}
	setup := func(t *testing.T) (*DB, int64) {
		db := openTemp(t)
		var wf int64
		if err := db.Write(ctx, func(tx *Tx) (err error) {
			if wf, err = tx.CreateWorkflow(ctx, "w", now); err != nil {
				return err
			}
			for _, topic := range []string{"t", "u"} {
				if err := tx.EnsureTopic(ctx, wf, topic); err != nil {
					return err
				}
			}
			// there before: m10 consumed, m11 pending with the payload it is
			// published with again, m12 pending with another
			if err := tx.InsertInput(ctx, &Input{ID: 1, WorkflowID: wf, Source: "files", Type: "file", ExternalID: "old", Title: "Old", CreatedAt: now}); err != nil {
				return err
			}
			for _, m := range []struct{ id, payload string }{{"m10", `{"n":10}`}, {"m11", `{"n":11}`}, {"m12", `{"n":0}`}} {
				if _, err := tx.PublishEvent(ctx, wf, "t", m.id, json.RawMessage(m.payload), 0, []int64{1}, now); err != nil {
					return err
				}
			}
			_, err = tx.exec(ctx, `UPDATE events SET status = 'consumed' WHERE message_id = 'm10'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, in := range ins {
			in.WorkflowID = wf
		}
		return db, wf
	}
	oneByOne, wf1 := setup(t)
	news1 := make([]bool, n)
	if err := oneByOne.Write(ctx, func(tx *Tx) error {
		for _, in := range ins {
			if err := tx.InsertInput(ctx, in); err != nil {
				return err
			}
		}
		for i, p := range pubs {
			payload := p.Payload
			if len(payload) == 0 {
				payload = json.RawMessage("null")
			}
			var err error
			if _, news1[i], err = tx.Publish(ctx, wf1, p.Topic, p.MessageID, payload, 0, p.Causes, later); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	batched, wf2 := setup(t)
	if wf1 != wf2 {
		t.Fatalf("workflow ids %d and %d", wf1, wf2)
	}
	if err := batched.Write(ctx, func(tx *Tx) error {
		if err := tx.InsertInputs(ctx, ins); err != nil {
			return err
		}
		return tx.PublishAll(ctx, wf2, pubs, 0, later)
	}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT ` + inputCols + ` FROM inputs ORDER BY id`,
		`SELECT ` + eventCols + ` FROM events ORDER BY id`,
		`SELECT event_id, input_id FROM event_causes ORDER BY event_id, input_id`,
	} {
		want, got := rowsDump(t, oneByOne, q), rowsDump(t, batched, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nbatched  %s\none by one %s", q, strings.Join(got, "\n         "), strings.Join(want, "\n           "))
		}
	}
	for i, p := range pubs {
		if p.News != news1[i] {
			t.Errorf("publication %d (%s): news %v batched, %v one by one", i, p.MessageID, p.News, news1[i])
		}
	}
	if !news1[0] || news1[10] || news1[11] || !news1[12] {
		t.Errorf("news one by one: m0 %v m10 %v m11 %v m12 %v, want a new, a consumed, an unchanged and a changed event", news1[0], news1[10], news1[11], news1[12])
	}
}
