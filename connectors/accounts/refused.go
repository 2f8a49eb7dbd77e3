package accounts

import (
	"net/http"
	"strings"

	"keep/connectors"
)

// Refused is what a connector returns when a service refused an account's
// secret outright (IMAP AUTHENTICATIONFAILED, SMTP 535, an HTTP 401 after
// a fresh token): the user must sign in again, and the failure names the
// account and the command, so the engine's auth item can say it. The
// refusal is written to the credentials file, so `keep auth list` in any
// process shows the account as needing a sign-in, until a new sign-in (or
// a `keep auth test` that gets in) clears it. secret is the one refused:
// when the file holds another by now (a sign-in meanwhile), nothing is
// marked. why must hold no secret.
func Refused(a connectors.Account, secret, why string) *connectors.Error {
	if sa, ok := a.(*account); ok {
		if sa.def.configured() {
			// nothing to sign in to: the config (or the variable) is fixed
			_, from := sa.def.configSecret()
			return connectors.Errorf(connectors.Auth, "%s (the secret of %s comes from %s)", why, sa.def.Name, from)
		}
		sa.s.refuse(sa.def.Name, secret, why)
	}
	return NeedsSignIn(a.Name(), why)
}

// refuse marks name refused when secret is still its current one. A
// failure to write is not the caller's concern: the returned auth error
// already blocks what used the account.
func (s *Store) refuse(name, secret, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markRefused(name, secret, why)
}

// markRefused is refuse with s.mu held.
func (s *Store) markRefused(name, secret, why string) {
	_ = s.update(func(f *file) error {
		e := f.Accounts[name]
		if e == nil || secret == "" || (e.Secret != secret && e.AccessToken != secret) {
			return nil
		}
		e.Refused = why
		return nil
	})
}

// Accepted clears the refusal mark of an account whose secret a service
// has just taken (keep auth test got in).
func (s *Store) Accepted(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.current()
	if err != nil {
		return err
	}
	if e := f.Accounts[name]; e == nil || e.Refused == "" {
		return nil
	}
	return s.update(func(f *file) error {
		if e := f.Accounts[name]; e != nil {
			e.Refused = ""
		}
		return nil
	})
}

// SecretOn is the secret connectors.Authorize put on r (Basic or Bearer):
// the one a 401 to r refused.
func SecretOn(r *http.Request) string {
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tok
}

var _ connectors.Refuser = (*account)(nil)

// Refuse is Refused for connectors.Transport, which cannot import this
// package.
func (a *account) Refuse(secret, why string) *connectors.Error { return Refused(a, secret, why) }
