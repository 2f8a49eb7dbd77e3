package sandbox

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEmptyNext: a consumer's next is marked empty only when its own text
// has no statement and no parameter that runs code, and running such a
// next gives exactly what the host assumes when it skips it.
func TestEmptyNext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		next  string
		empty bool
	}{
		{`async next() {}`, true},
		{`async next(ctx, prepared, result) { /* nothing */ }`, true},
		{`next() {}`, true},
		{`next: async () => {}`, true},
		{`next: async function (ctx) {}`, true},
		{`async next(ctx, ...rest) {}`, true},
		{`async next(ctx: any, prepared: unknown) {}`, true}, // TypeScript, types stripped
		{`async next() { return; }`, false},
		{`async next() { ; }`, false},
		{`async next(ctx) { await ctx.publish("b9", { messageId: "m", payload: 1 }); }`, false},
		{`next: async () => undefined`, false},
		{`async next(ctx, p = globalThis.x = 1) {}`, false},
		{`async next({ a }) {}`, false},
		{`async next(ctx, ...[a]) {}`, false},
		{`*next() {}`, false},
		{`next: (() => {}).bind(null)`, false},                                                         // its text is "native code"
		{`next: Object.assign(async () => { await 1; }, { toString: () => "async next() {}" })`, true}, // lies: only skips itself
	}
	var b strings.Builder
	b.WriteString("export default Keep.workflow({ name: \"t\", topics: {")
	for i := range cases {
		fmt.Fprintf(&b, " a%d: {}, b%d: {},", i, i)
	}
	b.WriteString(" }, producers: {}, consumers: {\n")
	for i, c := range cases {
		// each consumer has topics of its own: a topic has one consumer
		fmt.Fprintf(&b, "c%d: Keep.consumer({ subscribe: [\"a%d\"], publishes: [\"b%d\"], async prepare() { return { reservations: [], data: {} }; }, async mutate() {}, %s }),\n", i, i, i, c.next)
	}
	b.WriteString("} });\n")
	name := "t.js"
	if strings.Contains(b.String(), ": any") {
		name = "t.ts"
	}
	s, err := Load(name, []byte(b.String()), LoadOptions{Methods: testMethods, MinInterval: time.Minute})
	if err != nil {
		t.Fatalf("load: %v\n%s", err, numbered(b.String()))
	}
	for i, c := range cases {
		if got := s.Workflow.Consumers[i].EmptyNext; got != c.empty {
			t.Errorf("%s: EmptyNext = %v, want %v", c.next, got, c.empty)
		}
	}

	// What the engine assumes of a next it does not run.
	s = load(t, handlers{next: "// nothing to do"})
	if !s.Workflow.Consumers[0].EmptyNext {
		t.Fatal("the empty next of the test workflow is not marked empty")
	}
	out, err := invoke(t, s, PhaseNext, &recordingHost{}, testLimits(), json.RawMessage(`{"data":{}}`), json.RawMessage(`{"status":"applied"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, &Outcome{}) {
		t.Errorf("an empty next run gives %+v, not the Outcome{} the host assumes", out)
	}
}
