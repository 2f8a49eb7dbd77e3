// Package connectors defines the contract between the host and the external
// systems a workflow touches: every method is a read, a read by id, or a
// mutation, and every mutation says how its outcome is reconciled and how its
// actual parameters are shown to a person.
//
// Connectors know nothing of SQL, goja or the TUI. Values crossing the
// contract are JSON-shaped: map[string]any, []any, string, float64, int64,
// bool, nil.
package connectors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is what a method does to the outside world.
type Kind string

const (
	Read     Kind = "read"       // list, search, scan
	ReadByID Kind = "read_by_id" // one object by its identifier
	Mutate   Kind = "mutate"     // an external side effect
)

// Method describes one method of a connector.
type Method struct {
	Name string
	Kind Kind
	// Scope names, for a mutation, the thing a grant may be narrowed to (a
	// path, a host, a recipient domain, a channel, a sheet file), taken from
	// the actual parameters. Nil: the method has no scope.
	Scope func(params map[string]any) string
	// ScopeKind says what Scope names, so that a grant's scope covers a
	// call's by that kind's rule, never by a guess from the text. The zero
	// kind, a name, is covered only by itself: a method that does not say
	// asks more, never less.
	ScopeKind ScopeKind
	// Preview renders the actual parameters for a person, one line, for
	// approvals and the ledger. Nil: the host shows the parameters as JSON.
	Preview func(params map[string]any) string
	// Check is the manual check a person can do when the outcome is unknown
	// ("look in #finance", "look for the file notes/a.txt").
	Check func(params map[string]any) string

	// The reference (`keep help api`, keep.d.ts) is generated from these
	// fields, so a method cannot exist undocumented.

	// Doc says in one sentence what the method does.
	Doc string
	// Args are the fields of the method's one argument object. A call
	// holding any other field is refused before it reaches the connector
	// (Undeclared): a misspelt or unsupported field would otherwise be
	// dropped, and the call do something else than the script asked.
	Args []Arg
	// OpenArgs, when set, lets a call hold fields beyond Args: the
	// method's own contract takes them (an MCP tool whose input schema
	// declares no properties or allows additional ones).
	OpenArgs bool
	// Refuses says why a field a script may expect the method to take is
	// not among Args, in place of the plain refusal: by field, what
	// follows "connector.method " in the error ("acts on every
	// occurrence …").
	Refuses map[string]string
	// Result is the TypeScript type of what the call resolves to
	// ("{ path: string, size: number }").
	Result string
	// Reconcile says, for a mutation, how an unknown outcome is checked
	// ("re-reads the file and compares it with what the ledger says").
	Reconcile string
	// Example is one line of JavaScript calling the method through ctx.
	Example string
	// Uncallable, when set, says why keep cannot call the method (an MCP
	// tool that runs only as a task): validate refuses a call of it.
	Uncallable string
}

// Arg is one field of a method's argument object.
type Arg struct {
	Name     string
	Type     string // a TypeScript type: "string", "number", "Record<string, string>", ...
	Required bool
	Doc      string
	// Fields, for an object whose keys the connector reads by name
	// (http.request's reconcile: { url }), are its fields: a call holding
	// another, lacking a required one, or passing no object there is
	// refused as an undeclared top-level field is (Undeclared). An object
	// the connector takes whole (headers, json) declares none and stays
	// open. Leave Type empty: TS derives it from Fields, so what keep.d.ts
	// says and what the host checks are one declaration.
	Fields []Arg
}

