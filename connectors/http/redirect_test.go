package http_test

import (
	"context"
	"io"
	nethttp "net/http"
	"strings"
	"sync/atomic"
	"testing"

	"keep/connectors"
	keephttp "keep/connectors/http"
)

// TestAMutationIsNotTurnedIntoAGETByARedirect: net/http follows a 301, 302
// or 303 to a POST, PUT, PATCH or DELETE with a GET, and the GET's answer
// came back as the mutation's. A server that moved (POST /items → 301
// /items/, or http → https) did nothing, and keep called it applied: the
// change was lost. Such a redirect is not followed; what the server did is
// unknown, so the outcome is uncertain, to be reconciled.
func TestAMutationIsNotTurnedIntoAGETByARedirect(t *testing.T) {
	t.Parallel()
	for _, code := range []int{nethttp.StatusMovedPermanently, nethttp.StatusFound, nethttp.StatusSeeOther} {
		for _, method := range []string{"POST", "PUT", "DELETE"} {
			t.Run(method+" answered "+nethttp.StatusText(code), func(t *testing.T) {
				t.Parallel()
				var gets atomic.Int32
				p := newPeer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
					if r.URL.Path == "/items" {
						nethttp.Redirect(w, r, "/items/", code)
						return
					}
					gets.Add(1)
					io.WriteString(w, `{"items":[]}`)
				})
				got, err := post(context.Background(), connector(t, keephttp.Config{}),
					map[string]any{"method": method, "url": p.URL + "/items", "json": map[string]any{"a": 1.0}})
				if connectors.ClassOf(err) != connectors.Uncertain || !strings.Contains(err.Error(), "not followed") {
					t.Fatalf("got %v, %v; want an uncertain outcome, the redirect not followed", got, err)
				}
				if n := gets.Load(); n != 0 {
					t.Fatalf("the redirect was followed with %d GETs", n)
				}
			})
		}
	}
}
