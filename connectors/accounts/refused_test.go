package accounts

import (
	"context"
	"testing"
)

// TestSignInClearsARefusedToken: with a provider that gives no refresh
// token, a token a service refused makes the account need a sign-in, in
// the process that was refused and in keep auth list anywhere; a sign-in
// made by another process (keep auth login beside a daemon) is used by the
// refused one at once, with no restart.
func TestSignInClearsARefusedToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.srv.NoRefresh = true
	daemon := b.open(t)
	b.loginLoopback(t, b.store)

	a, _ := daemon.Account("acme")
	first, err := a.Secret(ctx)
	if err != nil || first == "" {
		t.Fatalf("Secret = %q, %v", first, err)
	}
	a.Invalidate() // the service answered 401 to it
	if _, err := a.Secret(ctx); AccountOf(err) != "acme" {
		t.Fatalf("Secret after a refusal without a refresh token = %v, want a sign-in failure", err)
	}
	if sts, _ := b.store.Statuses(); sts[0].State != StateNeedsSignIn {
		t.Fatalf("another process lists %+v, want needs sign-in", sts[0])
	}

	b.loginLoopback(t, b.store) // keep auth login, in its own process
	second, err := a.Secret(ctx)
	if err != nil || second == first || !b.srv.Active(second) {
		t.Fatalf("Secret after the sign-in = %q (first %q), %v; want the new token at once", second, first, err)
	}
	if sts, _ := daemon.Statuses(); sts[0].State == StateNeedsSignIn {
		t.Fatalf("after the sign-in: %+v", sts[0])
	}
}
