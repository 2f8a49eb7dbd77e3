package http_test

import (
	"context"
	"errors"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// A header the script gives that HTTP cannot carry (a value with a line
// break, which would start a header or a request of its own; a name with a
// space or a colon) is the script's mistake, refused before anything is
// sent. net/http refuses it too, but as an error like a dropped
// connection's: a transient failure, tried again and again against a
// parameter that will not change.
func TestHeadersHTTPCannotCarry(t *testing.T) {
	t.Parallel()
	for _, hdr := range []map[string]any{
		{"X-Note": "a\r\nX-Injected: 1"},
		{"X-Note": "a\nb"},
		{"X-Note": "a\x00b"},
		{"X Note": "a"},
		{"X-Note:": "a"},
		{"": "a"},
	} {
		p := newPeer(t, status(200))
		c := connector(t, keephttp.Config{})
		for _, call := range []func() error{
			func() error {
				_, err := get(context.Background(), c, map[string]any{"url": p.URL, "headers": hdr})
				return err
			},
			func() error {
				_, err := post(context.Background(), c, map[string]any{"url": p.URL, "headers": hdr, "body": "x"})
				return err
			},
		} {
			err := call()
			var ce *connectors.Error
			if !errors.As(err, &ce) || ce.Class != connectors.Logic {
				t.Errorf("headers %q: got %v, want a Logic failure", hdr, err)
			}
		}
		if n := p.hits.Load(); n != 0 {
			t.Errorf("headers %q: the server was called %d times", hdr, n)
		}
	}
}
