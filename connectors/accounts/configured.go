package accounts

import (
	"os"

	"keep/connectors"
)

// A configured account takes its secret from a connector's own config key
// ([connectors.slack] token / token_env, [connectors.mail] password /
// password_env) rather than from the credentials file, so those secrets
// are held in this one store too: connectors ask the account for them and
// `keep auth list` shows them. The value in the config wins over the
// environment variable, as those keys always worked; the variable is read
// each time the secret is needed.

// configured reports whether d's secret comes from the config.
func (d Def) configured() bool { return d.SecretEnv != "" || d.ConfigSecret != "" }

// needsFile reports whether any account keeps its secrets in the
// credentials file.
func (s *Store) needsFile() bool {
	for _, d := range s.defs {
		if !d.configured() {
			return true
		}
	}
	return false
}

// configSecret is the secret of a configured account and where it came from.
func (d Def) configSecret() (secret, from string) {
	if d.ConfigSecret != "" {
		return d.ConfigSecret, "the config file"
	}
	return os.Getenv(d.SecretEnv), "environment variable " + d.SecretEnv
}

// secretOf is Secret for a configured account: an Auth failure saying
// which variable to set when it is empty.
func (d Def) secretOf() (string, error) {
	v, from := d.configSecret()
	if v == "" {
		return "", connectors.Errorf(connectors.Auth, "account %s: %s is not set", d.Name, from)
	}
	return v, nil
}

// configuredStatus is the Status of a configured account.
func (d Def) configuredStatus() Status {
	st := Status{Name: d.Name, Kind: d.Kind, Username: d.Username, State: StateOK}
	v, from := d.configSecret()
	st.Detail = "from " + from
	if v == "" {
		st.State, st.Detail = StateNeedsSignIn, from+" is not set"
	}
	return st
}
