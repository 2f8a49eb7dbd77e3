package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"keep/connectors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Do calls a tool. The script's reconcile field is keep's, not the tool's:
// it is left out of the arguments, and checked before anything is sent
// (reconcile.go). Outcomes (DESIGN.md §6): a result is
// applied; a tool error result or a JSON-RPC error is failed; a lost
// connection, a dead server or a timeout after sending is uncertain.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	tool, err := c.tool(ctx, call.Method)
	if err != nil {
		return nil, err
	}
	if why := uncallable(tool); why != "" {
		return nil, connectors.Errorf(connectors.Logic, "mcp.%s.%s cannot be called: %s", c.cfg.Name, tool.Name, why)
	}
	if err := c.checkReconcile(ctx, call.Params); err != nil {
		return nil, err
	}
	res, err := c.call(ctx, tool.Name, toolArgs(call.Params), call.IdempotencyKey)
	if err != nil {
		var big *tooLarge
		switch {
		case c.isRead(tool):
		case connectors.ClassOf(err) == connectors.Transient && !notSent(err),
			errors.As(err, &big): // it answered, with what keep could not read: the reconcile read tells
			err = &connectors.Error{Class: connectors.Uncertain, Err: err}
		}
		return nil, err
	}
	if res.IsError {
		return nil, connectors.Errorf(connectors.Logic, "mcp.%s.%s returned an error: %s", c.cfg.Name, tool.Name, clip(textOf(res), 500))
	}
	if res.NeedsInput() {
		return nil, needsInput(c.cfg.Name, tool.Name, res)
	}
	return resultValue(res), nil
}

// needsInput is the failure of a call the server answered with resultType
// "input_required" (SEP-2322): the tool has not run. The SDK answers the
// input requests it can and sends the call again, and refuses those it
// cannot (an elicitation: keep's client offers none); what reaches keep
// asks for nothing, the server's way to put a call off, and is sent again
// later. Taken for a result, it read as done: an empty success for a tool
// that never ran.
func needsInput(server, tool string, res *sdk.CallToolResult) error {
	if len(res.InputRequests) > 0 {
		return connectors.Errorf(connectors.Logic, "mcp.%s.%s did not run: the server asks for input keep does not give", server, tool)
	}
	return connectors.Errorf(connectors.Transient, "mcp.%s.%s: the server put the call off (input_required, asking for nothing): it did not run", server, tool)
}

// call makes one tools/call. Errors are classified as for a read: a
// JSON-RPC error answer is logic; anything else after sending (a lost
// connection, a timeout) is transient, and Do makes it uncertain for a
// mutation.
func (c *Connector) call(ctx context.Context, tool string, args map[string]any, key string) (*sdk.CallToolResult, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{} // servers refuse null arguments
	}
	cctx, token, dl, done := c.watchProgress(ctx) // progress.go
	defer done()
	cctx, slot := noteRefusals(cctx)
	p := &sdk.CallToolParams{Name: tool, Arguments: args, Meta: sdk.Meta{"progressToken": token}}
	if key != "" {
		p.Meta[MetaKey] = key
	}
	res, err := s.CallTool(cctx, p)
	if refused := slot.met(); refused != nil && err != nil {
		// the server refused keep's credential: nothing was done
		c.down(s, err)
		return nil, refused
	}
	var wire *jsonrpc.Error
	var shape *json.UnmarshalTypeError
	switch {
	case err == nil:
		c.healthy()
		return res, nil
	case c.life.Err() != nil && (cctx.Err() != nil || errors.Is(err, sdk.ErrConnectionClosed)):
		// Close cut the call off; Do makes a mutation uncertain, as the
		// server may have acted on it
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s.%s: keep closed the connection to the server during the call, with no answer yet: %v", c.cfg.Name, tool, err)
	case errors.Is(err, sdk.ErrConnectionClosed):
		c.down(s, err)
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s.%s: the server went away during the call: %v", c.cfg.Name, tool, err)
	case dl.hasPassed():
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s.%s: no answer within %s of its last sign of progress (at most %s in all): %v",
			c.cfg.Name, tool, c.cfg.Timeout, c.cfg.MaxTimeout, err)
	case cctx.Err() != nil:
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s.%s: %v", c.cfg.Name, tool, err)
	case errors.As(err, &wire) && wire.Code == codeTooLarge:
		// the server answered; keep did not read it (stdio.go)
		c.healthy()
		return nil, &connectors.Error{Class: connectors.Logic, Err: &tooLarge{fmt.Sprintf("mcp.%s.%s: %s", c.cfg.Name, tool, wire.Message)}}
	case errors.As(err, &shape):
		// a whole answer, to this call, that is no tool result (content
		// not a list): the session is sound, and the calls beside this
		// one go on; what the call did is for the reconcile read to tell
		c.healthy()
		return nil, &connectors.Error{Class: connectors.Logic, Err: &tooLarge{fmt.Sprintf("mcp.%s.%s: the server answered with what is no tool result: %v", c.cfg.Name, tool, err)}}
	case errors.As(err, &wire) && wire.Code == codeRejected:
		// the SDK's word for a transport failure (an HTTP request that
		// failed or lost its answer): the server may have the call
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s.%s: %v", c.cfg.Name, tool, err)
	case errors.As(err, &wire):
		c.healthy()
		return nil, &connectors.Error{Class: connectors.Logic, Err: fmt.Errorf("mcp.%s.%s refused the call: %s", c.cfg.Name, tool, wire.Message)}
	default:
		// EOF, a broken pipe, a failed POST: this session is done with
		c.down(s, err)
		return nil, connectors.Errorf(connectors.Transient, "mcp.%s.%s: %v", c.cfg.Name, tool, err)
	}
}

// tooLarge is an answer keep could not take (over the size limit, or not
// a tool result), failed in its place.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }

// codeRejected is the JSON-RPC code the SDK gives transport failures
// (jsonrpc2.ErrRejected); it is no answer of the server's.
const codeRejected = -32005

func notSent(err error) bool {
	var ce *connectors.Error
	return errors.As(err, &ce) && ce.NotSent
}

// toolArgs are the script's params without keep's own field.
func toolArgs(params map[string]any) map[string]any {
	if _, ok := params["reconcile"]; !ok {
		return params
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		if k != "reconcile" {
			out[k] = v
		}
	}
	return out
}

// resultValue is what a script gets: { text, json?, structured?, content }.
// text joins the text parts; json is text parsed, when it is JSON.
func resultValue(res *sdk.CallToolResult) map[string]any {
	out := map[string]any{"text": textOf(res)}
	var content any
	if b, err := json.Marshal(res.Content); err == nil && json.Unmarshal(b, &content) == nil && content != nil {
		out["content"] = content
	} else {
		out["content"] = []any{}
	}
	if res.StructuredContent != nil {
		var s any
		if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &s) == nil {
			out["structured"] = s
		}
	}
	var j any
	if t := strings.TrimSpace(out["text"].(string)); t != "" && json.Unmarshal([]byte(t), &j) == nil {
		out["json"] = j
	}
	return out
}

func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// clip cuts s to at most n bytes, at a character's start: a server's
// description or error cut mid-character was invalid UTF-8 in keep.d.ts,
// `keep help api` and the trace.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
