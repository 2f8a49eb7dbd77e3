package http_test

import (
	"context"
	"fmt"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"keep/connectors/conntest"
	keephttp "keep/connectors/http"
)

// TestConcurrentCallsKeepTheirConnections: a consumer that runs several
// runs at once sends as many requests to one host at once; the connector
// keeps that many connections open between them, so each round of calls
// reuses the last round's instead of dialling all but two again.
func TestConcurrentCallsKeepTheirConnections(t *testing.T) {
	t.Parallel()
	var dialled atomic.Int32
	srv := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.WriteHeader(204)
	}))
	srv.Config.ConnState = func(_ net.Conn, s nethttp.ConnState) {
		if s == nethttp.StateNew {
			dialled.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := keephttp.New(keephttp.Config{}) // the transport keep runs with
	if err != nil {
		t.Fatal(err)
	}
	const atOnce, rounds = 8, 5
	conntest.Rounds(t, atOnce, rounds, func(round, i int) error {
		_, err := post(context.Background(), c, map[string]any{"url": fmt.Sprintf("%s/%d/%d", srv.URL, round, i)})
		return err
	})
	// each request dials at most once, and a round finds the last one's
	// connections idle; one returned a moment late may cost a dial more
	if n := dialled.Load(); n > atOnce+rounds {
		t.Errorf("%d connections dialled for %d rounds of %d requests at once, want at most %d", n, rounds, atOnce, atOnce+rounds)
	}
}
