package tui

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"keep/engine/api"
)

// The red team's card: an MCP tool's approval whose first value is long.
// The card names every key, counts what a cut value hides, and shows keep's
// reconcile apart; enter shows every value whole.
func TestAnApprovalCardNamesEveryArgument(t *testing.T) {
	t.Parallel()
	memo := "buy milk" + strings.Repeat(" and more milk", 40)
	params, _ := json.Marshal(map[string]any{"memo": memo, "to": "attacker-iban",
		"reconcile": map[string]any{"tool": "get_transfer", "args": map[string]any{"id": "t1"}}})
	apiHost := newStub()
	apiHost.attention = []api.AttentionItem{{Kind: api.AttentionApproval, Workflow: "pay", ID: "m9",
		Title: "Pay for groceries", Connector: "mcp.bank", Method: "transfer", Params: params,
		Reason: "your grant for mcp.bank.transfer asks before each call", Answers: []string{"approve", "reject"}}}
	h := newHarness(t, apiHost, 100, 40)
	h.keys("3")
	flat := strings.Join(strings.Fields(ansi.Strip(h.m.at.View())), " ")
	hidden := len(`"`+memo+`"`) - api.ArgumentRoom
	for _, want := range []string{`call: mcp.bank.transfer memo: "buy milk`, `…(+` + strconv.Itoa(hidden) + ` bytes) to: "attacker-iban"`,
		`keep's, not sent: reconcile.args.id: "t1"`, `keep's, not sent: reconcile.tool: "get_transfer"`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the card lacks %q:\n%s", want, h.m.at.View())
		}
	}
	if strings.Contains(flat, memo) {
		t.Errorf("the closed card shows the memo whole:\n%s", h.m.at.View())
	}
	h.keys("enter")
	if flat := strings.Join(strings.Fields(ansi.Strip(h.m.at.View())), " "); !strings.Contains(flat, `memo: "`+memo+`"`) || strings.Contains(flat, "bytes)") {
		t.Errorf("the opened card does not show the memo whole:\n%s", h.m.at.View())
	}
}

// A card names at most cardArguments, so it fits its pane and can be
// answered, and says how many more there are; enter names every one.
func TestACardSaysHowManyArgumentsItDoesNotName(t *testing.T) {
	t.Parallel()
	args := map[string]any{}
	for i := range 12 {
		args["k"+strconv.Itoa(10+i)] = i
	}
	params, _ := json.Marshal(args)
	apiHost := newStub()
	apiHost.attention = []api.AttentionItem{{Kind: api.AttentionApproval, Workflow: "w", ID: "m1", Title: "t",
		Connector: "mcp.x", Method: "y", Params: params, Answers: []string{"approve", "reject"}}}
	h := newHarness(t, apiHost, 100, 40)
	h.keys("3")
	closed := strings.Join(strings.Fields(ansi.Strip(h.m.at.View())), " ")
	if !strings.Contains(closed, "k17: 7 … 4 more arguments (6 bytes): enter shows every one") || strings.Contains(closed, "k18") {
		t.Errorf("the closed card:\n%s", h.m.at.View())
	}
	h.keys("enter")
	if open := strings.Join(strings.Fields(ansi.Strip(h.m.at.View())), " "); !strings.Contains(open, "k21: 11") || strings.Contains(open, "more arguments") {
		t.Errorf("the opened card:\n%s", h.m.at.View())
	}
}
