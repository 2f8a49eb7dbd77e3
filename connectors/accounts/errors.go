package accounts

import (
	"errors"
	"regexp"

	"keep/connectors"
)

// SignInError says the user must sign in to an account (again). It travels
// as the Err of a *connectors.Error of class Auth.
type SignInError struct {
	Account string
	Why     string
}

func (e *SignInError) Error() string {
	return "sign in to " + e.Account + " again (" + LoginCommand(e.Account) + "): " + e.Why
}

// NeedsSignIn is the auth failure of an account: the user must sign in to
// it again. A connector whose service refuses an account's secret (a 401
// after a refresh) returns it.
func NeedsSignIn(name, why string) *connectors.Error {
	return &connectors.Error{Class: connectors.Auth, Err: &SignInError{Account: name, Why: why}}
}

// LoginCommand is the command that fixes an auth failure of an account.
func LoginCommand(name string) string { return "keep auth login " + name }

var loginRE = regexp.MustCompile(`\(keep auth login ([A-Za-z0-9_.\-]+)\)`)

// NamedIn returns the account a recorded auth failure names ("" if none):
// the engine stores failures as text, and this reads its own words back.
func NamedIn(text string) string {
	m := loginRE.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// AccountOf returns the account of a SignInError in err's chain.
func AccountOf(err error) string {
	var se *SignInError
	if errors.As(err, &se) {
		return se.Account
	}
	return ""
}
