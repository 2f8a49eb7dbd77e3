package tui

import (
	"bytes"
	"strings"
	"testing"

	"keep/engine"
)

// keep auth list says who the provider said signed in beside whom the
// config names, so that a sign-in as another user shows in the text too,
// not only in --json.
func TestAuthListShowsWhoSignedIn(t *testing.T) {
	var b bytes.Buffer
	err := WriteAccounts(&b, []engine.AccountStatus{
		{Name: "google", Kind: "oauth2", Username: "me@example.com", SignedInAs: "me@example.com", State: "signed in"},
		{Name: "work", Kind: "oauth2", SignedInAs: "boss@example.org", State: "signed in"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "SIGNED IN AS") || !strings.Contains(lines[2], "boss@example.org") {
		t.Errorf("keep auth list:\n%s", b.String())
	}
}
