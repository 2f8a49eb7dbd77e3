package connectors_test

import (
	"context"
	"net/http"
	"testing"

	"keep/connectors"
)

// TestAuthorize: each kind of account signs in the form its service expects,
// and a kind keep does not know signs nothing (deny by default): its secret
// is not even read.
func TestAuthorize(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]string{
		"token":    "Bearer s3cret",
		"oauth2":   "Bearer s3cret",
		"password": "Basic bWU6czNjcmV0", // me:s3cret
		"basic":    "Basic bWU6czNjcmV0",
	} {
		req, _ := http.NewRequest(http.MethodGet, "https://api.example.com/", nil)
		if err := connectors.Authorize(context.Background(), req, &account{kind: kind, secrets: []string{"s3cret"}}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if got := req.Header.Get("Authorization"); got != want {
			t.Errorf("%s: Authorization %q, want %q", kind, got, want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "https://api.example.com/", nil)
	a := &account{kind: "apikey"} // no secrets: reading one would panic
	err := connectors.Authorize(context.Background(), req, a)
	if connectors.ClassOf(err) != connectors.Logic || req.Header.Get("Authorization") != "" {
		t.Errorf("an account of an unknown kind: %v, Authorization %q; want a logic error and nothing sent", err, req.Header.Get("Authorization"))
	}
}
