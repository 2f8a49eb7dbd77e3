package calendar

import (
	"context"

	"keep/connectors"
)

// TestAccount sends one PROPFIND with the account's credentials to the
// configured URL, when this connector signs in with account name, and
// says what it did; a 401 is the account's sign-in failure.
func (c *Connector) TestAccount(ctx context.Context, name string) ([]string, error) {
	a := c.tr.account
	if a == nil || a.Name() != name {
		return nil, nil
	}
	if c.base == nil {
		return nil, connectors.Errorf(connectors.Logic, "the calendar is not configured: set [connectors.calendar] url")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if _, err := c.dav.FindCurrentUserPrincipal(ctx); err != nil {
		return nil, classify(err, false)
	}
	return []string{"calendar: PROPFIND " + connectors.RedactURL(c.base) + " accepted the credentials of " + name}, nil
}
