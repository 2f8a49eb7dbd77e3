package engine

import (
	"context"

	"keep/engine/api"
	"keep/storage"
)

// mutationAnswer is one answer about a call as keep mutations and the
// Attention cards both show it: the same answer reads the same in each.
func mutationAnswer(a storage.AnswerRecord) api.AnswerView {
	return api.AnswerView{Answer: a.Answer, AnsweredBy: a.AnsweredBy, At: a.CreatedAt, Attempt: a.Attempt}
}

// openAnswers is what was answered about each open mutation, by id, read
// in one query for the whole Attention list rather than one per card.
func openAnswers(ctx context.Context, q storage.Q, open []*storage.Mutation) (map[int64][]api.AnswerView, error) {
	ids := make([]int64, len(open))
	for i, m := range open {
		ids[i] = m.ID
	}
	records, err := q.AnswersOfEach(ctx, "mutation", ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]api.AnswerView, len(records))
	for id, as := range records {
		for _, a := range as {
			out[id] = append(out[id], mutationAnswer(a))
		}
	}
	return out, nil
}
