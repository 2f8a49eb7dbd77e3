package slack

import (
	"encoding/json"
	"reflect"
	"testing"

	"keep/connectors"
)

func TestPost(t *testing.T) {
	t.Parallel()

	t.Run("It posts with the bearer token and the key in the message metadata", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := b.mustDo(t, "post", "mut-1", params("channel", "#finance", "text", "3 invoices arrived today"))
		msgs := b.f.stored("C0FINANCE1")
		if len(msgs) != 1 {
			t.Fatalf("stored %v", msgs)
		}
		if want := map[string]any{"channel": "C0FINANCE1", "ts": msgs[0].TS}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		wantMeta := map[string]any{"event_type": "keep_mutation", "event_payload": map[string]any{"keep_id": b.c.postTag("mut-1")}}
		if !reflect.DeepEqual(msgs[0].Metadata, wantMeta) || msgs[0].Text != "3 invoices arrived today" {
			t.Fatalf("stored %+v", msgs[0])
		}
		if h := b.f.lastHeader("chat.postMessage"); h.Get("Authorization") != "Bearer "+fakeToken {
			t.Fatalf("Authorization %q", h.Get("Authorization"))
		}
	})

	t.Run("It passes thread_ts and blocks on", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		blocks := []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*hi*"}}}
		b.mustDo(t, "post", "k", params("channel", "C0GENERAL1", "blocks", blocks, "thread_ts", "1700000000.000001"))
		m := b.f.stored("C0GENERAL1")[0]
		if m.ThreadTS != "1700000000.000001" || !reflect.DeepEqual(m.Blocks, blocks) {
			t.Fatalf("stored %+v", m)
		}
	})

	t.Run("It posts to the webhook when asked, with no ts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		got := b.mustDo(t, "post", "k", params("channel", "finance", "text", "hello", "webhook", true))
		if want := map[string]any{"channel": "finance", "ts": ""}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
		if len(b.f.hooked) != 1 || b.f.hooked[0]["text"] != "hello" || len(b.f.stored("C0FINANCE1")) != 0 {
			t.Fatalf("hooked %v", b.f.hooked)
		}
	})

	t.Run("Without a token it posts to the webhook", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *Config) { c.Token = "" })
		b.mustDo(t, "post", "k", params("text", "hello"))
		if len(b.f.hooked) != 1 {
			t.Fatalf("hooked %v", b.f.hooked)
		}
	})

	t.Run("Without a token or a webhook it is an auth failure before any request", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(c *Config) { c.Token, c.WebhookURL = "", "" })
		_, err := b.do(t, "post", "k", params("channel", "finance", "text", "hello"))
		wantClass(t, err, connectors.Auth)
		_, err = b.do(t, "history", "", params("channel", "C0FINANCE1"))
		wantClass(t, err, connectors.Auth)
		if len(b.f.queries) != 0 {
			t.Fatalf("requests %v", b.f.queries)
		}
	})

	t.Run("Bad params are logic failures before any request", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, p := range []map[string]any{
			params("channel", "finance"),
			params("text", "no channel"),
			params("channel", "finance", "text", 3.0),
			params("channel", "finance", "text", "x", "blocks", "not a list"),
			params("channel", "finance", "text", "x", "webhook", "yes"),
			params("channel", "finance", "text", "x", "thread_ts", true),
		} {
			_, err := b.do(t, "post", "k", p)
			wantClass(t, err, connectors.Logic)
		}
		if len(b.f.queries) != 0 {
			t.Fatalf("requests %v", b.f.queries)
		}
	})

	t.Run("Without a key the post carries no metadata", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "post", "", params("channel", "finance", "text", "x"))
		var body map[string]any
		if err := json.Unmarshal([]byte(b.f.lastQuery("chat.postMessage").Get("_body")), &body); err != nil {
			t.Fatal(err)
		}
		if _, ok := body["metadata"]; ok {
			t.Fatalf("body %v", body)
		}
	})
}
