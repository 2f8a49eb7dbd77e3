package mcp

import "strings"

// serverEnv is what a stdio server gets of keep's own environment: what a
// program needs to start and reach the network, never the rest. keep's
// environment holds the secrets its config names (a mail password, an API
// key); a server is someone else's code and gets only the values its
// [mcp.NAME] env gives it.
func serverEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if passedToServers(k) {
			out = append(out, kv)
		}
	}
	return out
}

func passedToServers(k string) bool {
	switch k {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TZ", "TMPDIR", "TERM",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "SYSTEMROOT":
		return true
	}
	for _, p := range []string{"LC_", "XDG_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}
