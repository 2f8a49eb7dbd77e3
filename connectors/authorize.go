package connectors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Authorize puts a's credential on req: a bearer token for token and oauth2
// accounts, Basic for password and basic ones. It is the one place a
// credential becomes a header (the http connector's Transport, the MCP
// HTTP transport). An account of any other kind puts nothing on req and
// fails, Logic: the two callers once guessed opposite ways (Basic here,
// Bearer in MCP), and a secret sent in a form its service does not expect
// is a secret sent for nothing. Its other errors are classified: the
// account's own class, else Auth.
func Authorize(ctx context.Context, req *http.Request, a Account) error {
	var bearer bool
	switch a.Kind() {
	case "token", "oauth2":
		bearer = true
	case "password", "basic":
	default:
		return &Error{Class: Logic, NotSent: true, Err: fmt.Errorf("account %s is of kind %q, which keep cannot put on an HTTP request (token, oauth2, password or basic)", a.Name(), a.Kind())}
	}
	secret, err := a.Secret(ctx)
	if err != nil {
		return Authorized(a, err)
	}
	if bearer {
		req.Header.Set("Authorization", "Bearer "+secret)
	} else {
		req.SetBasicAuth(a.Username(), secret)
	}
	return nil
}

// Authorized classifies the error of a's Secret: the account's own class,
// else Auth.
func Authorized(a Account, err error) error {
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	return &Error{Class: Auth, Err: fmt.Errorf("account %s: %w", a.Name(), err)}
}
