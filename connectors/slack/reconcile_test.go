package slack

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"keep/connectors"
)

func TestReconcile(t *testing.T) {
	t.Parallel()
	post := params("channel", "C0FINANCE1", "text", "3 invoices arrived today")

	t.Run("After a 500 that came after the post, it finds the message applied", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.f.fail("chat.postMessage", failure{status: 500, afterStore: true})
		_, err := b.do(t, "post", "mut-1", post)
		wantClass(t, err, connectors.Uncertain)
		v, got, err := b.reconcile(t, "mut-1", post)
		msgs := b.f.stored("C0FINANCE1")
		if err != nil || v != connectors.Applied || len(msgs) != 1 {
			t.Fatalf("%s %v %v, stored %v", v, got, err, msgs)
		}
		if want := map[string]any{"channel": "C0FINANCE1", "ts": msgs[0].TS}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})

	t.Run("After a connection closed or a timeout past the post, it finds the message applied", func(t *testing.T) {
		t.Parallel()
		for _, fl := range []failure{{hijack: true, afterStore: true}, {slow: 5 * time.Second, afterStore: true}} {
			b := setup(t, short)
			b.f.fail("chat.postMessage", fl)
			_, err := b.do(t, "post", "mut-1", post)
			wantClass(t, err, connectors.Uncertain)
			if v, _, err := b.reconcile(t, "mut-1", post); err != nil || v != connectors.Applied {
				t.Fatalf("%+v: %s %v", fl, v, err)
			}
		}
	})

	t.Run("A post that never arrived is unknown, not not-applied: history can lag", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "post", "other", post)
		v, got, err := b.reconcile(t, "mut-1", post)
		if err != nil || v != connectors.Unknown || got != nil {
			t.Fatalf("%s %v %v", v, got, err)
		}
	})

	t.Run("It searches past the first page of recent history", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.mustDo(t, "post", "mut-1", post)
		for i := range reconcilePage + 10 {
			b.mustDo(t, "post", "", params("channel", "finance", "text", fmt.Sprint(i)))
		}
		if v, _, err := b.reconcile(t, "mut-1", post); err != nil || v != connectors.Applied {
			t.Fatalf("%s %v", v, err)
		}
		if n := len(b.f.queries["conversations.history"]); n != 2 {
			t.Fatalf("%d pages read", n)
		}
	})

	t.Run("A reply is looked for in its thread", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		parent := b.mustDo(t, "post", "p", post)
		reply := params("channel", "C0FINANCE1", "text", "done", "thread_ts", parent["ts"])
		want := b.mustDo(t, "post", "mut-1", reply)
		v, got, err := b.reconcile(t, "mut-1", reply)
		if err != nil || v != connectors.Applied || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %v %v, want %v", v, got, err, want)
		}
		if q := b.f.lastQuery("conversations.replies"); q.Get("ts") != parent["ts"] || q.Get("include_all_metadata") != "true" {
			t.Fatalf("query %v", q)
		}
	})

	t.Run("A webhook post can't be checked", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, _, err := b.reconcile(t, "mut-1", params("channel", "finance", "text", "x", "webhook", true))
		if !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("got %v", err)
		}
		b = setup(t, func(c *Config) { c.Token = "" })
		if _, _, err := b.reconcile(t, "mut-1", post); !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("without a token: %v", err)
		}
	})

	t.Run("A post to a channel name can't be checked, as history takes IDs only", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := params("channel", "#finance", "text", "x")
		b.mustDo(t, "post", "mut-1", p)
		if _, _, err := b.reconcile(t, "mut-1", p); !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A channel the app may not read can't be checked, and says so at once", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.f.fail("conversations.history", failure{code: "no_permission"})
		v, _, err := b.reconcile(t, "mut-1", post)
		if v != connectors.Unknown || !errors.Is(err, connectors.ErrCannotCheck) || !strings.Contains(err.Error(), "invite") {
			t.Fatalf("%s %v", v, err)
		}
	})

	t.Run("A post without a key can't be checked", func(t *testing.T) {
		t.Parallel()
		if _, _, err := setup(t).reconcile(t, "", post); !errors.Is(err, connectors.ErrCannotCheck) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("A failing history is unknown with the reason", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.f.fail("conversations.history", failure{status: 500})
		v, _, err := b.reconcile(t, "mut-1", post)
		if v != connectors.Unknown || connectors.ClassOf(err) != connectors.Transient {
			t.Fatalf("%s %v", v, err)
		}
	})

	t.Run("A lookalike another app posted with the key is not keep's post", func(t *testing.T) {
		t.Parallel()
		// the host's keys are public and counted (keep-…-41, -42): an app
		// reading the channel sees one in a message of keep's and can post
		// the next with it, so a post lost on the way would read as done
		b := setup(t)
		b.c.UseSecret([]byte("the host's secret"))
		b.f.mu.Lock()
		b.f.messages["C0FINANCE1"] = append(b.f.messages["C0FINANCE1"], &fakeMessage{TS: "1700000000.000100", User: "U0OTHERAPP", Text: "hi",
			Metadata: map[string]any{"event_type": "keep_mutation", "event_payload": map[string]any{"keep_id": "mut-1"}}})
		b.f.mu.Unlock()
		b.f.fail("chat.postMessage", failure{status: 500}) // nothing posted
		_, err := b.do(t, "post", "mut-1", post)
		wantClass(t, err, connectors.Uncertain)
		if v, got, err := b.reconcile(t, "mut-1", post); err != nil || v != connectors.Unknown {
			t.Fatalf("%s %v %v", v, got, err)
		}
		// keep's own post is found, after a restart too (the same secret)
		b.mustDo(t, "post", "mut-2", post)
		again, err := New(Config{APIBase: b.f.srv.URL + "/api", Token: b.f.token, Client: b.f.srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		again.UseSecret([]byte("the host's secret"))
		if v, _, err := again.Reconcile(context.Background(), connectors.Call{Method: "post", Params: post, IdempotencyKey: "mut-2"}); err != nil || v != connectors.Applied {
			t.Fatalf("keep's own post after a restart: %s %v", v, err)
		}
	})

	t.Run("Only post is reconciled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, _, err := b.c.Reconcile(context.Background(), connectors.Call{Method: "history", Params: params("channel", "C0FINANCE1"), IdempotencyKey: "k"})
		wantClass(t, err, connectors.Internal)
	})
}
