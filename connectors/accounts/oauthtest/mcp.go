package oauthtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The provider as an MCP server's authorization server: a protected
// resource at /mcp whose 401 names its metadata (RFC 9728), the
// authorization server's metadata (RFC 8414) and dynamic client
// registration (RFC 7591) of public clients.

// Resource is the URL of the protected MCP endpoint.
func (s *Server) Resource() string { return s.URL + "/mcp" }

// Registered is how many clients registered themselves.
func (s *Server) Registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.registered)
}

// Resources are the resource parameters the authorization and token
// requests carried.
func (s *Server) Resources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.resources...)
}

func (s *Server) noteResource(r string) {
	if r == "" {
		return
	}
	s.mu.Lock()
	s.resources = append(s.resources, r)
	s.mu.Unlock()
}

func (s *Server) isRegistered(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registered[id]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) mcpRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if s.Active(Bearer(r)) {
			writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "sign in first", http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": s.Resource(), "authorization_servers": []string{s.URL},
			"bearer_methods_supported": []string{"header"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": s.URL, "authorization_endpoint": s.AuthURL(), "token_endpoint": s.TokenURL(),
			"registration_endpoint": s.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post"}})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var meta struct {
			RedirectURIs []string `json:"redirect_uris"`
			AuthMethod   string   `json:"token_endpoint_auth_method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "redirect_uris are required")
			return
		}
		for _, u := range meta.RedirectURIs {
			if !strings.HasPrefix(u, "http://127.0.0.1") {
				oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "loopback redirects only")
				return
			}
		}
		id := "dyn-" + random()
		s.mu.Lock()
		s.registered[id] = true
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
}
