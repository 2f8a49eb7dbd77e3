package storage

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
)

// TestHistoryIsAppendOnly: the history tables refuse an UPDATE or a
// DELETE from anyone, keep or not: here plain SQL on the file, with no
// storage code in the way. Each refusal says which history it protects.
func TestHistoryIsAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := copyFixture(t)
	db, err := Open(ctx, Opts{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	// the fixture holds reservations and event causes; the rest is added
	now := time.Now()
	if err := db.Write(ctx, func(tx *Tx) error {
		if err := tx.AddAnswer(ctx, AnswerRecord{WorkflowID: 1, Subject: "mutation", SubjectID: 5, Answer: "approve",
			AnsweredBy: "user", CreatedAt: now}); err != nil {
			return err
		}
		id, err := tx.AddProposal(ctx, Proposal{WorkflowID: 1, WorkflowName: "notes-to-csv", BaseVersion: 1, Origin: "repair",
			FileName: "notes.js", Source: "src", RunID: 5, CreatedAt: now})
		if err != nil {
			return err
		}
		return tx.DecideProposal(ctx, id, "rejected", "user", "", 0, now)
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	plain, err := sql.Open("sqlite", FileURI(path)+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, c := range []struct{ table, set, says string }{
		{"reservations", "created_at = 0", "reservations are append-only"},
		{"answers", "answer = 'reject'", "answers are append-only"},
		{"event_causes", "input_id = input_id", "event causes are append-only"},
		{"proposal_decisions", "decision = 'accepted'", "proposal decisions are append-only"},
		{"proposals", "source = 'other'", "proposals are append-only"},
	} {
		var n int
		if err := plain.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+c.table).Scan(&n); err != nil || n == 0 {
			t.Fatalf("%s: %d rows (%v): a trigger fires per row, the test needs one", c.table, n, err)
		}
		for _, stmt := range []string{`UPDATE ` + c.table + ` SET ` + c.set, `DELETE FROM ` + c.table} {
			if _, err := plain.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s: %v, want refused: %q", stmt, err, c.says)
			}
		}
		var after int
		if err := plain.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+c.table).Scan(&after); err != nil || after != n {
			t.Errorf("%s: %d rows before, %d after (%v)", c.table, n, after, err)
		}
	}
}
