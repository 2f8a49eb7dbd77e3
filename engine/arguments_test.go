package engine

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"keep/engine/api"
)

func TestArgumentsNameEveryLeaf(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"to":"a<b","rows":[{"amount":1},{"amount":2,"iban":"x"}],"tags":["a","b"],"headers":{"X-Api":"k","a b":"c"},
		"empty":{},"reconcile":{"url":"http://h/check"},"memo":"ééééé"}`)
	got := api.Arguments(raw, 5)
	want := []api.Argument{
		{Name: "to", Value: `"a<b"`},
		{Name: "rows[0].amount", Value: "1"},
		{Name: "rows[1].amount", Value: "2"},
		{Name: "rows[1].iban", Value: `"x"`},
		{Name: "tags", Value: `["a",`, Hidden: 4},
		{Name: "headers.X-Api", Value: `"k"`},
		{Name: `headers["a b"]`, Value: `"c"`},
		{Name: "empty", Value: "{}"},
		{Name: "memo", Value: `"éé`, Hidden: 7}, // cut between characters, never inside one
		{Name: "reconcile.url", Value: `"http`, Hidden: 11, Keep: true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Arguments =\n%+v\nwant\n%+v", got, want)
	}
	if a := (api.Argument{Name: "memo", Value: `"bu`, Hidden: 412}).Shown(); a != `memo: "bu…(+412 bytes)` {
		t.Errorf("Shown = %q", a)
	}
	if got := api.Arguments(json.RawMessage(`["x"]`), 0); !slices.Equal(got, []api.Argument{{Name: "params", Value: `["x"]`}}) {
		t.Errorf("a list as params = %+v", got)
	}
	if got := api.Arguments(nil, 0); got != nil {
		t.Errorf("no params = %+v", got)
	}
}

// A method without words of its own (an MCP tool, this gate) had for its
// preview the JSON of its parameters cut at 300 characters: the red team's
// {"memo":"buy milk… that hid to:. Its approval now has no such preview;
// its arguments, each named, are what the person reads.
func TestAPreviewlessCallIsShownByItsArguments(t *testing.T) {
	t.Parallel()
	b := gated(t, &gateConnector{scope: func(string) string { return "" }})
	b.deploy("gated", fanWorkflow("gated", `["i0"]`, 1, `await ctx.gate.post({ id: "buy milk".repeat(60), to: "attacker-iban" });`))
	b.drain()
	items := b.attentionOf(api.AttentionApproval)
	if len(items) != 1 {
		t.Fatalf("approvals = %+v", items)
	}
	it := items[0]
	if it.Preview != "" {
		t.Errorf("preview = %q, want none", it.Preview)
	}
	if !slices.ContainsFunc(it.Arguments, func(a api.Argument) bool { return a.Name == "to" && a.Value == `"attacker-iban"` }) ||
		!slices.ContainsFunc(it.Arguments, func(a api.Argument) bool { return a.Name == "id" && a.Hidden == 480+2-api.ArgumentRoom }) {
		t.Errorf("arguments = %+v", it.Arguments)
	}
	ms, err := b.e.Mutations(context.Background(), "gated", "")
	if err != nil || len(ms) != 1 || ms[0].Preview != "" || len(ms[0].Arguments) != 2 {
		t.Errorf("mutations = %+v, %v", ms, err)
	}
}
