package accounts

import "keep/connectors"

// Held lists every secret the credentials file holds, with the login name
// each travels with, for the host to redact from whatever it keeps or
// shows (connectors.Held). It reads the file only when nothing has read it
// yet; a refresh updates what it lists.
func (s *Store) Held() []connectors.HeldSecret {
	if s == nil || len(s.defs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []connectors.HeldSecret
	for _, d := range s.defs {
		if v, _ := d.configSecret(); d.configured() && v != "" {
			out = append(out, connectors.HeldSecret{User: d.Username, Secret: v})
		}
	}
	f := s.creds
	if f == nil {
		var err error
		if !s.needsFile() {
			return out
		}
		if f, err = s.current(); err != nil {
			return out
		}
	}
	for name, e := range f.Accounts {
		if e == nil {
			continue
		}
		user := s.defs[name].Username
		for _, v := range []string{e.Secret, e.ClientSecret, e.AccessToken, e.RefreshToken} {
			if v != "" {
				out = append(out, connectors.HeldSecret{User: user, Secret: v})
			}
		}
	}
	return out
}
