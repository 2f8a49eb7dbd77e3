package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRunExample(t *testing.T) {
	t.Parallel()
	s, err := Load("email.js", []byte(example06a), LoadOptions{Methods: exampleMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	run := func(inv Invocation) *Outcome {
		t.Helper()
		inv.Limits = testLimits()
		out, err := s.Run(context.Background(), inv)
		if err != nil {
			t.Fatalf("%s: %v", inv.Phase, err)
		}
		return out
	}
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	h := &recordingHost{
		result: []any{map[string]any{"id": "m1", "from": "alice@example.com", "subject": "Invoice"}},
		events: map[string][]Event{"email.received": {{MessageID: "m1", Payload: json.RawMessage(`{"subject":"Invoice","from":"alice@example.com"}`), CreatedAt: created}}},
	}

	t.Run("the producer registers an input and publishes", func(t *testing.T) {
		out := run(Invocation{Handler: "pollEmail", Phase: PhaseProducer, Host: h})
		if len(h.inputs) != 1 || h.inputs[0] != (InputRequest{Source: "gmail", Type: "email", ID: "m1", Title: `Email from alice@example.com: "Invoice"`}) {
			t.Errorf("inputs = %+v", h.inputs)
		}
		want := []publishCall{{[]string{"email.received"}, PublishRequest{MessageID: "m1", InputID: "gmail:email:m1", Payload: json.RawMessage(`{"subject":"Invoice","from":"alice@example.com"}`)}}}
		if !reflect.DeepEqual(h.published, want) {
			t.Errorf("published = %+v", h.published)
		}
		if !out.StateReturned || string(out.State) != `{}` { // emails.lastCursor is undefined
			t.Errorf("state = %s (%v)", out.State, out.StateReturned)
		}
	})

	var prepared json.RawMessage
	t.Run("prepare peeks and reserves", func(t *testing.T) {
		out := run(Invocation{Handler: "processEmail", Phase: PhasePrepare, Host: h})
		p := out.Prepare
		if !reflect.DeepEqual(p.Reservations, []Reservation{{Topic: "email.received", IDs: []string{"m1"}}}) || p.UITitle != "Add row for alice@example.com" {
			t.Errorf("prepare = %+v", p)
		}
		want := `{"reservations":[{"topic":"email.received","ids":["m1"]}],"data":{"messageId":"m1","from":"alice@example.com","subject":"Invoice"},"ui":{"title":"Add row for alice@example.com"}}`
		if string(p.Raw) != want {
			t.Errorf("raw = %s\nwant  %s", p.Raw, want)
		}
		prepared = p.Raw
	})

	t.Run("mutate captures the append", func(t *testing.T) {
		out := run(Invocation{Handler: "processEmail", Phase: PhaseMutate, Host: h, Prepared: prepared})
		want := &MutationCall{Connector: "sheets", Method: "appendRow", Params: map[string]any{
			"spreadsheetId": "...", "values": []any{"alice@example.com", "Invoice"}}}
		if !reflect.DeepEqual(out.Mutation, want) {
			t.Errorf("mutation = %+v", out.Mutation)
		}
	})

	t.Run("next publishes the row", func(t *testing.T) {
		h.published = nil
		out := run(Invocation{Handler: "processEmail", Phase: PhaseNext, Host: h, Prepared: prepared,
			MutationResult: json.RawMessage(`{"status":"applied","result":{"rowId":7}}`)})
		want := []publishCall{{[]string{"row.created"}, PublishRequest{MessageID: "row:m1", Payload: json.RawMessage(`{"rowId":7}`)}}}
		if !reflect.DeepEqual(h.published, want) {
			t.Errorf("published = %+v", h.published)
		}
		if out.StateReturned || out.State != nil {
			t.Errorf("next returned nothing, got state %s", out.State)
		}
	})
}

func TestPhaseMatrix(t *testing.T) {
	t.Parallel()
	calls := map[string]string{
		"ctx.registerInput": `ctx.registerInput({ source: "files", type: "file", id: "1", title: "t" })`,
		"ctx.publish":       `ctx.publish("b", { messageId: "m", payload: 1 })`,
		"ctx.peek":          `ctx.peek("a")`,
		"ctx.getByIds":      `ctx.getByIds("a", ["m"])`,
		"ctx.files.list":    `ctx.files.list({ dir: "." })`,
		"ctx.files.read":    `ctx.files.read({ path: "x" })`,
		"ctx.files.write":   `ctx.files.write({ path: "x", content: "y" })`,
	}
	forbidden := map[Phase][]string{
		PhaseProducer: {"ctx.peek", "ctx.getByIds", "ctx.files.write"},
		PhasePrepare:  {"ctx.registerInput", "ctx.publish", "ctx.files.write"},
		PhaseMutate:   {"ctx.registerInput", "ctx.publish", "ctx.peek", "ctx.getByIds", "ctx.files.list", "ctx.files.read"},
		PhaseNext:     {"ctx.registerInput", "ctx.peek", "ctx.getByIds", "ctx.files.list", "ctx.files.read", "ctx.files.write"},
	}
	body := func(phase Phase, call string) handlers {
		// The script tries to swallow the violation and carry on. The call
		// goes through another name for ctx, which validation does not
		// follow: what is tested is the run's own guard.
		call = strings.Replace(call, "ctx.", "c.", 1)
		code := fmt.Sprintf(`try { const c = ctx; await %s; } catch (e) { console.log("caught", String(e)); } finally { console.log("finally"); }
        console.log("after");`, call)
		switch phase {
		case PhaseProducer:
			return handlers{producer: code}
		case PhasePrepare:
			return handlers{prepare: code + "\nreturn { reservations: [], data: {} };"}
		case PhaseMutate:
			return handlers{mutate: code}
		}
		return handlers{next: code}
	}
	for phase, ops := range forbidden {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s in %s ends the run and cannot be caught", op, phase), func(t *testing.T) {
				t.Parallel()
				s := load(t, body(phase, calls[op]))
				h := &recordingHost{}
				_, err := invoke(t, s, phase, h, testLimits(), json.RawMessage(`{"data":{}}`), json.RawMessage(`{"status":"none"}`))
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want *Error", err)
				}
				if e.Kind != ErrLogic || e.Op != op || e.Phase != phase || !strings.Contains(e.Message, op+" is not allowed in "+string(phase)) {
					t.Errorf("error = %+v", e)
				}
				if e.Line != 9 && e.Line != 18 && e.Line != 21 && e.Line != 24 {
					t.Errorf("error at line %d:%d, want the line of the call", e.Line, e.Col)
				}
				if logs := h.logged(); len(logs) != 0 {
					t.Errorf("the script went on after the violation: %v", logs)
				}
				if len(h.reads)+len(h.inputs)+len(h.published) != 0 {
					t.Errorf("the host was called: %v %v %v", h.reads, h.inputs, h.published)
				}
			})
		}
	}

	allowed := map[Phase][]string{
		PhaseProducer: {"ctx.registerInput", "ctx.files.list", "ctx.files.read"},
		PhasePrepare:  {"ctx.peek", "ctx.getByIds", "ctx.files.list", "ctx.files.read"},
		PhaseNext:     {"ctx.publish"},
	}
	for phase, ops := range allowed {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s in %s is allowed", op, phase), func(t *testing.T) {
				t.Parallel()
				s := load(t, body(phase, calls[op]))
				h := &recordingHost{}
				if _, err := invoke(t, s, phase, h, testLimits(), json.RawMessage(`{"data":{}}`), json.RawMessage(`{"status":"none"}`)); err != nil {
					t.Fatal(err)
				}
				if logs := h.logged(); !reflect.DeepEqual(logs, []string{"log: finally", "log: after"}) {
					t.Errorf("logs = %v", logs)
				}
			})
		}
	}

	t.Run("a violation names the operation, the phase and the line", func(t *testing.T) {
		t.Parallel()
		// written plainly, validation refuses it before it can run
		_, err := Load("t.js", []byte(handlers{prepare: `        await ctx.publish("b", { messageId: "m" });`}.source()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
		want := `t.js:18:15: ctx.publish is called in prepare of consumer "c": events are published by producers and in next`
		if err == nil || err.Error() != want {
			t.Errorf("load: err = %v\nwant  %s", err, want)
		}
		// through another name, the run's guard stops it
		s := load(t, handlers{prepare: `        const c = ctx; await c.publish("b", { messageId: "m" });`})
		_, err = invoke(t, s, PhasePrepare, &recordingHost{}, testLimits())
		want = `prepare of consumer "c": ctx.publish is not allowed in prepare (events are published by producers and in next) (t.js:18:39)`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant  %s", err, want)
		}
	})
}

