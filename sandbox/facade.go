package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/dop251/goja"
)

// rule is one cell of the phase matrix (chapters 06/06b; 06b wins: mutate
// makes zero or one mutator call and reads nothing).
type rule struct {
	phases []Phase
	reason string // why it is refused elsewhere
}

var (
	ruleRegisterInput = rule{[]Phase{PhaseProducer}, "inputs are registered by producers"}
	rulePublish       = rule{[]Phase{PhaseProducer, PhaseNext}, "events are published by producers and in next"}
	ruleTopicRead     = rule{[]Phase{PhasePrepare}, "topic reads only happen in prepare"}
	ruleMutate        = rule{[]Phase{PhaseMutate}, "mutations only happen in mutate"}
)

func readRule(phase Phase) rule {
	r := rule{phases: []Phase{PhaseProducer, PhasePrepare}, reason: "external reads happen in producers and prepare"}
	if phase == PhaseMutate {
		r.reason = "mutate does no external reads: read in prepare and pass what mutate needs in data"
	}
	return r
}

func kindRule(kind MethodKind, phase Phase) rule {
	if kind == KindMutate {
		return ruleMutate
	}
	return readRule(phase)
}

type hostFunc = func(call goja.FunctionCall) goja.Value

// facadeMethod is one ctx.<connector>.<method>, computed once per script.
type facadeMethod struct {
	conn, method string
	op           string // "ctx.conn.method"
	kind         MethodKind
}

// facadeConn is one ctx.<connector> object, its methods sorted by name.
type facadeConn struct {
	name    string
	methods []facadeMethod
}

// facadeTable lists the connectors of the facade, sorted by name; a
// connector may not shadow a ctx operation.
func facadeTable(methods map[string]map[string]MethodKind) []facadeConn {
	conns := make([]facadeConn, 0, len(methods))
	for c, ms := range methods {
		if builtinOps[c] {
			continue
		}
		fc := facadeConn{name: c}
		for m, kind := range ms {
			fc.methods = append(fc.methods, facadeMethod{conn: c, method: m, op: "ctx." + c + "." + m, kind: kind})
		}
		sort.Slice(fc.methods, func(i, j int) bool { return fc.methods[i].method < fc.methods[j].method })
		conns = append(conns, fc)
	}
	sort.Slice(conns, func(i, j int) bool { return conns[i].name < conns[j].name })
	return conns
}

// namedConnectors is the facade cut to the connectors the script calls by
// name (its manifest). Load refuses every use of ctx the analysis cannot
// name (a computed member, ctx handed on unseen, eval), so a connector the
// manifest lacks is one no phase of the script can reach, and one the host
// would refuse anyway (Manifest.Allows); each phase built its accessor for
// nothing. A connector the script calls keeps all its methods, so a method
// called in a phase that may not use it still ends the run naming both. A
// nil manifest keeps them all.
func namedConnectors(conns []facadeConn, m *Manifest) []facadeConn {
	if m == nil {
		return conns
	}
	out := conns[:0:0]
	for _, c := range conns {
		if slices.ContainsFunc(m.Calls, func(mc ManifestCall) bool { return mc.Connector == c.name }) {
			out = append(out, c)
		}
	}
	return out
}

// ctxOp is one operation of ctx, the same for every run: its host function
// closes over the entry and the runtime, and serves the run bound to it.
type ctxOp struct {
	name, op string
	rule     rule
	f        func(r *run, call goja.FunctionCall) goja.Value
}

var ctxOps = [...]ctxOp{
	{"registerInput", "ctx.registerInput", ruleRegisterInput, (*run).registerInput},
	{"publish", "ctx.publish", rulePublish, (*run).publish},
	{"peek", "ctx.peek", ruleTopicRead, (*run).peek},
	{"getByIds", "ctx.getByIds", ruleTopicRead, (*run).getByIDs},
}

// newCtxOps builds ctx with its operations, ahead of the run that will take
// f (bind.go); the run adds its connectors (newCtx).
func (f *fresh) newCtxOps() *goja.Object {
	ctx := f.vm.NewObject()
	for i := range ctxOps {
		_ = ctx.Set(ctxOps[i].name, f.guarded(&ctxOps[i]))
	}
	return ctx
}

