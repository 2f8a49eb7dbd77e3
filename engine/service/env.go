package service

import "keep/engine/config"

// EnvOf is the environment a daemon running cfg reads: the variables its
// *_env keys name. One is needed when a configured connector has no other
// source for its secret (the mail login of username without a password or
// an account); the others are carried when set, since an endpoint or a
// connector may need them, but their absence is no reason to refuse.
func EnvOf(cfg config.Config) Env {
	var e Env
	add := func(name string, needed bool) {
		switch {
		case name == "":
		case needed:
			e.Needed = append(e.Needed, name)
		default:
			e.Optional = append(e.Optional, name)
		}
	}
	m := cfg.Connectors.Mail
	add(m.PasswordEnv, m.Username != "" && m.Password == "" && m.Account == "")
	s := cfg.Connectors.Slack
	add(s.TokenEnv, false)
	add(cfg.LLM.APIKeyEnv, false)
	return e
}
