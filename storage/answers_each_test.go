package storage

import (
	"context"
	"testing"
	"time"
)

// TestAnswersOfEach: the answers of many subjects come back by subject,
// oldest first, those of another kind of subject left out, past the ids
// one query binds.
func TestAnswersOfEach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWithWorkflow(t)
	n := answersPerQuery + 3
	if err := db.Write(ctx, func(tx *Tx) error {
		for id := int64(1); id <= int64(n); id++ {
			for attempt, answer := range []string{"try-again", "not-happened"} {
				if err := tx.AddAnswer(ctx, AnswerRecord{WorkflowID: 1, Subject: "mutation", SubjectID: id, Answer: answer,
					AnsweredBy: "user", Attempt: attempt + 1, CreatedAt: time.UnixMilli(id)}); err != nil {
					return err
				}
			}
		}
		return tx.AddAnswer(ctx, AnswerRecord{WorkflowID: 1, Subject: "event", SubjectID: 1, Answer: "skip", AnsweredBy: "user",
			CreatedAt: time.UnixMilli(1)})
	}); err != nil {
		t.Fatal(err)
	}
	ids := []int64{int64(n + 1)} // none answered
	for id := int64(n); id >= 1; id-- {
		ids = append(ids, id)
	}
	got, err := db.Read().AnswersOfEach(ctx, "mutation", ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("answers of %d subjects, want %d", len(got), n)
	}
	for _, id := range []int64{1, answersPerQuery, int64(n)} {
		as := got[id]
		if len(as) != 2 || as[0].Answer != "try-again" || as[0].Attempt != 1 || as[1].Answer != "not-happened" || as[1].Attempt != 2 {
			t.Errorf("mutation %d: %+v, want try-again (attempt 1) then not-happened (attempt 2)", id, as)
		}
	}
	if none, err := db.Read().AnswersOfEach(ctx, "mutation", nil); err != nil || len(none) != 0 {
		t.Errorf("no ids: %v, %v; want none", none, err)
	}
}
