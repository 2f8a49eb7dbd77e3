package accounts

import (
	"context"
	"strings"
	"testing"
	"time"
)

// login signs in to acme through the provider's browser and returns what
// Login said; the browser is whoever the provider has signed in.
func (b *bundle) login(t *testing.T, s *Store, force bool) error {
	return b.loginBy(t, s, force, false)
}

// loginBy is login, by the device flow when device.
func (b *bundle) loginBy(t *testing.T, s *Store, force, device bool) error {
	t.Helper()
	browser := b.srv.Browser()
	done := make(chan error, 1)
	go func() {
		done <- s.Login(context.Background(), "acme", LoginOpts{Out: browser, ReadSecret: secretReader(b.srv.ClientSecret), Force: force, Device: device})
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("login did not end:\n%s", browser.String())
		return nil
	}
}

// An account whose config names its user, signed in at a browser where
// another user is signed in, would act as that other user (send mail as
// them, read their calendar): the id_token says who signed in, and a
// sign-in as anyone else is refused and stores nothing.
func TestSignInAsAnotherUserRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := oauthDef(b.srv)
	d.Username, d.Scopes, d.RevokeURL = "me@example.com", append(d.Scopes, "openid"), b.srv.RevokeURL()
	s := b.open(t, d)
	b.srv.SignInAs("other@example.com")
	err := b.login(t, s, false)
	if err == nil || !strings.Contains(err.Error(), "other@example.com") || !strings.Contains(err.Error(), "me@example.com") {
		t.Fatalf("a sign-in as another user: %v, want a refusal naming both users", err)
	}
	if e := readCreds(t, b.path).Accounts["acme"]; e != nil {
		t.Fatalf("the other user's tokens were stored: %+v", e)
	}
	if n := b.srv.Grants(); n != 0 {
		t.Fatalf("the provider still honours %d grants of the refused sign-in", n)
	}
	b.srv.SignInAs("ME@example.com") // an address's case is not who it is
	if err := b.login(t, s, false); err != nil {
		t.Fatalf("a sign-in as the configured user: %v", err)
	}
	if e := readCreds(t, b.path).Accounts["acme"]; e == nil || e.Identity != "ME@example.com" {
		t.Fatalf("stored entry = %+v, want the identity who signed in", e)
	}
	// the username may be an alias no claim shows: the person's word wins
	b.srv.SignInAs("other@example.com")
	if err := b.login(t, s, true); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if e := readCreds(t, b.path).Accounts["acme"]; e == nil || e.Identity != "other@example.com" {
		t.Fatalf("after --force: %+v", e)
	}
}

// An account whose config names no user is whoever signed in first; a
// later sign-in as someone else (the browser's other account) is refused
// unless --force, so what used the account does not quietly change whose
// mail it reads.
func TestSignInAsAnotherUserThanBefore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := oauthDef(b.srv)
	d.Scopes = append(d.Scopes, "openid")
	s := b.open(t, d)
	if err := b.login(t, s, false); err != nil {
		t.Fatal(err)
	}
	before := readCreds(t, b.path).Accounts["acme"]
	if before == nil || before.Identity != "me@example.com" {
		t.Fatalf("first sign-in stored %+v, want identity me@example.com", before)
	}
	if st, err := s.Statuses(); err != nil || len(st) != 1 || st[0].SignedInAs != "me@example.com" {
		t.Fatalf("Statuses = %+v, %v, want it to say who signed in", st, err)
	}
	b.srv.SignInAs("other@example.com")
	err := b.login(t, s, false)
	if err == nil || !strings.Contains(err.Error(), "other@example.com") || !strings.Contains(err.Error(), "me@example.com") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a sign-in as another user than before: %v, want a refusal naming both and --force", err)
	}
	if e := readCreds(t, b.path).Accounts["acme"]; e == nil || e.RefreshToken != before.RefreshToken {
		t.Fatalf("the refused sign-in replaced the stored one: %+v", e)
	}
	if err := b.login(t, s, true); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if e := readCreds(t, b.path).Accounts["acme"]; e == nil || e.Identity != "other@example.com" {
		t.Fatalf("after --force: %+v", e)
	}
}

// The device flow is signed in to on another device, where whoever is
// signed in there signs in: the same check holds.
func TestDeviceSignInAsAnotherUserRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := oauthDef(b.srv)
	d.Username, d.Scopes = "me@example.com", append(d.Scopes, "openid")
	s := b.open(t, d)
	b.srv.SignInAs("other@example.com")
	if err := b.loginBy(t, s, false, true); err == nil || !strings.Contains(err.Error(), "other@example.com") {
		t.Fatalf("a device sign-in as another user: %v", err)
	}
	if e := readCreds(t, b.path).Accounts["acme"]; e != nil {
		t.Fatalf("the other user's tokens were stored: %+v", e)
	}
	b.srv.SignInAs("me@example.com")
	if err := b.loginBy(t, s, false, true); err != nil {
		t.Fatalf("a device sign-in as the configured user: %v", err)
	}
}