// newCtx completes the phase's ctx. Every operation, and every method of
// each connector the script calls (namedConnectors), is present in every
// phase; those the phase does not allow end the run when called, so the
// message can name the operation and the phase.
func (r *run) newCtx() *goja.Object {
	for i := range r.s.facade {
		r.defineConnector(r.ctx, i) // lazy.go
	}
	return r.ctx
}

// allowed reports whether the phase may use an operation under ru.
func (r *run) allowed(ru rule) bool { return slices.Contains(ru.phases, r.inv.Phase) }

// guarded is the host function of o, with the checks every one of them
// needs, for the run bound to f.
func (f *fresh) guarded(o *ctxOp) hostFunc {
	return func(call goja.FunctionCall) goja.Value {
		r := f.run
		if r == nil || r.sup.halted() {
			return goja.Undefined()
		}
		if !r.allowed(o.rule) {
			r.fail(o.op, "%s is not allowed in %s (%s)", o.op, r.inv.Phase, o.rule.reason)
			return goja.Undefined()
		}
		return o.f(r, call)
	}
}

// fail ends the run with a logic error the script cannot catch, positioned
// at the script's call.
func (r *run) fail(op, format string, args ...any) {
	e := &Error{Kind: ErrLogic, Op: op, Message: fmt.Sprintf(format, args...)}
	e.Line, e.Col = framePos(r.vm.CaptureCallStack(0, nil))
	r.sup.stop(e)
}

// hostFail ends the run with the host's error, wrapped unchanged. An error
// that comes from the phase deadline or a cancellation is reported as such.
func (r *run) hostFail(op string, err error) {
	if ctxErr := r.hctx.Err(); ctxErr != nil {
		kind, msg := ErrCancelled, "cancelled during "+op
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			kind, msg = ErrTimeout, fmt.Sprintf("ran past the wall time of %s during %s", r.lim.WallTime, op)
		}
		r.sup.stop(&Error{Kind: kind, Op: op, Message: msg, cause: err})
		return
	}
	r.sup.stop(fmt.Errorf("%s: %s: %w", r.where(), op, err))
}

func (r *run) registerInput(call goja.FunctionCall) goja.Value {
	const op = "ctx.registerInput"
	obj, ok := call.Argument(0).(*goja.Object)
	if !ok || isArray(obj) {
		r.fail(op, "%s takes one object { source, type, id, title }", op)
		return goja.Undefined()
	}
	var in InputRequest
	for _, f := range []struct {
		name string
		dst  *string
	}{{"source", &in.Source}, {"type", &in.Type}, {"id", &in.ID}, {"title", &in.Title}} {
		v := obj.Get(f.name)
		if isAbsent(v) || !(isString(v) || isNumber(v) && f.name == "id") || v.String() == "" {
			r.fail(op, "%s needs %s as a non-empty string", op, f.name)
			return goja.Undefined()
		}
		*f.dst = v.String()
		if len(*f.dst) > r.lim.MaxField {
			r.fail(op, "%s: %s is %d bytes, over the limit of %d bytes", op, f.name, len(*f.dst), r.lim.MaxField)
			return goja.Undefined()
		}
	}
	if err := r.inv.Host.RegisterInput(r.hctx, in); err != nil {
		r.hostFail(op, err)
		return goja.Undefined()
	}
	return r.vm.ToValue(InputID(in))
}

