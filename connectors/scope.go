package connectors

import "strings"

// A call's scope may name several places: a send's recipient domains, a
// move's source and destination. It stays one string, as grants store
// and decisions pass it, and ScopeParts reads it back into its parts, so
// that a grant decides each part and a call is allowed only if every part
// is. Hosts hold no comma, so theirs joins them. Paths may hold any byte
// but NUL, which no file name can (the kernel takes C strings, and so
// does an argument typed on the command line): it joins paths, and
// PathsScope writes a NUL inside one path as text, so a part is never
// made from a piece of a path.

// pathSep joins the paths of a ScopePath scope naming several.
const pathSep = "\x00"

// PathsScope is the scope of a call that touches each of paths.
func PathsScope(paths ...string) string {
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = strings.ReplaceAll(p, pathSep, `\x00`)
	}
	return strings.Join(parts, pathSep)
}

// ScopeParts is what a scope of kind names, one by one: its hosts, its
// paths, else itself. An empty scope is one part, "".
func ScopeParts(scope string, kind ScopeKind) []string {
	switch kind {
	case ScopeHosts:
		return strings.Split(scope, ",")
	case ScopePath:
		return strings.Split(scope, pathSep)
	}
	return []string{scope}
}

// ShownScope is a scope as a person reads it: the paths of a scope naming
// several joined by " and ".
func ShownScope(scope string, kind ScopeKind) string {
	if kind == ScopePath {
		return strings.ReplaceAll(scope, pathSep, " and ")
	}
	return scope
}
