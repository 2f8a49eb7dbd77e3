package sandbox

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Manifest is everything a workflow version may do, read once from its
// source by the analysis Load runs (static.go): each connector method with
// the phases it is called in, the hosts of the URLs its text names, and
// its topics. It is plain data: stored with the version (storage keeps it as
// JSON), shown to the person (deploy, proposals, keep try), and held
// against every call the running version makes (the engine's host), so
// what the person saw is an upper bound of what runs.
type Manifest struct {
	Calls  []ManifestCall `json:"calls"`
	Hosts  []string       `json:"hosts"`
	Topics []string       `json:"topics"`
}

// ManifestCall is one connector method a version calls: "mcp.NAME" is the
// connector of an MCP tool (ctx.mcp.NAME.TOOL). Phases are where it is
// written; AnyPhase stands for a call keep could not place in one (a
// helper no phase is seen to call).
type ManifestCall struct {
	Connector string     `json:"connector"`
	Method    string     `json:"method"`
	Kind      MethodKind `json:"kind"`
	Phases    []Phase    `json:"phases"`
}

// AnyPhase is the phase of a call written where no phase is seen to reach.
const AnyPhase Phase = "any"

// Name is "connector.method", as grants and summaries name a call.
func (c ManifestCall) Name() string { return c.Connector + "." + c.Method }

// Call returns the manifest's entry for connector.method.
func (m *Manifest) Call(connector, method string) (ManifestCall, bool) {
	if m == nil {
		return ManifestCall{}, false
	}
	for _, c := range m.Calls {
		if c.Connector == connector && c.Method == method {
			return c, true
		}
	}
	return ManifestCall{}, false
}

// Allows says whether the version may call connector.method in phase
// (phase "" asks about the method alone), and if not, why, in words.
func (m *Manifest) Allows(connector, method string, phase Phase) error {
	c, ok := m.Call(connector, method)
	if !ok {
		return fmt.Errorf("ctx.%s.%s is not in this version's manifest (what it was validated and approved with): nothing was done", connector, method)
	}
	if phase == "" || slices.Contains(c.Phases, phase) || slices.Contains(c.Phases, AnyPhase) {
		return nil
	}
	return fmt.Errorf("ctx.%s.%s is in this version's manifest for %s only, not %s: nothing was done", connector, method, phasesText(c.Phases), phase)
}

func phasesText(ps []Phase) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// Names lists "connector.method" of the calls of kind (all kinds: "").
func (m *Manifest) Names(mutations bool) []string {
	out := []string{}
	if m == nil {
		return out
	}
	for _, c := range m.Calls {
		if (c.Kind == KindMutate) == mutations {
			out = append(out, c.Name())
		}
	}
	slices.Sort(out)
	return out
}

// JSON is the manifest as stored with a version.
func (m *Manifest) JSON() []byte {
	b, _ := json.Marshal(m)
	return b
}

// ParseManifest reads a stored manifest; empty is none (a version stored
// before manifests were).
func ParseManifest(b []byte) (*Manifest, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sandbox: a stored manifest is not JSON: %w", err)
	}
	return &m, nil
}

// literalURL is an http(s) URL's scheme and authority as text may hold
// it: up to the first character that ends an authority, a string or a
// template's literal text.
var literalURL = regexp.MustCompile("(?i)\\bhttps?://[^\\s/?#\"'`<>\\\\{}()|^,;]*")

// hostName is a host a person can read as one: a DNS name or an IPv4
// address (letters, digits, dots, hyphens), or an IPv6 literal.
var hostName = regexp.MustCompile(`^(?:[a-z0-9][a-z0-9.\-]*|\[[0-9a-f:.]+\])$`)

