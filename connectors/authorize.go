package connectors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Authorize puts a's credential on req: a bearer token for token and oauth2
// accounts, Basic for password and basic ones. Its error is classified: the
// account's own class, else Auth.
func Authorize(ctx context.Context, req *http.Request, a Account) error {
	secret, err := a.Secret(ctx)
	if err != nil {
		return Authorized(a, err)
	}
	switch a.Kind() {
	case "token", "oauth2":
		req.Header.Set("Authorization", "Bearer "+secret)
	default:
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
