package clitest

import (
	"fmt"
	"strings"
	"testing"
)

// TestLedgerAgainstSink checks the crash test's check of keep's ledger
// against its sink on histories written out by hand: what a kill before
// the POST legitimately leaves (an attempt that did not happen, then a new
// one) passes, and each kind of double, or a loss, fails it.
func TestLedgerAgainstSink(t *testing.T) {
	attempt := func(id int64, item, status, by string) crashAttempt {
		// keep's key is named after the row's id (storage.InsertMutation)
		return crashAttempt{id: id, key: fmt.Sprintf("keep-x-%d", id), item: item, status: status, resolvedBy: by}
	}
	applied := func(as ...crashAttempt) map[string]int {
		m := map[string]int{}
		for _, a := range as {
			m[a.key]++
		}
		return m
	}
	one := attempt(1, "item-000", "applied", "host")
	notSent := attempt(2, "item-001", "failed", "reconciler")
	resent := attempt(3, "item-001", "applied", "host")
	byCheck := attempt(4, "item-002", "applied", "reconciler")

	t.Run("legitimate", func(t *testing.T) {
		// item-001's first attempt never reached the sink; its check found
		// it not applied, and a new attempt was applied; item-002's POST
		// went out before the kill and its check found it applied
		done := applied(one, resent, byCheck)
		problems, retried := ledgerAgainstSink([]crashAttempt{one, notSent, resent, byCheck}, done, done)
		if len(problems) != 0 {
			t.Errorf("problems %q, want none", problems)
		}
		if len(retried) != 1 || !strings.HasPrefix(retried[0], "item-001: ") {
			t.Errorf("retried %q, want item-001 alone", retried)
		}
	})

	for _, c := range []struct {
		name     string
		attempts []crashAttempt
		posts    map[string]int
		done     map[string]int
		want     string
	}{
		{
			name:     "two keys for one item, both applied",
			attempts: []crashAttempt{attempt(1, "item-001", "applied", "host"), attempt(2, "item-001", "applied", "host")},
			done:     applied(attempt(1, "item-001", "", ""), attempt(2, "item-001", "", "")),
			want:     "mutation 1 is applied, and mutation 2 was made for the same item after it",
		},
		{
			name:     "found not applied, but the sink applied it",
			attempts: []crashAttempt{notSent, resent},
			done:     applied(notSent, resent),
			want:     "keep records mutation 2 failed",
		},
		{
			name:     "a new attempt while the first was uncertain",
			attempts: []crashAttempt{attempt(2, "item-001", "needs_reconcile", ""), resent},
			done:     applied(resent),
			want:     "mutation 2 is needs_reconcile, and mutation 3 was made",
		},
		{
			name:     "a call without its row",
			attempts: []crashAttempt{one},
			posts:    map[string]int{one.key: 1, "keep-x-stray": 1},
			done:     applied(one),
			want:     "keep-x-stray, which no mutation row",
		},
		{
			name:     "applied in keep, never at the sink",
			attempts: []crashAttempt{one},
			done:     map[string]int{},
			want:     "the sink never applied its key",
		},
		{
			name:     "failed, and nothing after it",
			attempts: []crashAttempt{notSent},
			done:     map[string]int{},
			want:     "none followed (lost)",
		},
		{
			name:     "one key on two rows",
			attempts: []crashAttempt{one, {id: 9, key: one.key, item: "item-009", status: "applied"}},
			done:     applied(one),
			want:     "share the idempotency key",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			posts := c.posts
			if posts == nil {
				posts = c.done
			}
			problems, _ := ledgerAgainstSink(c.attempts, posts, c.done)
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, c.want)
			}
			if !found {
				t.Errorf("problems %q, want one saying %q", problems, c.want)
			}
		})
	}
}
