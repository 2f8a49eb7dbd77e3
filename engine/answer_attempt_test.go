package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"keep/engine/api"
	"keep/engine/config"
)

// reconciliationItem is the attention card of push's one uncertain call.
func reconciliationItem(t *testing.T, b *bundle) api.AttentionItem {
	t.Helper()
	items, err := b.e.Attention(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Kind == api.AttentionReconciliation {
			return it
		}
	}
	t.Fatalf("attention %+v: no reconciliation", items)
	return api.AttentionItem{}
}

// TestAnswerToEarlierAttemptRefused: a mutation the person said did not
// happen is sent again and is uncertain again — the same row asked a
// second time. An answer given to the first question (a card shown before
// the resend, an answer sent over the socket late) is refused and changes
// nothing; the answer to the second question settles it, and the history
// says which attempt each answer was to.
func TestAnswerToEarlierAttemptRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations, func(cfg *config.Config) { cfg.Policy.ReconcileAttempts = 1 })
	s := newSink(t)
	s.Set("500", 2) // both sends uncertain
	// no reconcile URL: the connector cannot check, the person is asked
	src := strings.Replace(pushWorkflow(s.URL, "a"), `, reconcile: { url: "`+s.URL+`" + "/items/" + p.data.id }`, "", 1)
	b.deploy("push", src)
	b.drainUntilQuiet(time.Minute)

	first := reconciliationItem(t, b)
	if first.Attempt != 1 || first.AnswerID() != first.ID+"@1" {
		t.Fatalf("first card asks about attempt %d (answer id %q), want 1 (%s@1)", first.Attempt, first.AnswerID(), first.ID)
	}
	if err := b.e.Resolve(ctx, first.AnswerID(), api.NotHappened); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Minute)
	second := reconciliationItem(t, b)
	if second.ID != first.ID || second.Attempt != 2 || s.Posts() != 2 {
		t.Fatalf("second card %s attempt %d, posts %d; want mutation %s asked about attempt 2 after 2 posts", second.ID, second.Attempt, s.Posts(), first.ID)
	}

	// a second screen still shows the first card, and answers it
	err := b.e.Resolve(ctx, first.AnswerID(), api.Happened)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "attempt 2") || !strings.Contains(err.Error(), "attempt 1") {
		t.Fatalf("answer to attempt 1 after attempt 2 is asked: %v, want refused naming both attempts", err)
	}
	for _, stale := range []func() error{
		func() error { return b.e.Resolve(ctx, first.AnswerID(), api.SkipIt) },
		func() error { return b.e.Approve(ctx, first.AnswerID(), false) },
	} {
		if err := stale(); !errors.Is(err, ErrRefused) {
			t.Fatalf("another answer to attempt 1: %v, want refused", err)
		}
	}
	ms := b.mutationsBy("")
	if len(ms) != 1 || ms[0].Status != MutationIndeterminate || len(ms[0].Answers) != 1 {
		t.Fatalf("mutations %+v, want the one row still indeterminate, its one answer (to attempt 1) alone", ms)
	}

	if err := b.e.Resolve(ctx, second.AnswerID(), api.Happened); err != nil {
		t.Fatalf("answer to attempt 2: %v", err)
	}
	b.drainUntilQuiet(time.Minute)
	ms = b.mutationsBy("")
	if len(ms) != 1 || ms[0].Status != MutationApplied || s.Posts() != 2 {
		t.Fatalf("mutations %+v, posts %d; want the row applied by the answer to attempt 2, not sent again", ms, s.Posts())
	}
	got := ms[0].Answers
	if len(got) != 2 || got[0].Answer != string(api.NotHappened) || got[0].Attempt != 1 ||
		got[1].Answer != string(api.Happened) || got[1].Attempt != 2 {
		t.Fatalf("answers %+v, want not-happened to attempt 1, happened to attempt 2", got)
	}
}

