package connectors

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// InputSource is implemented by connectors whose items can be a workflow's
// inputs (chapter 06a "Known Sources"): it lists the input types it offers,
// keyed by source name (a connector may offer several, as mail does for
// "mail" and "gmail").
type InputSource interface {
	InputTypes() map[string][]string
}

// Registry holds the connectors a host offers to workflows.
type Registry struct {
	byName  map[string]Connector
	sources map[string][]string
	held    *Held
}

// NewRegistry returns an empty registry. Sources with no connector of their
// own (calendar) can be added with AddSource.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]Connector{}, sources: map[string][]string{}, held: NewHeld()}
}

// Held is the set of secrets the connectors were given: the host scrubs
// every answer of a connector through it.
func (r *Registry) Held() *Held { return r.held }

// ShareHeld makes r hold the secrets of h (a registry wrapping another's
// connectors answers with the same secrets).
func (r *Registry) ShareHeld(h *Held) { r.held = h }

// Register adds c under its name and under each alias (the gmail preset is
// the mail connector under another name). It panics on a duplicate name:
// that is a wiring bug, not a runtime condition.
func (r *Registry) Register(c Connector, aliases ...string) {
	for _, name := range append([]string{c.Name()}, aliases...) {
		if _, dup := r.byName[name]; dup {
			panic("connectors: duplicate connector name " + name)
		}
		r.byName[name] = c
	}
	if s, ok := c.(InputSource); ok {
		for src, types := range s.InputTypes() {
			r.AddSource(src, types...)
		}
	}
}

// AddSource declares an input source and its types. It panics on a name
// with a colon, a wiring bug: a script's inputId is source:type:id
// (sandbox.InputID), read back by its first two colons.
func (r *Registry) AddSource(source string, types ...string) {
	for _, name := range append([]string{source}, types...) {
		if name == "" || strings.Contains(name, ":") {
			panic(fmt.Sprintf("connectors: input source %q, type %q: names are not empty and hold no colon", source, name))
		}
	}
	seen := map[string]bool{}
	for _, t := range r.sources[source] {
		seen[t] = true
	}
	for _, t := range types {
		if !seen[t] {
			r.sources[source] = append(r.sources[source], t)
			seen[t] = true
		}
	}
}

// Close stops every connector that holds a process or a connection (an
// io.Closer: an MCP server), each once, and returns the first error.
func (r *Registry) Close() error {
	var first error
	done := map[Connector]bool{}
	for _, c := range r.byName {
		cl, ok := c.(io.Closer)
		if !ok || done[c] {
			continue
		}
		done[c] = true
		if err := cl.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Keyed hands secret to every connector that derives names from the
// host's keys (Keyed).
func (r *Registry) Keyed(secret []byte) {
	for _, c := range r.byName {
		if k, ok := c.(Keyed); ok {
			k.UseSecret(secret)
		}
	}
}

// Get returns the connector registered under name.
func (r *Registry) Get(name string) (Connector, bool) {
	c, ok := r.byName[name]
	return c, ok
}

// Names lists every registered name (aliases included), sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup finds a method of a connector.
func (r *Registry) Lookup(connector, method string) (Connector, Method, error) {
	c, ok := r.byName[connector]
	if !ok {
		return nil, Method{}, fmt.Errorf("no connector %q (known: %s)", connector, strings.Join(r.Names(), ", "))
	}
	for _, m := range c.Methods() {
		if m.Name == method {
			return c, m, nil
		}
	}
	var names []string
	for _, m := range c.Methods() {
		names = append(names, m.Name)
	}
	return nil, Method{}, fmt.Errorf("connector %q has no method %q (it has: %s)", connector, method, strings.Join(names, ", "))
}

// Capability reads a capability, "connector.method" as grants and
// approvals name it, back into its connector and method. A method may hold
// dots of its own (an MCP tool "items.create" is the capability
// mcp.NAME.items.create): the connector is the registered one the name
// starts with that has that method; failing one, the name is cut at its
// last dot. ok is false for a name without a dot.
func (r *Registry) Capability(capability string) (connector, method string, ok bool) {
	for i := strings.Index(capability, "."); i > 0; i = nextDot(capability, i) {
		if _, _, err := r.Lookup(capability[:i], capability[i+1:]); err == nil {
			return capability[:i], capability[i+1:], true
		}
	}
	i := strings.LastIndex(capability, ".")
	if i <= 0 {
		return "", "", false
	}
	return capability[:i], capability[i+1:], true
}

// ScopeKindOf is what the scope of a call of capability names
// (Method.ScopeKind); ScopeName for a capability no connector has.
func (r *Registry) ScopeKindOf(capability string) ScopeKind {
	conn, meth, ok := r.Capability(capability)
	if !ok {
		return ScopeName
	}
	_, m, err := r.Lookup(conn, meth)
	if err != nil {
		return ScopeName
	}
	return m.ScopeKind
}

func nextDot(s string, i int) int {
	j := strings.Index(s[i+1:], ".")
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// Resolve is Lookup for a call about to be made with params: every call a
// script makes goes out through it, so a field the method does not declare
// (Undeclared) is refused for every connector alike, before the connector
// sees the call. Its errors are Logic: the script's call is wrong.
func (r *Registry) Resolve(connector, method string, params map[string]any) (Connector, Method, error) {
	c, m, err := r.Lookup(connector, method)
	if err != nil {
		return nil, Method{}, Errorf(Logic, "%v", err)
	}
	if err := Undeclared(connector, m, params); err != nil {
		return nil, Method{}, err
	}
	return c, m, nil
}

// MethodRef names one method of one registered connector.
type MethodRef struct {
	Connector  string
	Method     string
	Kind       Kind
	Args       []Arg
	OpenArgs   bool   // Method.OpenArgs
	Uncallable string // Method.Uncallable
}

// Catalog lists every method under every registered name, for the sandbox to
// build its facades from.
func (r *Registry) Catalog() []MethodRef {
	var refs []MethodRef
	for _, name := range r.Names() {
		for _, m := range r.byName[name].Methods() {
			refs = append(refs, MethodRef{Connector: name, Method: m.Name, Kind: m.Kind, Args: m.Args, OpenArgs: m.OpenArgs, Uncallable: m.Uncallable})
		}
	}
	return refs
}

// CheckInput returns nil if source and typ are a known input source and
// type, or an error listing the valid ones.
func (r *Registry) CheckInput(source, typ string) error {
	types, ok := r.sources[source]
	if !ok {
		var all []string
		for s := range r.sources {
			all = append(all, s)
		}
		sort.Strings(all)
		return fmt.Errorf("unknown input source %q; valid sources: %s", source, strings.Join(all, ", "))
	}
	for _, t := range types {
		if t == typ {
			return nil
		}
	}
	return fmt.Errorf("input source %q has no type %q; valid types: %s", source, typ, strings.Join(types, ", "))
}

// Sources lists every input source with its types, sources sorted.
func (r *Registry) Sources() []Source {
	out := make([]Source, 0, len(r.sources))
	for s, types := range r.sources {
		out = append(out, Source{Name: s, Types: append([]string(nil), types...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Source is an input source and the input types it offers.
type Source struct {
	Name  string
	Types []string
}
