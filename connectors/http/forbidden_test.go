package http_test

import (
	"context"
	nethttp "net/http"
	"strings"
	"testing"

	"keep/connectors"
	"keep/connectors/accounts/oauthtest"
)

// TestForbiddenClass: a 403 refuses keep's credential when keep put one
// on (auth, as in every connector), and the script's own request when it
// did not (logic).
func TestForbiddenClass(t *testing.T) {
	t.Parallel()
	store := signedIn(t, oauthtest.New(t))
	held := newPeer(t, status(nethttp.StatusForbidden))
	own := newPeer(t, status(nethttp.StatusForbidden))
	c := connectorFor(t, store, map[string]string{strings.TrimPrefix(held.URL, "http://"): "tok"})
	for _, tc := range []struct {
		url  string
		want connectors.Class
	}{
		{held.URL + "/x", connectors.Auth},
		{own.URL + "/x", connectors.Logic},
	} {
		_, err := post(context.Background(), c, map[string]any{"url": tc.url, "body": "b"})
		if got := connectors.ClassOf(err); got != tc.want {
			t.Errorf("403 from %s: %q (%v), want %q", tc.url, got, err, tc.want)
		}
	}
	if held.hits.Load() != 1 || own.hits.Load() != 1 {
		t.Fatalf("hits %d and %d, want one each", held.hits.Load(), own.hits.Load())
	}
}
