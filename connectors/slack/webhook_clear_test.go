package slack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"keep/connectors"
)

// TestWebhookNeverGoesInClear: the webhook's address is its credential
// (anyone holding it may post), so like every credential it goes over
// plain http to this machine only. The dialer here takes every address to
// a local server, which counts what reaches it.
func TestWebhookNeverGoesInClear(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}}
	const secret = "T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX"
	c, err := New(Config{WebhookURL: "http://hooks.slack.example/services/" + secret, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Do(context.Background(), connectors.Call{Method: "post", IdempotencyKey: "k",
		Params: map[string]any{"channel": "#ops", "text": "deploy done"}})
	if n := reached.Load(); n != 0 {
		t.Fatalf("the webhook went over plain http %d times (err %v)", n, err)
	}
	var ce *connectors.Error
	if !errors.As(err, &ce) || ce.Class != connectors.Permission || !ce.NotSent ||
		!strings.Contains(err.Error(), "hooks.slack.example") || !strings.Contains(err.Error(), "https") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error shows the webhook's path: %v", err)
	}

	// this machine is not "on the way": a local relay is fine
	local, err := New(Config{WebhookURL: srv.URL + "/services/" + secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.Do(context.Background(), connectors.Call{Method: "post", IdempotencyKey: "k",
		Params: map[string]any{"channel": "#ops", "text": "deploy done"}}); err != nil || reached.Load() != 1 {
		t.Fatalf("a webhook on this machine: %v, reached %d", err, reached.Load())
	}
}
