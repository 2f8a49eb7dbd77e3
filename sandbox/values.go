package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dop251/goja"
)

// fromJSON parses host JSON into the runtime with JSON.parse semantics; nil
// is undefined.
func (r *run) fromJSON(raw json.RawMessage) (goja.Value, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return goja.Undefined(), nil
	}
	return r.parseJSON(string(raw))
}

// parseJSON is JSON.parse(text) of the runtime (jsondec.go).
func (r *run) parseJSON(text string) (goja.Value, error) {
	if v, ok := decodeJSON(r.vm, text); ok {
		return v, nil
	}
	parse := r.hostParse()
	if parse == nil {
		return nil, errors.New("sandbox: the runtime has no JSON.parse")
	}
	return parse(goja.Undefined(), r.vm.ToValue(text))
}

// toJSON encodes a script value with the runtime's own JSON.stringify (so
// toJSON and undefined-dropping behave as the script expects) and checks the
// size against max. undefined encodes as null.
func (r *run) toJSON(v goja.Value, what string, max int) (json.RawMessage, error) {
	if v == nil || goja.IsUndefined(v) {
		return json.RawMessage("null"), nil
	}
	r.encodeCut = false
	out, err := r.encode(v)
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			return nil, &Error{Kind: ErrLogic, Message: fmt.Sprintf("%s cannot be encoded as JSON: %s", what, safeString(ex.Value()))}
		}
		return nil, err // an interrupt: the recorded failure wins
	}
	if goja.IsUndefined(out) {
		return nil, &Error{Kind: ErrLogic, Message: fmt.Sprintf("%s cannot be encoded as JSON (it is a %s)", what, typeOf(v))}
	}
	s := out.String()
	if r.encodeCut {
		return nil, &Error{Kind: ErrLogic, Message: fmt.Sprintf("%s is more than %d bytes of JSON, over the limit of %d bytes", what, r.maxEncode, max)}
	}
	if len(s) > max {
		return nil, &Error{Kind: ErrLogic, Message: fmt.Sprintf("%s is %d bytes of JSON, over the limit of %d bytes", what, len(s), max)}
	}
	return json.RawMessage(s), nil
}

func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case isFunction(v):
		return "function"
	case isArray(v):
		return "array"
	case isObject(v):
		return "object"
	case isString(v):
		return "string"
	case isNumber(v):
		return "number"
	case isSymbol(v):
		return "symbol"
	}
	return fmt.Sprintf("%T", v.Export())
}

var prepareFields = []string{"reservations", "data", "ui", "wakeAt"}

// reservations checks prepare's reservations: each on a topic the consumer
// subscribes to.
func (r *run) reservations(raw json.RawMessage, bad func(format string, args ...any) error) ([]Reservation, error) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, bad("reservations that are not an array of { topic, ids }")
	}
	out := []Reservation{}
	for i, it := range items {
		var res struct {
			Topic *string   `json:"topic"`
			IDs   *[]string `json:"ids"`
		}
		if json.Unmarshal(it, &res) != nil || res.Topic == nil || res.IDs == nil {
			return nil, bad("reservations[%d] that is not { topic: string, ids: string[] }", i)
		}
		if !slices.Contains(r.decl.subscribe, *res.Topic) {
			return nil, bad("reservations[%d] on topic %q, which consumer %q does not subscribe to", i, *res.Topic, r.inv.Handler)
		}
		ids := *res.IDs
		if ids == nil {
			ids = []string{}
		}
		out = append(out, Reservation{Topic: *res.Topic, IDs: ids})
	}
	return out, nil
}

// prepareResult checks the shape of what prepare returned (06b).
func (r *run) prepareResult(v goja.Value) (*PrepareResult, error) {
	bad := func(format string, args ...any) error {
		return &Error{Kind: ErrLogic, Message: "prepare returned " + fmt.Sprintf(format, args...)}
	}
	if !isObject(v) || isArray(v) || isFunction(v) {
		return nil, bad("%s; it must return { reservations, data, ui?, wakeAt? }", typeOf(v))
	}
	raw, err := r.toJSON(v, "the prepared data", r.lim.MaxData)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, bad("something that is not a JSON object: %v", err)
	}
	for k := range fields {
		if !slices.Contains(prepareFields, k) {
			return nil, bad("an unknown field %q (allowed: reservations, data, ui, wakeAt)", k)
		}
	}
	present := func(k string) bool { return len(fields[k]) > 0 && string(fields[k]) != "null" }

	pr := &PrepareResult{Reservations: []Reservation{}}
	if present("reservations") {
		if pr.Reservations, err = r.reservations(fields["reservations"], bad); err != nil {
			return nil, err
		}
	}
	var ui json.RawMessage
	if present("ui") {
		var u map[string]json.RawMessage
		if json.Unmarshal(fields["ui"], &u) != nil {
			return nil, bad("ui that is not an object { title }")
		}
		if t, ok := u["title"]; ok && string(t) != "null" {
			if json.Unmarshal(t, &pr.UITitle) != nil {
				return nil, bad("ui.title that is not a string")
			}
		}
		ui = fields["ui"]
	}
	if present("wakeAt") {
		if json.Unmarshal(fields["wakeAt"], &pr.WakeAt) != nil {
			return nil, bad("wakeAt that is not a string (an ISO 8601 time)")
		}
	}
	data := fields["data"]
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	pr.Raw, err = json.Marshal(struct {
		Reservations []Reservation   `json:"reservations"`
		Data         json.RawMessage `json:"data"`
		UI           json.RawMessage `json:"ui,omitempty"`
		WakeAt       string          `json:"wakeAt,omitempty"`
	}{pr.Reservations, data, ui, pr.WakeAt})
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode prepare result: %w", err)
	}
	if len(pr.Raw) > r.lim.MaxData {
		return nil, &Error{Kind: ErrLogic, Message: fmt.Sprintf(
			"the prepared data is %d bytes of JSON, over the limit of %d bytes", len(pr.Raw), r.lim.MaxData)}
	}
	return pr, nil
}