// HostsIn lists the hosts of the http(s) URLs in s, lower-case, sorted,
// once each. Each is the host net/url finds in that URL, the parse
// AllowsURL holds a request's URL to: the host a literal admits is where
// that literal goes. (Read by a pattern of its own, the user of
// https://robot:pw@api.example.com was taken for its host: that name was
// admitted on every port, and the URL as written was refused.)
func HostsIn(s string) []string {
	var out []string
	for _, m := range literalURL.FindAllString(s, -1) {
		u, err := url.Parse(m)
		if err != nil {
			continue
		}
		name := strings.ToLower(u.Hostname())
		if strings.Contains(name, ":") {
			name = "[" + name + "]"
		}
		if !hostName.MatchString(name) {
			continue
		}
		h := strings.ToLower(u.Host)
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// URLsOf are the arguments of a call that name where it goes: a top-level
// argument called url (or ending in url), and the same inside reconcile.
// Other values (a body, a JSON payload) are data, and a link inside them
// goes nowhere by itself.
func URLsOf(params map[string]any) []string {
	var out []string
	for k, v := range params {
		s, ok := v.(string)
		switch {
		case ok && strings.HasSuffix(strings.ToLower(k), "url"):
			out = append(out, s)
		case k == "reconcile":
			if r, ok := v.(map[string]any); ok {
				out = append(out, URLsOf(r)...)
			}
		}
	}
	slices.Sort(out)
	return out
}

// AllowsURL says whether raw goes to a host the file names.
// A literal without a port admits its host on any port; with one, that
// port only.
func (m *Manifest) AllowsURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL with a host this version names: nothing was done", clipText(raw, 200))
	}
	host, name := strings.ToLower(u.Host), strings.ToLower(u.Hostname())
	if m != nil {
		for _, h := range m.Hosts {
			// an IPv6 literal holds colons of its own: a port is
			// what net/url reads as one
			lit := url.URL{Host: h}
			if h == host || (lit.Port() == "" && lit.Hostname() == name) {
				return nil
			}
		}
	}
	return fmt.Errorf("host %q is not among the hosts this version's source names (%s): nothing was done", host, orNoneText(m))
}

func orNoneText(m *Manifest) string {
	if m == nil || len(m.Hosts) == 0 {
		return "none"
	}
	return strings.Join(m.Hosts, ", ")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// manifestBuilder collects what the analysis finds.
type manifestBuilder struct {
	calls map[string]*ManifestCall
	order []string
	// loose: calls seen where any phase may run them (AnyPhase stays)
	loose map[string]bool
}

func (b *manifestBuilder) add(conn, method string, kind MethodKind, phase Phase, loose bool) {
	if b.calls == nil {
		b.calls, b.loose = map[string]*ManifestCall{}, map[string]bool{}
	}
	if loose {
		b.loose[conn+"."+method], phase = true, AnyPhase
	}
	key := conn + "." + method
	c, ok := b.calls[key]
	if !ok {
		c = &ManifestCall{Connector: conn, Method: method, Kind: kind}
		b.calls[key] = c
		b.order = append(b.order, key)
	}
	if phase == "" {
		phase = AnyPhase
	}
	if !slices.Contains(c.Phases, phase) {
		c.Phases = append(c.Phases, phase)
	}
}

// build is the manifest: a call seen in a phase is not also "any" for
// being written in a helper the walk met outside it, unless a caller keep
// could not place in a phase reaches it (loose).
func (b *manifestBuilder) build(hosts, topics []string) *Manifest {
	m := &Manifest{Calls: []ManifestCall{}, Hosts: orEmpty(hosts), Topics: orEmpty(slices.Clone(topics))}
	slices.Sort(b.order)
	for _, k := range b.order {
		c := *b.calls[k]
		if len(c.Phases) > 1 && !b.loose[k] {
			c.Phases = slices.DeleteFunc(c.Phases, func(p Phase) bool { return p == AnyPhase })
		}
		slices.Sort(c.Phases)
		m.Calls = append(m.Calls, c)
	}
	slices.Sort(m.Topics)
	return m
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
