package accounts

import "time"

// Account states as `keep auth list` and the TUI show them.
const (
	StateOK          = "ok"
	StateExpiresSoon = "expires soon"
	StateNeedsSignIn = "needs sign-in"
)

// Status is an account without its secrets.
type Status struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Username string `json:"username,omitempty"`
	// SignedInAs is who the provider said signed in (identity.go), when it
	// said: for an account without a username, the one it acts as.
	SignedInAs string `json:"signed_in_as,omitempty"`
	Provider   string `json:"provider,omitempty"`
	State      string `json:"state"`
	// Detail says why it needs a sign-in, or when the token expires.
	Detail     string     `json:"detail,omitempty"`
	Expiry     *time.Time `json:"expiry,omitempty"`
	SignedInAt *time.Time `json:"signed_in_at,omitempty"`
}

// soonWindow: an access token without a refresh token that expires within
// this is shown as expiring soon.
const soonWindow = 24 * time.Hour

// Statuses describes every configured account from the credentials file,
// asking no provider anything.
func (s *Store) Statuses() ([]Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var f *file
	if s.needsFile() {
		var err error
		if f, err = s.current(); err != nil {
			return nil, err
		}
	}
	out := []Status{}
	for _, name := range s.Names() {
		d := s.defs[name]
		if d.configured() {
			out = append(out, d.configuredStatus())
			continue
		}
		st := Status{Name: name, Kind: d.Kind, Username: d.Username, Provider: d.Provider, State: StateOK}
		e := f.Accounts[name]
		switch {
		case e == nil:
			st.State, st.Detail = StateNeedsSignIn, "not signed in"
		case e.Refused != "":
			st.State, st.Detail = StateNeedsSignIn, e.Refused
		case d.Kind != OAuth2:
			if e.Secret == "" {
				st.State, st.Detail = StateNeedsSignIn, "no secret stored"
			}
		case e.RefreshToken == "" && !e.Expiry.IsZero():
			switch left := e.Expiry.Sub(s.now()); {
			case left <= 0:
				st.State, st.Detail = StateNeedsSignIn, "the token expired"
			case left < soonWindow:
				st.State, st.Detail = StateExpiresSoon, "the token expires "+e.Expiry.Local().Format(time.RFC3339)+" and cannot be refreshed"
			}
		}
		if e != nil {
			st.SignedInAs = e.Identity
			if !e.Expiry.IsZero() {
				t := e.Expiry
				st.Expiry = &t
			}
			if !e.SignedInAt.IsZero() {
				t := e.SignedInAt
				st.SignedInAt = &t
			}
		}
		if st.State == StateNeedsSignIn {
			st.Detail += "; run " + LoginCommand(name)
		}
		out = append(out, st)
	}
	return out, nil
}
