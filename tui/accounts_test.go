package tui

import (
	"context"
	"strings"
	"testing"

	"keep/engine"
	"keep/engine/api"
)

// accountsStub is the stub with accounts, as the in-process engine has.
type accountsStub struct {
	*stubAPI
	accounts []engine.AccountView
}

func (s accountsStub) Accounts(context.Context) ([]engine.AccountView, error) { return s.accounts, nil }

func TestAccounts(t *testing.T) {
	t.Parallel()

	t.Run("pane 5 lists accounts with their state and how to fix one", func(t *testing.T) {
		t.Parallel()
		api := accountsStub{stubAPI: newStub(), accounts: []engine.AccountView{
			{Name: "google", Kind: "oauth2", Provider: "google", Username: "me@gmail.com", State: engine.AccountOK},
			{Name: "fastmail", Kind: "password", Username: "me@fastmail.com", State: engine.AccountNeedsSignIn,
				Detail: "not signed in; run keep auth login fastmail"},
			{Name: "api", Kind: "oauth2", State: engine.AccountExpiresSoon, Detail: "the token expires soon and cannot be refreshed"},
		}}
		h := newHarness(t, api, 120, 40)
		h.keys("5")
		s := h.screen()
		for _, want := range []string{"5 Accounts (2 need you)", "google", "me@gmail.com", "fastmail", "needs sign-in",
			"keep auth login fastmail", "expires soon"} {
			if !strings.Contains(s, want) {
				t.Errorf("screen lacks %q:\n%s", want, s)
			}
		}
	})

	t.Run("an engine that cannot list accounts says where to look", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, newStub(), 120, 40)
		h.keys("5")
		if s := h.screen(); !strings.Contains(s, "keep auth list") {
			t.Errorf("screen:\n%s", s)
		}
	})

	t.Run("an auth failure in Attention shows the command that fixes it", func(t *testing.T) {
		t.Parallel()
		apiHost := newStub()
		apiHost.attention = []api.AttentionItem{{Kind: api.AttentionAuth, Workflow: "email-to-sheets", ID: "email-to-sheets",
			Title: "sign in to google again", Command: "keep auth login google",
			Reason: "fetch: auth: sign in to google again (keep auth login google): the provider refused the refresh token (invalid_grant)"}}
		h := newHarness(t, apiHost, 120, 40)
		h.keys("3")
		s := h.screen()
		if !strings.Contains(s, "fix: run keep auth login google") || !strings.Contains(s, "AUTH") {
			t.Errorf("screen:\n%s", s)
		}
	})
}
