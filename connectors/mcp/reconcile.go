package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"keep/connectors"
)

// The script's reconcile field, keep's and never the tool's:
//
//	reconcile: { tool: "search_files", args: { … }, match: { … } }
//
// tool is a read of the same server, args its arguments, match what its
// structured result holds when the call happened. Only match says "it
// happened": a non-empty answer proves nothing by itself (server-filesystem's
// search_files answers {"content": "No matches found"}).
type reconcileSpec struct {
	tool  string
	args  map[string]any
	match any // nil: the script gave none
}

// reconcileFields are the fields reconcile may hold, as a mutation's
// argument declares them (tools.go): the host refuses any other before the
// call is made (connectors.Undeclared), as a typo would silently turn a
// check into a question. args is the read's own, open.
var reconcileFields = []connectors.Arg{
	{Name: "tool", Type: "string", Required: true},
	{Name: "args", Type: "Record<string, any>"},
	{Name: "match", Type: "any"},
}

// parseReconcile reads params' reconcile field; ok is false when there is
// none. A malformed one is a logic error naming the field.
func parseReconcile(params map[string]any) (spec reconcileSpec, ok bool, err error) {
	raw, present := params["reconcile"]
	if !present || raw == nil {
		return spec, false, nil
	}
	rec, isMap := raw.(map[string]any)
	if !isMap {
		return spec, false, connectors.Errorf(connectors.Logic, "reconcile must be an object { tool, args?, match? }, not %s", jsonKind(raw))
	}
	var extra []string
	for k := range rec {
		if !slices.ContainsFunc(reconcileFields, func(f connectors.Arg) bool { return f.Name == k }) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return spec, false, connectors.Errorf(connectors.Logic, "reconcile has no field %s (it takes tool, args and match)", strings.Join(extra, ", "))
	}
	spec.tool, _ = rec["tool"].(string)
	if spec.tool == "" {
		return spec, false, connectors.Errorf(connectors.Logic, "reconcile.tool must name a read tool of the same server")
	}
	if a, present := rec["args"]; present && a != nil {
		m, isMap := a.(map[string]any)
		if !isMap {
			return spec, false, connectors.Errorf(connectors.Logic, "reconcile.args must be an object, not %s", jsonKind(a))
		}
		spec.args = m
	}
	spec.match = rec["match"]
	return spec, true, nil
}

// checkReconcile refuses, before anything is sent, a reconcile field that
// could never settle the call: malformed, or naming a tool that is not a
// read.
func (c *Connector) checkReconcile(ctx context.Context, params map[string]any) error {
	spec, ok, err := parseReconcile(params)
	if err != nil || !ok {
		return err
	}
	t, err := c.tool(ctx, spec.tool)
	if err != nil {
		return connectors.Errorf(connectors.Logic, "reconcile.tool: %v", err)
	}
	if !c.isRead(t) {
		return connectors.Errorf(connectors.Logic, "reconcile.tool %q is not a read of mcp.%s (add it to reads)", spec.tool, c.cfg.Name)
	}
	return nil
}

// Reconcile settles an uncertain call. With reconcile: { tool, args, match }
// it calls the read: a structured result (structuredContent, else text that
// is JSON) holding match means it happened; one empty all the way down (a
// search that found nothing) that it did not; anything else — prose, an
// answer without match, or one match is not in — is the person's to
// answer. Without reconcile, a tool the config trusts to be idempotent is
// called again with the same key; otherwise the person is asked.
func (c *Connector) Reconcile(ctx context.Context, call connectors.Call) (connectors.Verdict, any, error) {
	spec, ok, err := parseReconcile(call.Params)
	if err != nil {
		return connectors.Unknown, nil, err
	}
	if ok {
		return c.reconcileByRead(ctx, spec)
	}
	t, err := c.tool(ctx, call.Method)
	if err != nil || !c.idempotent(t) {
		return connectors.Unknown, nil, connectors.ErrCannotCheck
	}
	res, err := c.call(ctx, t.Name, toolArgs(call.Params), call.IdempotencyKey)
	if err != nil || res.IsError || res.NeedsInput() {
		return connectors.Unknown, nil, nil
	}
	return connectors.Applied, resultValue(res), nil
}

func (c *Connector) reconcileByRead(ctx context.Context, spec reconcileSpec) (connectors.Verdict, any, error) {
	t, err := c.tool(ctx, spec.tool)
	if err != nil {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "reconcile.tool: %v", err)
	}
	if !c.isRead(t) {
		return connectors.Unknown, nil, connectors.Errorf(connectors.Logic, "reconcile.tool %q is not a read of mcp.%s (add it to reads)", spec.tool, c.cfg.Name)
	}
	res, err := c.call(ctx, spec.tool, spec.args, "")
	if err != nil || res.IsError || res.NeedsInput() {
		return connectors.Unknown, nil, nil // can't tell yet: checked again later
	}
	v := resultValue(res)
	data, structured := v["structured"]
	if !structured {
		data, structured = v["json"]
	}
	read := "mcp." + c.cfg.Name + "." + spec.tool
	switch {
	case !structured:
		return connectors.Unknown, nil, cannotTell("%s answered in prose (%q), which keep does not read as a yes or a no", read, clip(v["text"].(string), 120))
	case empty(data):
		return connectors.NotApplied, nil, nil
	case spec.match == nil:
		return connectors.Unknown, nil, cannotTell("%s found something, and reconcile gives no match to look for in it", read)
	case matches(data, spec.match):
		return connectors.Applied, v, nil
	}
	return connectors.Unknown, nil, cannotTell("%s answered %s, which does not hold reconcile.match %s", read, clip(compact(data), 160), clip(compact(spec.match), 160))
}

// cannotTell is ErrCannotCheck with the reason the person reads: the host
// asks them at once.
func cannotTell(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{connectors.ErrCannotCheck}, args...)...)
}

// matches says whether got holds want: an object holds each of want's
// fields (recursively), a list holds want when one of its elements does
// (or, for a list want, each of want's elements), anything else is equal
// as JSON (1 and 1.0 alike).
func matches(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			for k, wv := range w {
				gv, ok := g[k]
				if !ok || !matches(gv, wv) {
					return false
				}
			}
			return true
		}
	case []any:
		if g, ok := got.([]any); ok {
			for _, we := range w {
				if !slices.ContainsFunc(g, func(ge any) bool { return matches(ge, we) }) {
					return false
				}
			}
			return true
		}
	}
	if g, ok := got.([]any); ok {
		return slices.ContainsFunc(g, func(ge any) bool { return matches(ge, want) })
	}
	return compact(got) == compact(want)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// empty: nothing, or only empty lists, objects and strings all the way down
// ({"entities": [], "relations": []} is a search that found nothing).
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !empty(e) {
				return false
			}
		}
		return true
	}
	return false
}

// ResendNotApplied: a call a check found not to have happened is sent
// again as the same call, its idempotency key in _meta, never made anew.
func (c *Connector) ResendNotApplied() bool { return true }
