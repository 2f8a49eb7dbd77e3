package accounts

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// A browser sign-in is made as whoever the browser is signed in to at the
// provider, which need not be who the account is for: a person with two
// Google accounts signs in to the wrong one, and keep would read and send
// the other one's mail. The provider says who signed in only in an OpenID
// id_token (the openid scope; the presets ask for it), so that is what is
// checked, and a sign-in it shows to be someone else stores nothing:
//
//   - an account whose config names its username is for that user: the
//     connectors put the username on the wire (SASL XOAUTH2's user)
//     beside the token. --force stores the sign-in all the same, as the
//     username may be another name of the same account (an alias, a
//     Microsoft account whose sign-in name is not its mail address) that
//     no claim of the id_token shows;
//   - an account whose config names no one is whoever signed in first: a
//     later sign-in as someone else is refused unless --force, since what
//     uses the account has acted as the first one all along and would
//     silently change whose data it reads and writes.
//
// No userinfo endpoint is asked: the config has no key for one, and a
// provider that speaks OpenID gives the id_token in the same answer.

// identity is who an id_token says signed in.
type identity struct {
	// names are the claims a username may match: email,
	// preferred_username (Microsoft's sign-in name), upn.
	names []string
	sub   string
}

// who is the identity as the person knows it: an address when the token
// gives one, else its subject.
func (id identity) who() string {
	if len(id.names) > 0 {
		return id.names[0]
	}
	if id.sub != "" {
		return "subject " + id.sub
	}
	return ""
}

// is reports whether username names this identity; an address's case
// does not make it another one.
func (id identity) is(username string) bool {
	return slices.ContainsFunc(id.names, func(n string) bool { return strings.EqualFold(n, username) })
}

// identityOf reads the id_token of a token response issued to clientID.
// Its signature is not checked: it came straight from the token endpoint
// over TLS (or loopback), which OpenID Connect Core §3.1.3.7 lets stand
// for it. An id_token for another client, or none, says nothing.
func identityOf(tok *oauth2.Token, clientID string) identity {
	raw, _ := tok.Extra("id_token").(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return identity{}
	}
	body, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return identity{}
	}
	var c struct {
		Sub               string          `json:"sub"`
		Aud               json.RawMessage `json:"aud"`
		Email             string          `json:"email"`
		PreferredUsername string          `json:"preferred_username"`
		UPN               string          `json:"upn"`
	}
	if json.Unmarshal(body, &c) != nil {
		return identity{}
	}
	var auds []string
	if json.Unmarshal(c.Aud, &auds) != nil {
		var one string
		if json.Unmarshal(c.Aud, &one) != nil {
			return identity{}
		}
		auds = []string{one}
	}
	if clientID != "" && !slices.Contains(auds, clientID) {
		return identity{}
	}
	id := identity{sub: c.Sub}
	for _, n := range []string{c.Email, c.PreferredUsername, c.UPN} {
		if n != "" && !slices.Contains(id.names, n) {
			id.names = append(id.names, n)
		}
	}
	return id
}

// wrongUserError refuses a sign-in as another user than the account is for.
type wrongUserError struct {
	account, got, want string
	// configured: want is the config's username, not who signed in before
	configured bool
}

func (e *wrongUserError) Error() string {
	if e.configured {
		return fmt.Sprintf("signing in to %s: the provider says %s signed in, but the account is for %s (username in [accounts.%s]): nothing stored; sign in as %s at the provider (or in a private browser window) and run %s again (--force stores it anyway, when %s is another name of %s)",
			e.account, e.got, e.want, e.account, e.want, LoginCommand(e.account), e.want, e.got)
	}
	return fmt.Sprintf("signing in to %s: the provider says %s signed in, but %s was signed in as %s and what uses it acted as them: nothing stored; run %s --force to switch it to %s, or sign in as %s",
		e.account, e.got, e.account, e.want, LoginCommand(e.account), e.got, e.want)
}

// checkIdentity says whether a sign-in as id may replace was (the entry
// stored now, or nil) for the account d.
func checkIdentity(d Def, id identity, was *entry, force bool) error {
	if force {
		return nil
	}
	if d.Username != "" {
		if len(id.names) > 0 && !id.is(d.Username) {
			return &wrongUserError{account: d.Name, got: id.who(), want: d.Username, configured: true}
		}
		// an id_token with a subject only cannot be held against an
		// address: the service the username goes to is left to judge
		return nil
	}
	if was == nil || was.Identity == "" || id.who() == "" || strings.EqualFold(was.Identity, id.who()) {
		return nil
	}
	return &wrongUserError{account: d.Name, got: id.who(), want: was.Identity}
}
