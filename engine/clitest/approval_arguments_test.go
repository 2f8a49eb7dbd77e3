package clitest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"keep/engine/api"
)

// The red team's approval: http.request whose first value is long. The
// preview read {"memo":"buy milk… and hid a second key, to: the attacker's
// account, with no sign that anything was hidden.
func TestAnApprovalNamesEveryArgument(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("called before approval: %s", r.URL) }))
	defer srv.Close()
	e := newEnv(t, "ask")
	memo := "buy milk" + strings.Repeat(" and more milk", 40)
	wf := e.file(e.dir, "pay.js", strings.NewReplacer("URL", `"`+srv.URL+`/pay"`, "MEMO", `"`+memo+`"`).Replace(`export default Keep.workflow({ name: "pay", topics: { t: {} },
  producers: { p: { publishes: ["t"], schedule: { interval: "5m" }, handler: async (ctx) => {
    const inputId = ctx.registerInput({ source: "http", type: "resource", id: "1", title: "Groceries" });
    await ctx.publish("t", { messageId: "1", inputId, payload: {} });
  } } },
  consumers: { c: Keep.consumer({ subscribe: ["t"],
    async prepare(ctx) { const [e] = await ctx.peek("t"); return e ? { reservations: [{ topic: "t", ids: [e.messageId] }], data: {}, ui: { title: "Pay for groceries" } } : { reservations: [], data: {} }; },
    async mutate(ctx) { await ctx.http.request({ method: "POST", url: URL,
      json: { memo: MEMO, to: "attacker-iban", note: "ok\u3164\u115f\uffa0\u034f\ufe0f" },
      reconcile: { url: URL + "?check=1" } }); },
    async next() {} }) } });`))
	e.ok("deploy", wf)
	e.ok("drain")

	items := attentionOf(e, api.AttentionApproval)
	if len(items) != 1 {
		t.Fatalf("approvals = %+v", items)
	}
	id := items[0].ID
	byName := map[string]api.Argument{}
	for _, a := range items[0].Arguments {
		byName[a.Name] = a
	}
	if a := byName["json.to"]; a.Value != `"attacker-iban"` || a.Hidden != 0 || a.Keep {
		t.Errorf("--json: json.to = %+v (arguments %+v)", a, items[0].Arguments)
	}
	if a := byName["json.memo"]; a.Hidden == 0 || len(a.Value)+a.Hidden != len(memo)+2 {
		t.Errorf("--json: json.memo = %+v, want it cut with the %d bytes not shown counted", a, len(memo)+2-len(a.Value))
	}
	if a := byName["reconcile.url"]; !a.Keep {
		t.Errorf("--json: reconcile.url = %+v, want it marked keep's", a)
	}
	if last := items[0].Arguments[len(items[0].Arguments)-1]; !last.Keep {
		t.Errorf("--json: keep's own fields are not last: %+v", items[0].Arguments)
	}

	out := e.ok("attention").stdout
	flat := strings.Join(strings.Fields(out), " ") // as read, across the wrap
	for _, want := range []string{`json.to: "attacker-iban"`, `json.memo: "buy milk and more milk`,
		"…(+" + strconv.Itoa(byName["json.memo"].Hidden) + " bytes)", `keep's, not sent: reconcile.url: "` + srv.URL,
		`json.note: "ok\u3164\u115f\uffa0\u034f\ufe0f"`} {
		if !strings.Contains(flat, want) {
			t.Errorf("keep attention lacks %q:\n%s", want, out)
		}
	}
	for _, r := range "\u3164\u115f\uffa0\u034f\ufe0f" {
		if strings.ContainsRune(out, r) {
			t.Errorf("keep attention prints %U raw:\n%s", r, out)
		}
	}
	if strings.Contains(out, memo) {
		t.Errorf("keep attention lists the memo whole:\n%s", out)
	}
	whole := e.ok("attention", id).stdout
	if !strings.Contains(strings.Join(strings.Fields(whole), " "), `json.memo: "`+memo+`"`) || strings.Contains(whole, "bytes)") {
		t.Errorf("keep attention %s does not show the memo whole:\n%s", id, whole)
	}
	if e.expect(1, "attention", "m999").code == 0 {
		t.Error("keep attention of an unknown id succeeded")
	}
}