func (r *run) publish(call goja.FunctionCall) goja.Value {
	const op = "ctx.publish"
	var topics []string
	switch t := call.Argument(0); {
	case isString(t):
		topics = []string{t.String()}
	default:
		list, ok := stringArray(t)
		if !ok {
			list = nil // the rule says what it takes
		}
		topics = list
	}
	if msg := publishTopicsRule(r.decl.publishes, r.handlerKind(), topics); msg != "" {
		r.fail(op, "%s", msg)
		return goja.Undefined()
	}
	ev, ok := call.Argument(1).(*goja.Object)
	if !ok || isArray(ev) {
		r.fail(op, "%s takes { messageId, payload } after the topic", op)
		return goja.Undefined()
	}
	var req PublishRequest
	if mid := ev.Get("messageId"); !isAbsent(mid) && (isString(mid) || isNumber(mid)) {
		req.MessageID = mid.String()
	}
	if msg := publishMessageIDRule(req.MessageID); msg != "" {
		r.fail(op, "%s", msg)
		return goja.Undefined()
	}
	if len(req.MessageID) > r.lim.MaxField {
		r.fail(op, "%s: messageId is %d bytes, over the limit of %d bytes", op, len(req.MessageID), r.lim.MaxField)
		return goja.Undefined()
	}
	in := ev.Get("inputId")
	if !r.decl.consumer && !isAbsent(in) && isString(in) {
		req.InputID = in.String()
	}
	if msg := publishInputRule(!r.decl.consumer, !isAbsent(in), req.InputID); msg != "" {
		r.fail(op, "%s", msg)
		return goja.Undefined()
	}
	if !r.decl.consumer {
		if len(req.InputID) > r.lim.MaxField {
			r.fail(op, "%s: inputId is %d bytes, over the limit of %d bytes", op, len(req.InputID), r.lim.MaxField)
			return goja.Undefined()
		}
	}
	payload, err := r.toJSON(ev.Get("payload"), "the payload", r.lim.MaxPayload)
	if err != nil {
		r.failWith(op, err)
		return goja.Undefined()
	}
	req.Payload = payload
	if err := r.inv.Host.Publish(r.hctx, topics, req); err != nil {
		r.hostFail(op, err)
	}
	return goja.Undefined()
}

func (r *run) peek(call goja.FunctionCall) goja.Value {
	const op = "ctx.peek"
	topic, ok := r.subscribedTopic(op, call.Argument(0))
	if !ok {
		return goja.Undefined()
	}
	limit := r.lim.DefaultPeek
	switch o := call.Argument(1).(type) {
	case *goja.Object:
		if l := o.Get("limit"); !isAbsent(l) {
			f := l.ToFloat()
			if !isNumber(l) || f != float64(int64(f)) || f < 1 {
				r.fail(op, "%s: limit must be a whole number of at least 1", op)
				return goja.Undefined()
			}
			if f > float64(r.lim.MaxPeek) {
				r.fail(op, "%s: limit %v is over the largest allowed, %d", op, f, r.lim.MaxPeek)
				return goja.Undefined()
			}
			limit = int(f)
		}
	default:
		if !isAbsent(o) {
			r.fail(op, "%s takes { limit } after the topic", op)
			return goja.Undefined()
		}
	}
	evs, err := r.inv.Host.Peek(r.hctx, topic, limit)
	if err != nil {
		r.hostFail(op, err)
		return goja.Undefined()
	}
	return r.events(op, evs)
}

func (r *run) getByIDs(call goja.FunctionCall) goja.Value {
	const op = "ctx.getByIds"
	topic, ok := r.subscribedTopic(op, call.Argument(0))
	if !ok {
		return goja.Undefined()
	}
	idsVal := call.Argument(1)
	if o, isObj := idsVal.(*goja.Object); isObj && !isArray(o) {
		idsVal = o.Get("ids")
	}
	if o, isObj := idsVal.(*goja.Object); isObj && isArray(o) {
		if n := toLength(o.Get("length")); n > int64(r.lim.MaxPeek) {
			r.fail(op, "%s: %d ids is over the largest allowed, %d", op, n, r.lim.MaxPeek)
			return goja.Undefined()
		}
	}
	ids, ok := stringArray(idsVal)
	if !ok {
		r.fail(op, "%s takes an array of message ids after the topic", op)
		return goja.Undefined()
	}
	if len(ids) > r.lim.MaxPeek {
		r.fail(op, "%s: %d ids is over the largest allowed, %d", op, len(ids), r.lim.MaxPeek)
		return goja.Undefined()
	}
	for i, id := range ids {
		if len(id) > r.lim.MaxField {
			r.fail(op, "%s: ids[%d] is %d bytes, over the limit of %d bytes", op, i, len(id), r.lim.MaxField)
			return goja.Undefined()
		}
	}
	evs, err := r.inv.Host.GetByIDs(r.hctx, topic, ids)
	if err != nil {
		r.hostFail(op, err)
		return goja.Undefined()
	}
	return r.events(op, evs)
}

