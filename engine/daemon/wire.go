// Package daemon carries engine.API over a unix socket next to the database
// (DESIGN.md §5): while a daemon holds the database, every other keep process
// (the TUI, `keep approve`, …) acts through it instead of opening a second
// engine, which the database lock would refuse anyway.
//
// The wire is HTTP/1.1 over the socket: one POST endpoint per API method
// under /v1/ (declared once, in routes.go, for client and server), a JSON
// request body, and a JSON answer (status 200) or a JSON
// errorBody (any other status). Subscribe is a long-lived response of
// newline-delimited JSON notifications. HTTP buys framing, cancellation
// (closing the connection cancels the handler's context) and a protocol
// anyone can poke with `curl --unix-socket` for the price of no dependency.
package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"

	"keep/engine"
	"keep/engine/api"
	"keep/sandbox"
)

const (
	pathPrefix    = "/v1/"
	subscribePath = pathPrefix + "subscribe"
	// screenParam=1 on subscribePath asks for SubscribeScreen's stream.
	screenParam = "screen"
	// baseURL: the host part is ignored, the transport always dials the socket.
	baseURL = "http://keep"
	// maxBody caps a request body: a deploy carries a whole script, nothing
	// else comes near this.
	maxBody = 32 << 20
)

// request is the body of every method: each reads the fields it needs.
// One type rather than one per method keeps each route in routes.go to its
// call; unknown fields are rejected so a newer client talking to an
// older daemon fails loudly instead of being half-understood.
type request struct {
	Workflow   string         `json:"workflow,omitempty"`
	Name       string         `json:"name,omitempty"`
	Page       page           `json:"page"`
	Filter     eventFilter    `json:"filter"`
	Status     string         `json:"status,omitempty"`
	RunID      string         `json:"run_id,omitempty"`
	FileName   string         `json:"file_name,omitempty"`
	Src        []byte         `json:"src,omitempty"`
	MutationID string         `json:"mutation_id,omitempty"`
	Always     bool           `json:"always,omitempty"`
	Answer     api.Answer     `json:"answer,omitempty"`
	EventIDs   []string       `json:"event_ids,omitempty"`
	InputID    string         `json:"input_id,omitempty"`
	Grant      *api.GrantView `json:"grant,omitempty"`
	Path       string         `json:"path,omitempty"` // backup
	// Proposal and ProposalID: propose, accept-proposal, reject-proposal.
	Proposal   *api.ProposalRequest `json:"proposal,omitempty"`
	ProposalID string               `json:"proposal_id,omitempty"`
	// Try: try-change's options.
	Try *api.TryOptions `json:"try,omitempty"`
}

// page and eventFilter are engine.Page and engine.EventFilter with
// snake_case names on the wire. They convert to each other directly, so a
// field added to the engine's type breaks the build here rather than being
// dropped silently.
type page struct {
	Before int64  `json:"before"`
	Limit  int    `json:"limit"`
	Filter string `json:"filter"`
	// omitempty: a page from the newest end reads the same to a daemon
	// that predates these two, and one from the oldest end is refused by it.
	After  int64 `json:"after,omitempty"`
	Oldest bool  `json:"oldest,omitempty"`
}

type eventFilter struct {
	Topic  string `json:"topic"`
	Status string `json:"status"`
	Before int64  `json:"before"`
	Limit  int    `json:"limit"`
}

// Error kinds: what the client needs to rebuild an error that errors.Is and
// errors.As recognise as the engine's own.
const (
	kindRefused    = "refused"
	kindNotFound   = "not_found"
	kindValidation = "validation"
	kindError      = "error"
)

type errorBody struct {
	Kind string `json:"kind"`
	// Message is err.Error() on the daemon's side, unchanged: the CLI
	// prints it, so the user reads the same words attached or not.
	Message     string       `json:"message"`
	Diagnostics []diagnostic `json:"diagnostics,omitempty"`
}

type diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
}

// toWire classifies err for the wire and picks the HTTP status that goes
// with it (only for someone reading the traffic: the client goes by kind).
func toWire(err error) (int, errorBody) {
	b := errorBody{Kind: kindError, Message: err.Error()}
	var ve *sandbox.ValidationError
	switch {
	case errors.As(err, &ve):
		b.Kind = kindValidation
		b.Diagnostics = make([]diagnostic, len(ve.Diagnostics))
		for i, d := range ve.Diagnostics {
			b.Diagnostics[i] = diagnostic(d)
		}
		return http.StatusUnprocessableEntity, b
	case errors.Is(err, engine.ErrRefused):
		b.Kind = kindRefused
		return http.StatusConflict, b
	case errors.Is(err, engine.ErrNotFound):
		b.Kind = kindNotFound
		return http.StatusNotFound, b
	}
	return http.StatusInternalServerError, b
}

// fromWire rebuilds the daemon's error on the client's side.
func fromWire(b errorBody) error {
	switch b.Kind {
	case kindValidation:
		ve := &sandbox.ValidationError{Diagnostics: make([]sandbox.Diagnostic, len(b.Diagnostics))}
		for i, d := range b.Diagnostics {
			ve.Diagnostics[i] = sandbox.Diagnostic(d)
		}
		// The engine returns the validation error bare; hand it back bare
		// too, so a type assertion works as well as errors.As.
		if ve.Error() == b.Message {
			return ve
		}
		return &remoteError{msg: b.Message, cause: ve}
	case kindRefused:
		return &remoteError{msg: b.Message, cause: engine.ErrRefused}
	case kindNotFound:
		return &remoteError{msg: b.Message, cause: engine.ErrNotFound}
	}
	return errors.New(b.Message)
}

// remoteError is an error the daemon returned: its message exactly as the
// engine wrote it, over the sentinel (or validation error) it wrapped there.
// fmt.Errorf("%w: …") would print the sentinel's text twice.
type remoteError struct {
	msg   string
	cause error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cause }

var rawType = reflect.TypeFor[json.RawMessage]()

// nullRawToNil turns every json.RawMessage "null" reachable from v (a
// pointer to a decoded answer) back into nil. The engine leaves an absent
// result or payload nil, which encodes as null, which decodes as the four
// bytes "null": without this, a front end testing len(m.Result) == 0 would
// see a result attached that it does not see in process.
func nullRawToNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			nullRawToNil(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				nullRawToNil(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type() == rawType {
			if v.CanSet() && bytes.Equal(v.Bytes(), []byte("null")) {
				v.SetBytes(nil)
			}
			return
		}
		for i := range v.Len() {
			nullRawToNil(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			nullRawToNil(v.Index(i))
		}
	case reflect.Map:
		// Map values are not addressable: fix a copy and put it back.
		iter := v.MapRange()
		for iter.Next() {
			e := reflect.New(iter.Value().Type()).Elem()
			e.Set(iter.Value())
			nullRawToNil(e)
			v.SetMapIndex(iter.Key(), e)
		}
	}
}
