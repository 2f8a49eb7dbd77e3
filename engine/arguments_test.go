package engine

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestArgumentsNameEveryLeaf(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"to":"a<b","rows":[{"amount":1},{"amount":2,"iban":"x"}],"tags":["a","b"],"headers":{"X-Api":"k","a b":"c"},
		"empty":{},"reconcile":{"url":"http://h/check"},"memo":"ééééé"}`)
	got := Arguments(raw, 5)
	want := []Argument{
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
	if a := (Argument{Name: "memo", Value: `"bu`, Hidden: 412}).Shown(); a != `memo: "bu…(+412 bytes)` {
		t.Errorf("Shown = %q", a)
	}
	if got := Arguments(json.RawMessage(`["x"]`), 0); !slices.Equal(got, []Argument{{Name: "params", Value: `["x"]`}}) {
		t.Errorf("a list as params = %+v", got)
	}
	if got := Arguments(nil, 0); got != nil {
		t.Errorf("no params = %+v", got)
	}
}