// TestRetryAndResumeAreAnswers: the person's retry of a blocked workflow
// and resume of a paused one are answers like the others, appended to the
// history with the moves they cause and shown with the workflow; one
// refused (nothing to retry, nothing to resume) records nothing.
func TestRetryAndResumeAreAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations)
	s := newSink(t)
	s.Set("429", 50) // more than the sends allowed: the call gives up, the workflow is blocked
	b.deploy("push", pushWorkflow(s.URL, "a"))
	b.drainUntilQuiet(time.Hour)
	if w := b.workflow("push"); w.Block == nil || len(w.Answers) != 0 {
		t.Fatalf("block %+v, answers %+v: want blocked, nothing answered yet", w.Block, w.Answers)
	}
	s.Set("ok", 0)
	if err := b.e.Retry(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Hour)
	if err := b.e.Retry(ctx, "push"); !errors.Is(err, ErrRefused) {
		t.Fatalf("retry of a workflow not blocked: %v, want refused", err)
	}
	if err := b.e.Resume(ctx, "push"); !errors.Is(err, ErrRefused) {
		t.Fatalf("resume of a workflow neither paused nor blocked: %v, want refused", err)
	}
	if err := b.e.Pause(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	if err := b.e.Pause(ctx, "push"); !errors.Is(err, ErrRefused) {
		t.Fatalf("pause of a paused workflow: %v, want refused", err)
	}
	if err := b.e.Resume(ctx, "push"); err != nil {
		t.Fatal(err)
	}
	got := b.workflow("push").Answers
	var said []string
	for _, a := range got {
		if a.AnsweredBy != "user" {
			t.Errorf("answer %+v not by the user", a)
		}
		said = append(said, a.Answer)
	}
	if !slices.Equal(said, []string{"retry", "pause", "resume"}) {
		t.Fatalf("workflow answers %+v, want the retry, the pause and the resume in turn, the refused ones not at all", got)
	}
}

// TestAskedAgainCarriesEarlierAnswers: a call the person told to try
// again, still uncertain, is asked again; its card carries the answer
// given before, with the attempt it answered, and so does the card of its
// next attempt after "it didn't happen" — the person reads it as the same
// question asked anew, not a new one.
func TestAskedAgainCarriesEarlierAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, allowMutations, func(cfg *config.Config) { cfg.Policy.ReconcileAttempts = 1 })
	s := newSink(t)
	s.Set("500", 2) // both sends uncertain
	src := strings.Replace(pushWorkflow(s.URL, "a"), `, reconcile: { url: "`+s.URL+`" + "/items/" + p.data.id }`, "", 1)
	b.deploy("push", src)
	b.drainUntilQuiet(time.Minute)

	first := reconciliationItem(t, b)
	if len(first.Answered) != 0 {
		t.Fatalf("first card answered %+v, want nothing answered yet", first.Answered)
	}
	if err := b.e.Resolve(ctx, first.AnswerID(), api.TryAgain); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Minute)
	again := reconciliationItem(t, b)
	if again.ID != first.ID || again.Attempt != 1 || len(again.Answered) != 1 ||
		again.Answered[0].Answer != string(api.TryAgain) || again.Answered[0].Attempt != 1 || again.Answered[0].AnsweredBy != "user" {
		t.Fatalf("card after try-again: %s attempt %d, answered %+v; want mutation %s attempt 1, try-again to attempt 1 by user",
			again.ID, again.Attempt, again.Answered, first.ID)
	}

	if err := b.e.Resolve(ctx, again.AnswerID(), api.NotHappened); err != nil {
		t.Fatal(err)
	}
	b.drainUntilQuiet(time.Minute)
	second := reconciliationItem(t, b)
	got := second.Answered
	if second.Attempt != 2 || len(got) != 2 || got[0].Answer != string(api.TryAgain) || got[0].Attempt != 1 ||
		got[1].Answer != string(api.NotHappened) || got[1].Attempt != 1 {
		t.Fatalf("card of attempt %d answered %+v; want attempt 2, try-again then not-happened, both to attempt 1", second.Attempt, got)
	}
	if ms := b.mutationsBy(""); len(ms) != 1 || !slices.Equal(ms[0].Answers, got) {
		t.Fatalf("keep mutations answers %+v, card %+v: want the same history", ms[0].Answers, got)
	}
}