// TS is the argument's TypeScript type: Type, or the object type Fields
// make ("{ tool: string, args?: Record<string, any> }").
func (a Arg) TS() string {
	if a.Type != "" || len(a.Fields) == 0 {
		return a.Type
	}
	parts := make([]string, len(a.Fields))
	for i, f := range a.Fields {
		opt := "?"
		if f.Required {
			opt = ""
		}
		parts[i] = f.Name + opt + ": " + f.TS()
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// Call is one invocation of a method.
type Call struct {
	Method string
	Params map[string]any
	// IdempotencyKey is derived by the host from the mutation id; empty for
	// reads. A connector passes it on the way its service allows (a header,
	// a Message-ID, a hidden column) and uses it to reconcile.
	IdempotencyKey string
	// SyncLater, when the host sets it, takes the step that makes a
	// mutation's effect durable (an appended file's sync) from a connector
	// that would otherwise wait for it before returning: called at most
	// once, on Do's goroutine, once the effect is made, and Do then returns
	// without syncing. The host runs sync at once and lets no record of the
	// outcome reach the disk before sync has succeeded, so a power cut
	// never leaves the ledger saying done of an effect it took back.
	SyncLater func(sync func() error)
	// Unfinished, when the host sets it, is called on Do's goroutine by a
	// read that listed a folder and left out a file another process is
	// still writing (files.list). Nothing else tells of the moment the
	// writer is done with it, so a watch of the folder must look again on
	// its own (engine/watch.go).
	Unfinished func()
}

// Connector is one external system.
type Connector interface {
	Name() string
	Methods() []Method
	// Do performs a read or a mutation. Errors should be *Error so the host
	// can classify them; any other error is taken as internal.
	Do(ctx context.Context, call Call) (any, error)
}

// FolderLister is a connector some of whose reads list a folder: it says
// which, by the folder's real path. A watched folder's changes seen before
// such a read starts are in what it lists, so they need no run of their
// own after it (engine/watch.go).
type FolderLister interface {
	ListedFolder(method string, params map[string]any) (dir string, ok bool)
}

// Account is a configured account as a connector sees it. The host holds
// the secrets (credentials.json), refreshes OAuth tokens and classifies a
// refused refresh as an Auth failure; a connector only asks for what it must
// put on the wire and never logs or returns it.
type Account interface {
	Name() string
	// Kind is "oauth2", "password", "token" (bearer) or "basic".
	Kind() string
	// Username is the login name (an email address for mail providers).
	Username() string
	// Secret is the password (password, basic) or a current bearer token
	// (token, oauth2: refreshed before it expires). Its error is an *Error
	// of class Auth when the user must sign in again.
	Secret(ctx context.Context) (string, error)
	// Invalidate reports that the service refused the secret (a 401), so an
	// oauth2 account refreshes before the next Secret.
	Invalidate()
}

// Verdict is a reconciler's answer about a mutation whose outcome is unknown.
type Verdict string

const (
	Applied    Verdict = "applied"     // it happened; the result is returned
	NotApplied Verdict = "not_applied" // it definitely did not happen
	Unknown    Verdict = "unknown"     // can't tell yet
)

// ErrCannotCheck is returned by Reconcile when this particular call offers no
// way to find out (an http request without a reconcile URL, a webhook post):
// the host then asks the user at once instead of retrying.
var ErrCannotCheck = errors.New("the connector cannot check whether this happened")

// Reconciler is implemented by connectors that can find out, after the fact,
// whether a mutation happened. A connector without it sends every uncertain
// mutation straight to the user.
type Reconciler interface {
	Reconcile(ctx context.Context, call Call) (Verdict, any, error)
}

// ScopeKind is what a method's scope names (Method.ScopeKind).
type ScopeKind uint8

const (
	// ScopeName: a channel, a mailbox, a calendar: a grant for it covers
	// it alone.
	ScopeName ScopeKind = iota
	// ScopePath: files or folders (PathsScope): a grant for a folder
	// covers what is in it, and a call is covered only if each of its
	// paths is.
	ScopePath
	// ScopeHosts: host names or mail domains, comma-separated: a grant
	// for a domain covers its sub-domains, and a call is covered only if
	// each of its hosts is.
	ScopeHosts
)

// Keyed is a connector that derives names from the host's keys (a mail
// send's Message-ID, which Reconcile looks for): the keys are public (they
// go to services as Idempotency-Key), so a name made from one alone could
// be forged. The host hands such a connector a secret of its database's,
// the same across restarts and never in a script's reach, before any call.
type Keyed interface {
	UseSecret(secret []byte)
}

// Class is how the host treats a failure (DESIGN.md §7.2). Connectors
// classify at the source; the host never guesses from a message.
type Class string

const (
	// Transient: nothing was done and trying again later may work
	// (connection refused, 429, 503, a timeout before sending).
	Transient Class = "transient"
	// Logic: the request itself is wrong (a 4xx the script caused, a bad
	// parameter); a retry of the same call will fail the same way.
	Logic Class = "logic"
	// Auth: credentials are missing, expired or refused.
	Auth Class = "auth"
	// Permission: the call is outside what the connector's config allows
	// (a path outside the roots, a host not in allow_hosts).
	Permission Class = "permission"
	// Uncertain: a mutation may have reached the other side (a timeout
	// after sending, a reset, an ambiguous 5xx). Never used for reads.
	Uncertain Class = "uncertain"
	// Internal: a bug on our side.
	Internal Class = "internal"
)

// Error is a classified connector failure.
type Error struct {
	Class Class
	// RetryAfter is the service's own hint for transient failures.
	RetryAfter time.Duration
	// NotSent: the call never reached the service (a refused connection, a
	// name that does not resolve, a failed handshake): nothing was done, so
	// the host sends the same mutation again after a back-off, as it does
	// after a service's own "try again" (429, 503), never reconciling it.
	NotSent bool
	Err     error
}

func (e *Error) Error() string { return string(e.Class) + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a classified error.
func Errorf(class Class, format string, args ...any) *Error {
	return &Error{Class: class, Err: fmt.Errorf(format, args...)}
}

// ClassOf returns the class of err: the class of the first *Error in its
// chain, or Internal for any other non-nil error.
func ClassOf(err error) Class {
	if err == nil {
		return ""
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Class
	}
	return Internal
}
