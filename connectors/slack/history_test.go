package slack

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"keep/connectors"
)

func TestHistory(t *testing.T) {
	t.Parallel()

	t.Run("It returns messages newest first with their metadata", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := b.mustDo(t, "post", "k1", params("channel", "finance", "text", "one"))
		second := b.mustDo(t, "post", "", params("channel", "finance", "text", "two"))
		b.mustDo(t, "post", "k3", params("channel", "finance", "text", "reply", "thread_ts", first["ts"]))
		got := b.mustDo(t, "history", "", params("channel", "C0FINANCE1"))
		want := map[string]any{
			"messages": []any{
				map[string]any{"ts": second["ts"], "user": "UKEEPBOT", "text": "two", "thread_ts": "", "metadata": nil},
				map[string]any{"ts": first["ts"], "user": "UKEEPBOT", "text": "one", "thread_ts": "", "metadata": map[string]any{
					"event_type": "keep_mutation", "event_payload": map[string]any{"keep_id": b.c.postTag("k1")},
				}},
			},
			"has_more":    false,
			"next_cursor": "",
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got  %v\nwant %v", got, want)
		}
		q := b.f.lastQuery("conversations.history")
		if q.Get("include_all_metadata") != "true" || q.Get("limit") != "100" {
			t.Fatalf("query %v", q)
		}
		if h := b.f.lastHeader("conversations.history"); h.Get("Authorization") != "Bearer "+fakeToken {
			t.Fatalf("Authorization %q", h.Get("Authorization"))
		}
	})

	t.Run("Oldest, limit and cursor page through the channel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var ts []string
		for i := range 5 {
			ts = append(ts, b.mustDo(t, "post", "", params("channel", "finance", "text", fmt.Sprint(i)))["ts"].(string))
		}
		got := b.mustDo(t, "history", "", params("channel", "C0FINANCE1", "oldest", ts[0], "limit", 2.0))
		texts := func(r map[string]any) (out []string) {
			for _, m := range r["messages"].([]any) {
				out = append(out, m.(map[string]any)["text"].(string))
			}
			return out
		}
		if !reflect.DeepEqual(texts(got), []string{"4", "3"}) || got["has_more"] != true || got["next_cursor"] == "" {
			t.Fatalf("got %v", got)
		}
		got = b.mustDo(t, "history", "", params("channel", "C0FINANCE1", "oldest", ts[0], "limit", int64(2), "cursor", got["next_cursor"]))
		if !reflect.DeepEqual(texts(got), []string{"2", "1"}) || got["has_more"] != false {
			t.Fatalf("got %v", got)
		}
	})

	t.Run("Bad params are logic failures", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, p := range []map[string]any{
			params(),
			params("channel", "C0FINANCE1", "limit", 0.0),
			params("channel", "C0FINANCE1", "limit", 1001.0),
			params("channel", "C0FINANCE1", "limit", 2.5),
			params("channel", "C0FINANCE1", "oldest", true),
		} {
			_, err := b.do(t, "history", "", p)
			wantClass(t, err, connectors.Logic)
		}
	})
	t.Run("A page of more messages than asked is refused, not decoded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Slack never sends more than limit; bare "{}," decoded in full
		// costs keep hundreds of times the body's size.
		flood := `{"ok":true,"messages":[` + strings.Repeat(`{},`, 5000) + `{}]}`
		b.f.fail("conversations.history", failure{status: 200, body: flood})
		res, err := b.do(t, "history", "", params("channel", "C0FINANCE1", "limit", 2.0))
		if err == nil {
			t.Fatalf("took %d messages for a limit of 2", len(res.(map[string]any)["messages"].([]any)))
		}
		wantClass(t, err, connectors.Transient)
		if !strings.Contains(err.Error(), "more messages than the 2 asked for") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A thread's parent on top of the limit is taken", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.f.fail("conversations.history", failure{status: 200, body: `{"ok":true,"messages":[{"ts":"3"},{"ts":"2"},{"ts":"1"}]}`})
		got := b.mustDo(t, "history", "", params("channel", "C0FINANCE1", "limit", 2.0))
		if n := len(got["messages"].([]any)); n != 3 {
			t.Fatalf("got %d messages", n)
		}
	})
}
