package accounts

import (
	"context"
	"testing"
)

// keep auth login saves the sign-in it replaces, to put it back when the
// service refuses the new one. The person may take minutes at the
// browser, while the daemon refreshes the old grant and the provider
// rotates its refresh token: what is put back must be the grant as it
// stood when it was replaced, not as it was saved, or the refresh token
// put back is spent and the account it was to keep working is signed
// out.
func TestRestoreAfterARotationKeepsTheGrant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Rotate, b.srv.ReuseRevokes = true, true
	cli, daemon := b.store, b.open(t)
	b.loginLoopback(t, cli)
	restore, had, err := cli.Saved("acme")
	if err != nil || !had {
		t.Fatalf("Saved = %v, %v", had, err)
	}
	a, _ := daemon.Account("acme")
	a.Invalidate() // the daemon refreshes while the person is at the browser
	if _, err := a.Secret(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.loginLoopback(t, cli)
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	a.Invalidate()
	if _, err := a.Secret(context.Background()); err != nil {
		t.Fatalf("the sign-in put back does not refresh: %v", err)
	}
	if rt := readCreds(t, b.path).Accounts["acme"].RefreshToken; !b.srv.RefreshValid(rt) {
		t.Fatal("the refresh token put back is not honoured")
	}
}