func (r *run) subscribedTopic(op string, v goja.Value) (string, bool) {
	if !isString(v) {
		r.fail(op, "%s takes a topic name first", op)
		return "", false
	}
	t := v.String()
	if !slices.Contains(r.decl.subscribe, t) {
		r.fail(op, "%s: topic %q is not among the topics consumer %q subscribes to (%v)", op, t, r.inv.Handler, r.decl.subscribe)
		return "", false
	}
	return t, true
}

// scriptEvent is an Event as the script sees it: createdAt as an ISO string.
type scriptEvent struct {
	MessageID string          `json:"messageId"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt string          `json:"createdAt"`
}

func (r *run) events(op string, evs []Event) goja.Value {
	out := make([]scriptEvent, len(evs))
	for i, e := range evs {
		out[i] = scriptEvent{MessageID: e.MessageID, Payload: e.Payload, CreatedAt: e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")}
	}
	return r.handOver(op, out)
}

// handOver gives a host value to the script as JSON would: checked against
// MaxResult, then parsed by the runtime.
func (r *run) handOver(op string, v any) goja.Value {
	b, err := json.Marshal(v)
	if err != nil {
		r.hostFail(op, fmt.Errorf("result cannot be encoded as JSON: %w", err))
		return goja.Undefined()
	}
	if len(b) > r.lim.MaxResult {
		r.fail(op, "%s returned %d bytes of JSON, over the limit of %d bytes; ask for less", op, len(b), r.lim.MaxResult)
		return goja.Undefined()
	}
	val, err := r.parseJSON(string(b))
	if err != nil {
		r.hostFail(op, fmt.Errorf("result cannot be decoded: %w", err))
		return goja.Undefined()
	}
	return val
}

// connectorCall is ctx.<connector>.<method>(params), with the checks of
// guarded.
func (r *run) connectorCall(m *facadeMethod) hostFunc {
	return func(call goja.FunctionCall) goja.Value {
		if r.sup.halted() {
			return goja.Undefined()
		}
		if ru := kindRule(m.kind, r.inv.Phase); !r.allowed(ru) {
			r.fail(m.op, "%s is not allowed in %s (%s)", m.op, r.inv.Phase, ru.reason)
			return goja.Undefined()
		}
		return r.callConnector(m, call)
	}
}

func (r *run) callConnector(m *facadeMethod, call goja.FunctionCall) goja.Value {
	conn, method, kind, op := m.conn, m.method, m.kind, m.op
	params := map[string]any{}
	switch p := call.Argument(0); {
	case goja.IsUndefined(p):
	case isObject(p) && !isArray(p) && !isFunction(p):
		raw, err := r.toJSON(p, "the params of "+op, r.lim.MaxParams)
		if err != nil {
			r.failWith(op, err)
			return goja.Undefined()
		}
		if err := json.Unmarshal(raw, &params); err != nil {
			r.fail(op, "%s: params are not a JSON object: %v", op, err)
			return goja.Undefined()
		}
	default:
		r.fail(op, "%s takes one object of parameters", op)
		return goja.Undefined()
	}
	if kind == KindMutate {
		// Terminal (06b): record the call, stop the script; the host
		// performs it. Nothing after this line of the script runs.
		r.mutation = &MutationCall{Connector: conn, Method: method, Params: params}
		r.sup.stop(errTerminal)
		return goja.Undefined()
	}
	res, err := r.inv.Host.Read(r.hctx, conn, method, params)
	if err != nil {
		r.hostFail(op, err)
		return goja.Undefined()
	}
	if r.sup.halted() {
		return goja.Undefined()
	}
	return r.handOver(op, res)
}

// failWith ends the run with an error from a value check (toJSON).
func (r *run) failWith(op string, err error) {
	if e, ok := err.(*Error); ok {
		e.Op = op
		e.Line, e.Col = framePos(r.vm.CaptureCallStack(0, nil))
		r.sup.stop(e)
		return
	}
	r.sup.stop(err)
}

func (r *run) handlerKind() string {
	if r.decl.consumer {
		return fmt.Sprintf("consumer %q", r.inv.Handler)
	}
	return fmt.Sprintf("producer %q", r.inv.Handler)
}
