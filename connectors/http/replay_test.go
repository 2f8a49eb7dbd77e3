package http_test

import (
	"context"
	"io"
	nethttp "net/http"
	"sync/atomic"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// TestAMutationIsNeverReplayedByNetHTTP: net/http sends a request again on
// a fresh connection by itself when a kept-alive one closes before the
// first byte of an answer, if the request counts as idempotent, which a
// header named Idempotency-Key makes it. The server may have acted on the
// first copy, and one that ignores the key acts twice: keep must send a
// mutation once and call its outcome uncertain.
func TestAMutationIsNeverReplayedByNetHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"a POST with a body", "POST", map[string]any{"json": map[string]any{"a": 1.0}}},
		{"a DELETE without one", "DELETE", map[string]any{}},
		{"a PUT carrying the script's own X-Idempotency-Key", "PUT", map[string]any{"body": "x", "headers": map[string]any{"X-Idempotency-Key": "mine"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mutations atomic.Int32
			var keys atomic.Value
			p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
				if r.Method == nethttp.MethodGet {
					io.WriteString(w, "warm")
					return
				}
				mutations.Add(1)
				keys.Store(r.Header.Get("Idempotency-Key"))
				// acted on, then the connection goes away unanswered
				hangUp(false)(w, r)
			})
			c := connector(t, keephttp.Config{})
			ctx := context.Background()
			// a kept-alive connection for the mutation to go out on
			if _, err := get(ctx, c, map[string]any{"url": p.URL}); err != nil {
				t.Fatal(err)
			}
			params := map[string]any{"method": tc.method, "url": p.URL + "/things"}
			for k, v := range tc.params {
				params[k] = v
			}
			_, err := post(ctx, c, params)
			if connectors.ClassOf(err) != connectors.Uncertain {
				t.Fatalf("class %q (%v), want uncertain", connectors.ClassOf(err), err)
			}
			if n := mutations.Load(); n != 1 {
				t.Fatalf("the server received the mutation %d times", n)
			}
			if k, _ := keys.Load().(string); k != "mut-42" {
				t.Fatalf("the server saw Idempotency-Key %q, want the host's", k)
			}
		})
	}
}
