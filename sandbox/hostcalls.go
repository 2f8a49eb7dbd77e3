package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Host calls cross from a worker to the host by name, with JSON arguments
// and a JSON result. Connector methods (ctx.<connector>.<method>, MCP tools
// included) are all one call, callRead, naming the connector and method, so
// a new connector needs nothing here.

// hostCallName names a host call: the constants below are all of them, and
// hostCalls serves each (a test holds the two together).
type hostCallName string

const (
	callRead          hostCallName = "read"          // Host.Read: a connector's read (readArgs)
	callRegisterInput hostCallName = "registerInput" // Host.RegisterInput (InputRequest), when its told ones are many (proxy.go)
	callPublish       hostCallName = "publish"       // Host.Publish one the host may refuse (publishArgs)
	callPeek          hostCallName = "peek"          // Host.Peek past the prefetch (peekArgs)
	callGetByIDs      hostCallName = "getByIds"      // Host.GetByIDs (peekArgs)
)

type readArgs struct {
	Connector string         `json:"connector"`
	Method    string         `json:"method"`
	Params    map[string]any `json:"params"`
}

type publishArgs struct {
	Topics    []string        `json:"topics"`
	MessageID string          `json:"messageId"`
	InputID   string          `json:"inputId,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
}

// toldCall is a host call a worker tells instead of asking (proxy.go):
// a registerInput when Input is set, else a publish the host cannot refuse.
type toldCall struct {
	Input *InputRequest
	Pub   publishArgs
}

// size is about what the call adds to a frame.
func (t toldCall) size() int {
	if in := t.Input; in != nil {
		return len(in.Source) + len(in.Type) + len(in.ID) + len(in.Title) + 8
	}
	n := len(t.Pub.MessageID) + len(t.Pub.InputID) + len(t.Pub.Payload) + 8
	for _, topic := range t.Pub.Topics {
		n += len(topic) + 2
	}
	return n
}

type peekArgs struct {
	Topic string   `json:"topic"`
	Limit int      `json:"limit,omitempty"`
	IDs   []string `json:"ids,omitempty"`
}

type logArgs struct {
	Level string `json:"level"`
	Line  string `json:"line"`
}

// hostCall serves one host call. own says the call only reads or notes
// keep's own state: it is served where its frame is read (remote.go,
// conversation.call). Any other — a connector's, which may wait on a
// service outside keep, and any call added without saying — is served on a
// goroutine of its own, so a call that never returns cannot hold the run
// past its bound.
type hostCall struct {
	serve func(ctx context.Context, h Host, args json.RawMessage) (any, error)
	own   bool
}

var hostCalls = map[hostCallName]hostCall{
	callRead: {serve: func(ctx context.Context, h Host, raw json.RawMessage) (any, error) {
		var a readArgs
		if err := decodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return h.Read(ctx, a.Connector, a.Method, a.Params)
	}},
	callRegisterInput: {own: true, serve: func(ctx context.Context, h Host, raw json.RawMessage) (any, error) {
		var a InputRequest
		if err := decodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return nil, h.RegisterInput(ctx, a)
	}},
	callPublish: {own: true, serve: func(ctx context.Context, h Host, raw json.RawMessage) (any, error) {
		var a publishArgs
		if err := decodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return nil, a.publish(ctx, h)
	}},
	callPeek: {own: true, serve: func(ctx context.Context, h Host, raw json.RawMessage) (any, error) {
		var a peekArgs
		if err := decodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return h.Peek(ctx, a.Topic, a.Limit)
	}},
	callGetByIDs: {own: true, serve: func(ctx context.Context, h Host, raw json.RawMessage) (any, error) {
		var a peekArgs
		if err := decodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return h.GetByIDs(ctx, a.Topic, a.IDs)
	}},
}

func (a publishArgs) publish(ctx context.Context, h Host) error {
	return h.Publish(ctx, a.Topics, PublishRequest{MessageID: a.MessageID, InputID: a.InputID, Payload: a.Payload})
}

// takeTold gives h the registrations and publishes a worker told it
// (proxy.go), in order. A refusal is the run's failure, as the call's own
// would have made it: the error, after where, names the operation; the
// host's error is kept in hostErrs.
func takeTold(ctx context.Context, h Host, told []toldCall, hostErrs *hostErrors, where string) *wireErr {
	for _, t := range told {
		op, err := "ctx.publish", error(nil)
		if t.Input != nil {
			op, err = "ctx.registerInput", h.RegisterInput(ctx, *t.Input)
		} else {
			err = t.Pub.publish(ctx, h)
		}
		if err != nil {
			return &wireErr{Text: fmt.Sprintf("%s%s: %v", where, op, err), Host: hostErrs.add(err)}
		}
	}
	return nil
}

func decodeArgs(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("sandbox: the worker sent arguments that are not JSON: %w", err)
	}
	return nil
}

// serveCall runs one call of a worker against the run's Host. A host error
// is kept in hostErrs; the worker gets its text and index.
func serveCall(ctx context.Context, h Host, f *frame, hostErrs *hostErrors) (rep *frame) {
	rep = &frame{Op: opReply}
	defer func() {
		if p := recover(); p != nil {
			rep = &frame{Op: opReply, Err: &wireErr{Text: fmt.Sprintf("sandbox: panic in host code: %v", p)}}
		}
	}()
	if rep.Err = takeTold(ctx, h, f.Told, hostErrs, ""); rep.Err != nil {
		return rep
	}
	call, ok := hostCalls[f.Name]
	if !ok {
		rep.Err = &wireErr{Text: fmt.Sprintf("sandbox: the worker called %q, which the host does not serve", f.Name)}
		return rep
	}
	res, err := call.serve(ctx, h, f.Args)
	if err == nil {
		if raw, ok := res.(json.RawMessage); ok {
			rep.Result = raw
		} else if rep.Result, err = json.Marshal(res); err != nil {
			err = fmt.Errorf("result cannot be encoded as JSON: %w", err)
		}
	}
	if err != nil {
		rep.Result = nil
		rep.Err = &wireErr{Text: err.Error(), Host: hostErrs.add(err)}
		if errors.Is(err, context.Canceled) {
			// the worker stops the run before the script sees the error
			rep.Err.Cause = causeCanceled
		}
	}
	return rep
}
