package accounts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// An oauth2 account whose Def names an MCP server (Resource) and no
// endpoints is signed in to as the MCP authorization spec says: the
// server's 401 names its protected-resource metadata (RFC 9728), which
// names the authorization server, whose metadata (RFC 8414) gives the
// endpoints; the client registers itself (RFC 7591) unless the config
// gives a client_id; the browser signs in on loopback with PKCE, the
// resource named (RFC 8707). What was discovered is kept with the tokens,
// so a refresh needs no discovery.

// discovered is what a sign-in found for an MCP server's account.
type discovered struct {
	Resource string `json:"resource"`
	AuthURL  string `json:"auth_url"`
	TokenURL string `json:"token_url"`
	ClientID string `json:"client_id"`
}

// mcpDiscovered says whether d's endpoints come from its MCP server.
func (d Def) mcpDiscovered() bool {
	return d.Kind == OAuth2 && d.Resource != "" && d.Provider == "" && d.AuthURL == "" && d.TokenURL == ""
}

// withDiscovered is d with what the sign-in found for it.
func (d Def) withDiscovered(e *entry) Def {
	if e == nil || e.Discovered == nil || !d.mcpDiscovered() {
		return d
	}
	d.AuthURL, d.TokenURL = e.Discovered.AuthURL, e.Discovered.TokenURL
	if d.ClientID == "" {
		d.ClientID = e.Discovered.ClientID
	}
	return d
}

// mcpLogin signs in to an MCP server's account (see above).
func (s *Store) mcpLogin(ctx context.Context, d Def, o LoginOpts) error {
	found, err := s.discover(ctx, d)
	if err != nil {
		return fmt.Errorf("signing in to %s: %w", d.Name, err)
	}
	d.AuthURL, d.TokenURL, d.ClientID = found.AuthURL, found.TokenURL, found.ClientID
	tok, err := s.loopbackFlow(ctx, d, "", o.Out)
	if err != nil {
		return fmt.Errorf("signing in to %s: %w", d.Name, err)
	}
	e := &entry{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		TokenType: tok.TokenType, Expiry: s.expiry(tok), Obtained: s.now().UTC(), Discovered: found}
	if err := s.storeAs(ctx, d, e, identityOf(tok, d.ClientID), o.Force); err != nil {
		return err
	}
	if tok.RefreshToken == "" {
		fmt.Fprintf(o.Out, "note: %s gave no refresh token; you will have to sign in again when this one expires\n", d.Name)
	}
	return nil
}

// discover finds the endpoints, and a client id, for d's MCP server.
func (s *Store) discover(ctx context.Context, d Def) (*discovered, error) {
	metaURL, err := s.resourceMetadataURL(ctx, d.Resource)
	if err != nil {
		return nil, err
	}
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, metaURL, d.Resource, s.client)
	if err != nil {
		return nil, fmt.Errorf("the server's protected-resource metadata (RFC 9728): %w", err)
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%s names no authorization server", metaURL)
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := oauthex.GetAuthServerMeta(ctx, wellKnown(issuer, "oauth-authorization-server"), issuer, s.client)
	if err == nil && asm == nil {
		err = errors.New("not found")
	}
	if err != nil {
		return nil, fmt.Errorf("the authorization server's metadata (RFC 8414) at %s: %w", issuer, err)
	}
	for _, u := range [][2]string{{"its authorization_endpoint", asm.AuthorizationEndpoint}, {"its token_endpoint", asm.TokenEndpoint}} {
		if err := checkEndpoint(u[0], u[1]); err != nil {
			return nil, fmt.Errorf("the authorization server's metadata (RFC 8414) at %s: %w", issuer, err)
		}
	}
	found := &discovered{Resource: d.Resource, AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, ClientID: d.ClientID}
	if found.ClientID != "" {
		return found, nil
	}
	if asm.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("%s offers no client registration: set client_id in [accounts.%s] to a client you registered there", issuer, d.Name)
	}
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{"http://127.0.0.1/"}, TokenEndpointAuthMethod: "none", ClientName: "keep",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
	}, s.client)
	if err != nil {
		return nil, fmt.Errorf("registering keep as a client (RFC 7591): %w", err)
	}
	found.ClientID = reg.ClientID
	return found, nil
}

// resourceMetadataURL asks the server, without a token, where its
// protected-resource metadata is: the resource_metadata of its 401's
// WWW-Authenticate, else the well-known place.
func (s *Store) resourceMetadataURL(ctx context.Context, resource string) (string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"keep","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, resource, bytes.NewReader([]byte(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("reaching %s: %w", resource, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		if cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
			for _, c := range cs {
				if u := c.Params["resource_metadata"]; c.Scheme == "bearer" && u != "" {
					return u, nil
				}
			}
		}
	}
	return wellKnown(resource, "oauth-protected-resource"), nil
}

// wellKnown is RFC 8615's place for name at u's origin, its path appended
// (RFC 9728 §3.1, RFC 8414 §3.1).
func wellKnown(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	path := strings.TrimSuffix(p.Path, "/")
	p.Path, p.RawQuery, p.Fragment = "/.well-known/"+name+path, "", ""
	return p.String()
}

// resourceParam names the MCP server in the authorization and token
// requests (RFC 8707), so the token is for it alone.
func (d Def) resourceParam() []oauth2.AuthCodeOption {
	if d.Resource == "" {
		return nil
	}
	return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("resource", d.Resource)}
}
