package tui

import (
	"slices"
	"testing"

	"charm.land/bubbles/v2/key"
)

// TestReconciliationKeysMeanOneThing: each answer to "did it happen?" has
// keys of its own, none shared with another answer or with the
// confirmation's yes and no; "n" is "no", never "it didn't happen".
func TestReconciliationKeysMeanOneThing(t *testing.T) {
	t.Parallel()
	k := newKeyMap()
	answers := map[string]key.Binding{"check again": k.TryAgain, "it happened": k.Happened,
		"it didn't happen": k.NotHappened, "skip": k.Skip}
	owner := map[string]string{}
	for _, b := range []struct {
		what string
		b    key.Binding
	}{{"yes", k.Yes}, {"no", k.No}} {
		for _, s := range b.b.Keys() {
			owner[s] = b.what
		}
	}
	for what, b := range answers {
		if b.Help().Desc != what {
			t.Errorf("the %q key's help says %q", what, b.Help().Desc)
		}
		for _, s := range b.Keys() {
			if o, ok := owner[s]; ok {
				t.Errorf("key %q means both %q and %q", s, o, what)
			}
			owner[s] = what
		}
	}
	if slices.Contains(k.NotHappened.Keys(), "n") {
		t.Error(`"n" answers "it didn't happen"`)
	}

	t.Run("n on a reconciliation prompt answers nothing; f asks, n then cancels", func(t *testing.T) {
		t.Parallel()
		h := setup(t)
		h.keys("3", "down", "n")
		if h.m.confirm != nil || len(h.api.actions()) != 0 {
			t.Fatalf("n on a reconciliation prompt: confirm %+v, calls %v", h.m.confirm, h.api.actions())
		}
		h.keys("f", "n")
		if got := h.api.actions(); len(got) != 0 || h.m.confirm != nil {
			t.Fatalf("f then n (no): calls %v, question open %v", got, h.m.confirm != nil)
		}
		h.keys("f", "y")
		if got := h.api.actions(); !slices.Equal(got, []string{"Resolve m3 not-happened"}) {
			t.Fatalf("f then y: calls %v", got)
		}
	})
}
