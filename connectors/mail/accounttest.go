package mail

import (
	"context"
	"errors"

	"keep/connectors"
	"keep/connectors/accounts"
)

// refusal turns a login the server refused (cause is the server's answer)
// into the account's sign-in failure, so the auth item names the account
// and `keep auth login`, and the account shows as needing a sign-in. A
// failure keep classified itself (no mechanism in common, no AUTH offered)
// is a setup problem, not a refused secret, and stays as it is; so does a
// login from the config's own username and password.
func (c *Connector) refusal(cr creds, cause error, e *connectors.Error) *connectors.Error {
	var ours *connectors.Error
	if e.Class != connectors.Auth || c.cfg.Account == nil || errors.As(cause, &ours) {
		return e
	}
	return accounts.Refused(c.cfg.Account, cr.secret, e.Err.Error())
}

// TestAccount logs in to the IMAP server and to the SMTP server with the
// account's secret, when this connector signs in with account name, and
// says what it did; a refusal is the account's sign-in failure.
func (c *Connector) TestAccount(ctx context.Context, name string) ([]string, error) {
	a := c.cfg.Account
	if a == nil || a.Name() != name {
		return nil, nil
	}
	var done []string
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return done, err
	}
	s.close()
	done = append(done, "mail: IMAP "+c.cfg.IMAP+" logged in as "+a.Username())
	cl, err := c.smtpSession(ctx)
	if err != nil {
		return done, err
	}
	_ = cl.Quit()
	done = append(done, "mail: SMTP "+c.cfg.SMTP+" accepted AUTH as "+a.Username())
	return done, nil
}