func TestTerminalMutation(t *testing.T) {
	t.Parallel()

	t.Run("nothing after the mutator call runs", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{mutate: `console.log("before");
        try {
          await ctx.files.write({ path: "out.txt", content: prepared.data.text, n: 2 });
          console.log("after the call");
        } catch (e) {
          console.log("caught");
        } finally {
          console.log("finally");
        }
        console.log("after the block");
        ctx.sheets.appendRow({ values: [1] });`})
		h := &recordingHost{}
		out, err := invoke(t, s, PhaseMutate, h, testLimits(), json.RawMessage(`{"data":{"text":"hi"}}`))
		if err != nil {
			t.Fatal(err)
		}
		want := &MutationCall{Connector: "files", Method: "write", Params: map[string]any{"path": "out.txt", "content": "hi", "n": float64(2)}}
		if !reflect.DeepEqual(out.Mutation, want) {
			t.Errorf("mutation = %#v", out.Mutation)
		}
		if logs := h.logged(); !reflect.DeepEqual(logs, []string{"log: before"}) {
			t.Errorf("logs = %v, want only the line before the call", logs)
		}
	})

	t.Run("a mutator called after an await is still terminal", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{mutate: `await Promise.resolve(1);
        await new Promise((resolve) => resolve()).then(() => ctx.sheets.appendRow({ values: [prepared.data] }));
        console.log("after");`})
		h := &recordingHost{}
		out, err := invoke(t, s, PhaseMutate, h, testLimits(), json.RawMessage(`{"data":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		if out.Mutation == nil || out.Mutation.Method != "appendRow" || len(h.logged()) != 0 {
			t.Errorf("mutation = %+v, logs = %v", out.Mutation, h.logged())
		}
	})

	t.Run("native code calling the mutator twice captures the first call only", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{mutate: `[{ path: "1" }, { path: "2" }].forEach(ctx.files.write);`})
		out, err := invoke(t, s, PhaseMutate, &recordingHost{}, testLimits(), json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if out.Mutation == nil || out.Mutation.Params["path"] != "1" {
			t.Errorf("mutation = %+v", out.Mutation)
		}
	})

	t.Run("mutate without a mutator call captures nothing and its return is discarded", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{mutate: `if (prepared.data.skip) return { ignored: true };`})
		out, err := invoke(t, s, PhaseMutate, &recordingHost{}, testLimits(), json.RawMessage(`{"data":{"skip":true}}`))
		if err != nil {
			t.Fatal(err)
		}
		if out.Mutation != nil || out.State != nil || out.StateReturned {
			t.Errorf("outcome = %+v", out)
		}
	})

	t.Run("mutator params must be an object", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{mutate: `await ctx.files.write("x");`})
		_, err := invoke(t, s, PhaseMutate, &recordingHost{}, testLimits(), json.RawMessage(`{}`))
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, "takes one object") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestHostCalls(t *testing.T) {
	t.Parallel()

	t.Run("host calls can be awaited or used directly", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `const listed = await ctx.files.list({ dir: "in" });
        const read = ctx.files.read({ path: "in/a" });
        const id = ctx.registerInput({ source: "files", type: "file", id: 7, title: "a" });
        const id2 = await ctx.registerInput({ source: "files", type: "file", id: "8", title: "b" });
        await ctx.publish(["a"], { messageId: "m1", inputId: id, payload: { listed } });
        ctx.publish("a", { messageId: "m2", inputId: id2 });
        return { listed, read, id, id2 };`})
		h := &recordingHost{result: map[string]any{"n": 1}}
		out, err := invoke(t, s, PhaseProducer, h, testLimits())
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"listed":{"n":1},"read":{"n":1},"id":"files:file:7","id2":"files:file:8"}`; string(out.State) != want {
			t.Errorf("state = %s, want %s", out.State, want)
		}
		if want := []string{`files.list {"dir":"in"}`, `files.read {"path":"in/a"}`}; !reflect.DeepEqual(h.reads, want) {
			t.Errorf("reads = %v", h.reads)
		}
		if h.inputs[0].ID != "7" || len(h.published) != 2 || string(h.published[1].Req.Payload) != "null" {
			t.Errorf("inputs = %+v, published = %+v", h.inputs, h.published)
		}
	})

	t.Run("peek and getByIds hand events over with ISO times", func(t *testing.T) {
		t.Parallel()
		created := time.Date(2025, 6, 1, 12, 0, 0, 5e6, time.FixedZone("x", 3600))
		h := &recordingHost{events: map[string][]Event{"a": {
			{MessageID: "m1", Payload: json.RawMessage(`{"k":1}`), CreatedAt: created},
			{MessageID: "m2", Payload: json.RawMessage(`2`), CreatedAt: created},
		}}}
		s := load(t, handlers{prepare: `const all = await ctx.peek("a");
        const one = await ctx.peek("a", { limit: 1 });
        const byId = await ctx.getByIds("a", ["m2"]);
        return { reservations: [{ topic: "a", ids: [all[0].messageId] }], data: { all, n: one.length, byId, t: new Date(all[0].createdAt).getTime() } };`})
		out, err := invoke(t, s, PhasePrepare, h, testLimits())
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"reservations":[{"topic":"a","ids":["m1"]}],"data":{"all":[{"messageId":"m1","payload":{"k":1},"createdAt":"2025-06-01T11:00:00.005Z"},{"messageId":"m2","payload":2,"createdAt":"2025-06-01T11:00:00.005Z"}],"n":1,"byId":[{"messageId":"m2","payload":2,"createdAt":"2025-06-01T11:00:00.005Z"}],"t":%d}}`, created.UnixMilli())
		if string(out.Prepare.Raw) != want {
			t.Errorf("raw = %s\nwant  %s", out.Prepare.Raw, want)
		}
	})

	misuse := []struct {
		name, phase, code, want string
	}{
		{"publishing to a topic the handler does not declare", "producer", `ctx.publish(["b"][0], { messageId: "m", inputId: "i" })`, `topic "b" is not among the publishes of producer "p"`}, // computed: the run's guard, not validation
		{"publishing without a messageId", "next", `ctx.publish("b", { payload: 1 })`, "needs a messageId"},
		{"publishing with a symbol for a messageId", "next", `ctx.publish("b", { messageId: Symbol("m"), payload: 1 })`, "needs a messageId"},
		{"publishing to a symbol for a topic", "next", `ctx.publish(Symbol("b"), { messageId: "m" })`, "takes a topic or an array of topics"},
		{"a producer publishing with a symbol for an inputId", "producer", `ctx.publish("a", { messageId: "m", inputId: Symbol("i") })`, "needs the inputId"},
		{"a producer publishing without an inputId", "producer", `ctx.publish("a", { messageId: "m" })`, "needs the inputId"},
		{"next publishing with an inputId", "next", `ctx.publish("b", { messageId: "m", inputId: "i" })`, "takes no inputId"},
		{"registering an input without a title", "producer", `ctx.registerInput({ source: "files", type: "file", id: "1" })`, "needs title"},
		{"peeking a topic the consumer does not subscribe to", "prepare", `ctx.peek(["b"][0])`, `topic "b" is not among the topics consumer "c" subscribes to`}, // computed, as above
		{"peeking more than the largest limit", "prepare", `ctx.peek("a", { limit: 1001 })`, "limit 1001 is over the largest allowed, 1000"},
		{"peeking with a fractional limit", "prepare", `ctx.peek("a", { limit: 1.5 })`, "whole number"},
		{"getByIds without an array", "prepare", `ctx.getByIds("a", "m1")`, "array of message ids"},
	}
	for _, m := range misuse {
		t.Run(m.name+" is a logic error", func(t *testing.T) {
			t.Parallel()
			code := "try { await " + m.code + "; } catch (e) {}\nreturn { reservations: [], data: null };"
			var h handlers
			phase := Phase(m.phase)
			switch phase {
			case PhaseProducer:
				h.producer = code
			case PhasePrepare:
				h.prepare = code
			case PhaseNext:
				h.next = code
			}
			s := load(t, h)
			_, err := invoke(t, s, phase, &recordingHost{}, testLimits(), json.RawMessage(`{}`), json.RawMessage(`{"status":"none"}`))
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, m.want) || e.Line == 0 {
				t.Errorf("err = %v (%+v), want a logic error containing %q", err, e, m.want)
			}
		})
	}

	t.Run("a host error ends the run uncatchably and is wrapped unchanged", func(t *testing.T) {
		t.Parallel()
		hostErr := &fakeConnectorError{Code: "auth"}
		s := load(t, handlers{producer: `try { await ctx.files.list({}); } catch (e) { console.log("caught"); }
        console.log("after");`})
		h := &recordingHost{err: hostErr}
		_, err := invoke(t, s, PhaseProducer, h, testLimits())
		var got *fakeConnectorError
		if !errors.As(err, &got) || got != hostErr {
			t.Fatalf("err = %v, want it to wrap the host's error", err)
		}
		var e *Error
		if errors.As(err, &e) {
			t.Errorf("a host error must not be a sandbox *Error: %v", e)
		}
		if want := `producer "p": ctx.files.list: connector says auth`; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
		if logs := h.logged(); len(logs) != 0 {
			t.Errorf("the script went on: %v", logs)
		}
	})

	t.Run("a connector result over MaxResult is a logic error", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.MaxResult = 100
		s := load(t, handlers{producer: `await ctx.files.read({ path: "big" });`})
		_, err := invoke(t, s, PhaseProducer, &recordingHost{result: strings.Repeat("x", 200)}, lim)
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, "202 bytes of JSON, over the limit of 100 bytes") {
			t.Errorf("err = %v", err)
		}
	})
}

type fakeConnectorError struct{ Code string }

func (e *fakeConnectorError) Error() string { return "connector says " + e.Code }

func TestResults(t *testing.T) {
	t.Parallel()
	fails := func(t *testing.T, h handlers, phase Phase, lim Limits, want string) {
		t.Helper()
		s := load(t, h)
		_, err := invoke(t, s, phase, &recordingHost{}, lim, json.RawMessage(`{}`), json.RawMessage(`{"status":"none"}`))
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, want) {
			t.Errorf("err = %v, want a logic error containing %q", err, want)
		}
	}

	t.Run("state over MaxState is a logic error naming size and limit", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.MaxState = 50
		fails(t, handlers{producer: `return { s: "x".repeat(60) };`}, PhaseProducer, lim, "the returned state is 68 bytes of JSON, over the limit of 50 bytes")
	})

	t.Run("a payload over MaxPayload is a logic error naming size and limit", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.MaxPayload = 10
		fails(t, handlers{next: `await ctx.publish("b", { messageId: "m", payload: "0123456789" });`}, PhaseNext, lim, "the payload is 12 bytes of JSON, over the limit of 10 bytes")
	})

	t.Run("a prepare result over MaxData is a logic error naming data and the limit", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.MaxData = 100
		fails(t, handlers{prepare: `return { reservations: [], data: "x".repeat(100) };`}, PhasePrepare, lim, "the prepared data is 129 bytes of JSON, over the limit of 100 bytes")
	})

	t.Run("state that cannot be encoded is a logic error", func(t *testing.T) {
		t.Parallel()
		fails(t, handlers{producer: `const o = {}; o.self = o; return o;`}, PhaseProducer, testLimits(), "the returned state cannot be encoded as JSON")
		fails(t, handlers{next: `return () => 1;`}, PhaseNext, testLimits(), "cannot be encoded as JSON (it is a function)")
	})

	t.Run("returning nothing keeps no state and returning null is a state", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{next: `if (mutationResult.status === "none") return; return null;`})
		out, err := invoke(t, s, PhaseNext, &recordingHost{}, testLimits(), json.RawMessage(`{}`), json.RawMessage(`{"status":"none"}`))
		if err != nil || out.StateReturned || out.State != nil {
			t.Errorf("undefined: %+v, %v", out, err)
		}
		out, err = invoke(t, s, PhaseNext, &recordingHost{}, testLimits(), json.RawMessage(`{}`), json.RawMessage(`{"status":"skipped"}`))
		if err != nil || !out.StateReturned || string(out.State) != "null" {
			t.Errorf("null: %+v, %v", out, err)
		}
	})

	t.Run("the previous state reaches the handler", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `return { n: (state?.n ?? 0) + 1, first: state === undefined };`})
		out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
		if err != nil || string(out.State) != `{"n":1,"first":true}` {
			t.Fatalf("first run: %s, %v", out.State, err)
		}
		out, err = invoke(t, s, PhaseProducer, &recordingHost{}, testLimits(), out.State)
		if err != nil || string(out.State) != `{"n":2,"first":false}` {
			t.Errorf("second run: %s, %v", out.State, err)
		}
	})

	malformed := []struct{ name, ret, want string }{
		{"not an object", `return 5;`, "prepare returned number"},
		{"undefined", `return;`, "prepare returned undefined"},
		{"reservations that are not an array", `return { reservations: {}, data: 1 };`, "reservations that are not an array"},
		{"a reservation without ids", `return { reservations: [{ topic: "a" }] };`, "reservations[0] that is not { topic: string, ids: string[] }"},
		{"a reservation with numeric ids", `return { reservations: [{ topic: "a", ids: [1] }] };`, "reservations[0] that is not"},
		{"a reservation on a topic not subscribed", `return { reservations: [{ topic: "b", ids: ["x"] }] };`, `reservations[0] on topic "b", which consumer "c" does not subscribe to`},
		{"a misspelt field", `return { reservation: [], data: 1 };`, `an unknown field "reservation"`},
		{"a ui title that is not a string", `return { reservations: [], ui: { title: 3 } };`, "ui.title that is not a string"},
		{"a wakeAt that is not a string", `return { reservations: [], wakeAt: 12 };`, "wakeAt that is not a string"},
	}
	for _, m := range malformed {
		t.Run("prepare returning "+m.name+" is a logic error", func(t *testing.T) {
			t.Parallel()
			fails(t, handlers{prepare: m.ret}, PhasePrepare, testLimits(), m.want)
		})
	}

	t.Run("a complete prepare result is kept whole", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{prepare: `return { data: { x: [1, "two"] }, ui: { title: "Do it" }, wakeAt: "2030-01-01T00:00:00Z" };`})
		out, err := invoke(t, s, PhasePrepare, &recordingHost{}, testLimits())
		if err != nil {
			t.Fatal(err)
		}
		p := out.Prepare
		want := `{"reservations":[],"data":{"x":[1,"two"]},"ui":{"title":"Do it"},"wakeAt":"2030-01-01T00:00:00Z"}`
		if string(p.Raw) != want || p.UITitle != "Do it" || p.WakeAt != "2030-01-01T00:00:00Z" || len(p.Reservations) != 0 {
			t.Errorf("prepare = %+v, raw %s", p, p.Raw)
		}
	})

	t.Run("a thrown error is a logic error with its message and line", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{prepare: `        await ctx.peek("a");
        throw new TypeError("no luck");`})
		_, err := invoke(t, s, PhasePrepare, &recordingHost{}, testLimits())
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrLogic || e.Message != "TypeError: no luck" || e.Line != 19 || e.File != "t.js" {
			t.Errorf("err = %v (%+v)", err, e)
		}
	})

	t.Run("a handler awaiting a promise that never settles is a logic error", func(t *testing.T) {
		t.Parallel()
		fails(t, handlers{producer: `await new Promise(() => {});`}, PhaseProducer, testLimits(), "handler awaited something that never settles")
	})
}

func TestConsole(t *testing.T) {
	t.Parallel()

	t.Run("console levels reach the host", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `console.log("a", 1, { b: [2] }, undefined, null); console.info("i"); console.warn("w"); console.error(new Error("e"));`})
		h := &recordingHost{}
		if _, err := invoke(t, s, PhaseProducer, h, testLimits()); err != nil {
			t.Fatal(err)
		}
		want := []string{`log: a 1 {"b":[2]} undefined null`, "info: i", "warn: w", "error: Error: e"}
		if got := h.logged(); !reflect.DeepEqual(got, want) {
			t.Errorf("logs = %q", got)
		}
	})

	t.Run("a run's trace is capped in lines, with a note of what was cut", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `for (let i = 0; i < 100000; i++) console.log("line " + i); return 1;`})
		h := &recordingHost{}
		if out, err := invoke(t, s, PhaseProducer, h, testLimits()); err != nil || string(out.State) != "1" {
			t.Fatalf("run: %v, %v", out, err)
		}
		logs := h.logged()
		if len(logs) != 1001 || logs[999] != "log: line 999" {
			t.Fatalf("%d lines, the 1000th %q", len(logs), logs[min(999, len(logs)-1)])
		}
		if want := "warn: … 99,000 more lines cut (trace limit 1,000 lines / 256 KiB)"; logs[1000] != want {
			t.Errorf("last line %q, want %q", logs[1000], want)
		}
	})

	t.Run("a run's trace is capped in bytes", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.MaxLogBytes = 10 << 10
		s := load(t, handlers{producer: `for (let i = 0; i < 500; i++) console.log("x".repeat(900));`})
		h := &recordingHost{}
		if _, err := invoke(t, s, PhaseProducer, h, lim); err != nil {
			t.Fatal(err)
		}
		logs := h.logged()
		total := 0
		for _, l := range logs[:len(logs)-1] {
			total += len(strings.TrimPrefix(l, "log: "))
		}
		if len(logs) != 12 || total > lim.MaxLogBytes {
			t.Errorf("%d lines, %d bytes", len(logs), total)
		}
		if want := "warn: … 489 more lines cut (trace limit 1,000 lines / 10 KiB)"; logs[len(logs)-1] != want {
			t.Errorf("last line %q, want %q", logs[len(logs)-1], want)
		}
	})

	t.Run("a console line is capped at MaxLogLine characters", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.MaxLogLine = 50
		s := load(t, handlers{producer: `console.log("é".repeat(5000));`})
		h := &recordingHost{}
		if _, err := invoke(t, s, PhaseProducer, h, lim); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimPrefix(h.logged()[0], "log: ")
		if n := utf8.RuneCountInString(line); n != 50 || !strings.HasSuffix(line, "…") {
			t.Errorf("line has %d characters: %q", n, line)
		}
	})
}

func TestIsolation(t *testing.T) {
	t.Parallel()

	t.Run("every run gets a fresh runtime", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `const before = typeof globalThis.leak + "," + typeof [].evil; globalThis.leak = 1; Array.prototype.evil = 1; return before;`})
		for i := 0; i < 2; i++ {
			out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
			if err != nil || string(out.State) != `"undefined,undefined"` {
				t.Errorf("run %d: %s, %v", i, out.State, err)
			}
		}
	})

	t.Run("the runtime holds no require, timers, network or process", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `return ["require", "setTimeout", "setInterval", "setImmediate", "queueMicrotask", "fetch", "XMLHttpRequest", "process", "module", "exports", "Deno", "Bun"].filter((n) => typeof globalThis[n] !== "undefined");`})
		out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
		if err != nil || string(out.State) != `[]` {
			t.Errorf("globals present: %s, %v", out.State, err)
		}
	})

	t.Run("guarded built-ins still behave", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `const a = new Array(3).fill(0); const b = Array(2); class L extends Array {}
        const l = new L(); l.push(1);
        let keys = []; for (const k in [1]) keys.push(k);
        let err = ""; try { "x".repeat(-1) } catch (e) { err = e.name }
        return [a.join("-"), b.length, "ab".repeat(2), "5".padStart(3, "0"), "5".padEnd(2, "!"), Array.from({ length: 2 }, (_, i) => i),
          [] instanceof Array, Array.isArray(a), l instanceof L, l.length, keys, err, new Uint8Array(4).length, [].constructor === Array];`})
		out, err := invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
		want := `["0-0-0",2,"abab","005","5!",[0,1],true,true,true,1,["0"],"RangeError",4,true]`
		if err != nil {
			t.Fatal(err)
		}
		if string(out.State) != want {
			t.Errorf("state = %s\nwant    %s", out.State, want)
		}
	})
}

func TestCancellation(t *testing.T) {
	t.Parallel()

	t.Run("a cancelled context ends a run blocked in a host call", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `await ctx.files.list({});`})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := s.Run(ctx, Invocation{Handler: "p", Phase: PhaseProducer, Host: &recordingHost{block: true}, Limits: testLimits()})
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrCancelled || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("a cancelled context ends a running loop", func(t *testing.T) {
		t.Parallel()
		s := load(t, handlers{producer: `for (;;) {}`})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := s.Run(ctx, Invocation{Handler: "p", Phase: PhaseProducer, Host: &recordingHost{}, Limits: testLimits()})
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrCancelled {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("a run that will not stop is abandoned shortly after its wall time", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.WallTime = 100 * time.Millisecond
		s := load(t, handlers{producer: `await ctx.files.list({});`})
		release := make(chan struct{})
		defer close(release)
		start := time.Now()
		_, err := invoke(t, s, PhaseProducer, stuckHost{&recordingHost{}, release}, lim)
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrTimeout || !strings.Contains(e.Message, "abandoned") {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d > lim.WallTime+abandonGrace+time.Second {
			t.Errorf("took %s", d)
		}
	})

	t.Run("a host call blocked past the wall time is a timeout", func(t *testing.T) {
		t.Parallel()
		lim := testLimits()
		lim.WallTime = 100 * time.Millisecond
		s := load(t, handlers{producer: `await ctx.files.list({});`})
		_, err := invoke(t, s, PhaseProducer, &recordingHost{block: true}, lim)
		var e *Error
		if !errors.As(err, &e) || e.Kind != ErrTimeout {
			t.Errorf("err = %v", err)
		}
	})
}

// stuckHost's Read ignores its context, like a native call that cannot be
// interrupted.
type stuckHost struct {
	*recordingHost
	release chan struct{}
}

func (h stuckHost) Read(context.Context, string, string, map[string]any) (any, error) {
	select {
	case <-h.release:
		return nil, nil
	case <-time.After(testWait):
		return nil, errors.New("stuckHost: never released")
	}
}

// A run reads the declaration the file builds again to find its handler:
// a getter there may behave otherwise than it did at load (console is
// there only in a run) and throw. That is the script's logic error at its
// line, not "sandbox: panic in host code", which the engine takes for a
// failure of keep's own (DESIGN.md §13 trap 3). (A getter written as the
// handler is refused at validate; one put there by the top level is not.)
func TestHandlerGetterThatThrowsAtRunTime(t *testing.T) {
	t.Parallel()
	src := `const p = { publishes: ["a"], schedule: { interval: "5m" }, handler: async () => {} };
Object.defineProperty(p, "handler", { get() {
  if (typeof console !== "undefined") throw new Error("only at run time");
  return async () => {};
} });
export default Keep.workflow({ name: "t", topics: { a: {} }, producers: { p } });`
	s, err := Load("t.js", []byte(src), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	_, err = invoke(t, s, PhaseProducer, &recordingHost{}, testLimits())
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrLogic || !strings.Contains(e.Message, "Error: only at run time") || e.Line != 3 {
		t.Errorf("err = %v (%T), want a logic error at line 3 with the thrown message", err, err)
	}
}
