// Package http is the connector for plain HTTP: get, a read, and request
// (POST, PUT, PATCH, DELETE), a mutation that carries the host's
// Idempotency-Key and is reconciled through an optional URL the script
// names.
//
// The package is named http after its folder; it imports net/http as
// nethttp.
//
// Outcomes are classified here, at the source (DESIGN §6, §7.2, §7.3): for
// a mutation, anything that may have reached the server (a timeout, reset
// or EOF after the request was written, an ambiguous 5xx) is uncertain,
// never a failure; a definite refusal (a 4xx, a connection that never
// opened) is not. Reads are never uncertain.
package http

import (
	"context"
	nethttp "net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"keep/connectors"
)

// Config configures the http connector. Zero values take the defaults.
type Config struct {
	// AllowHosts are the host names the connector may call: "example.com"
	// (any port), "example.com:8443" (that port only) or "*.example.com"
	// (any subdomain). Case, one trailing dot, and Unicode or punycode are
	// spellings of one name, and a URL without a port is on its scheme's
	// default one, so "example.com:443" allows https://example.com
	// (hosts.go). A malformed entry fails New.
	// Empty: any host.
	AllowHosts []string
	// Timeout bounds each request, body included, on top of the caller's
	// deadline. Default: 30s.
	Timeout time.Duration
	// MaxBody caps a response body, in bytes. Default: 10 MiB, the size of
	// one connector result (DESIGN §8).
	MaxBody int64
	// Client sends the requests. Default: a client with its own copy of
	// net/http's default transport. It is copied, not changed: the
	// connector sets its own redirect policy on the copy.
	Client *nethttp.Client
	// Hosts are the hosts whose credentials the host holds: keep adds the
	// account's Authorization header, and a script may not set its own. A
	// key is "api.example.com" (https on 443 only; a loopback name also
	// plain http on 80), "api.example.com:8443" (that port), or
	// "https://api.example.com:8443", "http://10.0.0.2:8080" (that scheme
	// and port; without a port, the scheme's default).
	Hosts map[string]connectors.Account
}

// Defaults for Config.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMaxBody = 10 << 20
)

// Connector performs HTTP calls.
type Connector struct {
	allow   []allowEntry
	timeout time.Duration
	maxBody int64
	client  *nethttp.Client
	hosts   []binding
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// New returns an http connector.
func New(cfg Config) (*Connector, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	var client nethttp.Client
	if cfg.Client != nil {
		client = *cfg.Client
	} else {
		client.Transport = connectors.NewHTTPTransport()
	}
	c := &Connector{timeout: cfg.Timeout, maxBody: cfg.MaxBody}
	for h, a := range cfg.Hosts {
		b, err := parseBinding(h, a)
		if err != nil {
			return nil, err
		}
		c.hosts = append(c.hosts, b)
	}
	// the most specific entry first: a scheme, then a port, said outright
	sort.Slice(c.hosts, func(i, j int) bool { return c.hosts[i].rank() > c.hosts[j].rank() })
	for _, h := range cfg.AllowHosts {
		if strings.TrimSpace(h) == "" {
			continue
		}
		e, err := parseAllow(h)
		if err != nil {
			return nil, err
		}
		c.allow = append(c.allow, e)
	}
	client.CheckRedirect = c.checkRedirect
	c.client = &client
	return c, nil
}

// Name is "http".
func (c *Connector) Name() string { return "http" }

// InputTypes: a producer polling a URL registers what it finds as resources.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{"http": {"resource"}}
}

// Methods lists get and request. Both are scoped to the URL's host name
// (without the port), so a grant reads "api.example.com".
func (c *Connector) Methods() []connectors.Method {
	urlArg := connectors.Arg{Name: "url", Type: "string", Required: true,
		Doc: "an absolute http or https URL; its host must be in [connectors.http] allow_hosts when that is set"}
	headersArg := connectors.Arg{Name: "headers", Type: "Record<string, string>",
		Doc: "request headers; for a host with an account in [connectors.http.hosts] the host adds Authorization"}
	result := "{ status: number, headers: Record<string, string>, body: string, json: any, truncated: boolean }"
	return []connectors.Method{
		{Name: "get", Kind: connectors.Read, Scope: scope, ScopeKind: connectors.ScopeHosts,
			Doc: "GETs a URL. Any answer below 500 but 429 is a result for the script to judge (json: the body parsed when it is JSON, " +
				"else null; " + headersDoc + "); a 429, a 5xx or a network failure is transient and retried later.",
			Args:    []connectors.Arg{urlArg, headersArg},
			Result:  result,
			Example: `const { status, json } = await ctx.http.get({ url: "https://api.example.com/items?since=" + state?.since })`},
		{Name: "request", Kind: connectors.Mutate, Scope: scope, ScopeKind: connectors.ScopeHosts, Preview: func(p map[string]any) string { return preview(p) + c.shownHeaders(p) },
			Check: func(p map[string]any) string { return "check " + shownURL(p) + " for the change" },
			Doc: "Sends a POST, PUT, PATCH or DELETE with an Idempotency-Key header the host derives from the mutation. " +
				"2xx is applied (" + headersDoc + "); another 4xx but 408/429 a definite refusal; 408, 429, 503 are tried again; a timeout or another 5xx is uncertain.",
			Args: []connectors.Arg{
				{Name: "method", Type: `"POST" | "PUT" | "PATCH" | "DELETE"`, Required: true},
				urlArg, headersArg,
				{Name: "json", Type: "any", Doc: "a value sent as a JSON body; or body"},
				{Name: "body", Type: "string", Doc: "a raw body; or json"},
				{Name: "reconcile", Fields: []connectors.Arg{{Name: "url", Type: "string", Required: true}},
					Doc: "a URL the host GETs when the outcome is unknown: 2xx means it happened, 404 that it did not"},
			},
			Result: result,
			Reconcile: "GETs reconcile.url when one is given (2xx applied, 404 not applied, else, or an answer from where a redirect led, asked again later); " +
				"without it an uncertain request is put to you",
			Example: `await ctx.http.request({ method: "POST", url: "https://hooks.example.com/new", json: prepared.data, reconcile: { url: "https://hooks.example.com/items/" + prepared.data.id } })`},
	}
}

// headersDoc says what a result's headers hold (withheld.go).
const headersDoc = "header names lower-case; Set-Cookie and Set-Cookie2 are withheld, as a session cookie is a credential"

// Do performs get or request.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	switch call.Method {
	case "get":
		return c.get(ctx, call.Params)
	case "request":
		return c.request(ctx, call)
	default:
		return nil, connectors.Errorf(connectors.Logic, "http has no method %q (it has: get, request)", call.Method)
	}
}

func scope(p map[string]any) string {
	s, _ := p["url"].(string)
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// shownURL is the url parameter as a person approves it
// (connectors.ShownURL); one that does not parse never reaches the wire
// (parseURL refuses it), and is shown redacted as an error would quote it.
func shownURL(p map[string]any) string {
	s, _ := p["url"].(string)
	if u, err := url.Parse(s); err == nil {
		return connectors.ShownURL(u)
	}
	return connectors.RedactURLText(s)
}
