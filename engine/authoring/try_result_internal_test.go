package authoring

import (
	"fmt"
	"testing"

	"keep/connectors"
	"keep/engine"
	"keep/engine/config"
)

// Every mutation keep's connectors offer is answered in its result's
// shape in a dry run: a Result the parser cannot read would fall back to
// {dryRun: true}, and a next that reads the answer would fail again.
func TestEveryMutationsResultIsUnderstood(t *testing.T) {
	cfg := config.Default()
	cfg.Connectors.Files.Roots = []string{t.TempDir()}
	reg, err := engine.Connectors(cfg, engine.ConnectorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range reg.Names() {
		c, _ := reg.Get(name)
		for _, m := range c.Methods() {
			if m.Kind != connectors.Mutate || m.Result == "" {
				continue
			}
			n++
			if _, ok := parseTSType(m.Result); !ok {
				t.Errorf("%s.%s: result %q is not understood", name, m.Name, m.Result)
			}
		}
	}
	if n == 0 {
		t.Fatal("no mutation with a result among the connectors")
	}
	for _, s := range []string{"{ uid: string, summary: string, start: string, end: string, allDay: boolean, location: string, description: string, recurrence?: string, recurrenceId?: string }",
		`{ delivered: true, via: "notify-send" | "tui" }`, "{ id: string | null, mailbox: string, originalLeft?: string }",
		"{ rowNumber: number, row: Record<string, string> }", "{ text: string, json?: any, structured?: any, content: any[] }"} {
		if _, ok := parseTSType(s); !ok {
			t.Errorf("%q is not understood", s)
		}
	}
	got := dryAnswer(connectors.Method{Result: `{ uid: string, summary: string, deleted: true, via: "a" | "b", n: number, tags: string[] | null, more?: string }`},
		map[string]any{"uid": "u1", "summary": 7}, 3).(map[string]any)
	want := map[string]any{"uid": "u1", "summary": "dry-run-3-summary", "deleted": true, "via": "a", "n": 0, "tags": []any{}, "dryRun": true}
	if len(got) != len(want) {
		t.Fatalf("dryAnswer = %#v", got)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || fmtOf(g) != fmtOf(v) {
			t.Errorf("dryAnswer[%s] = %#v, want %#v", k, g, v)
		}
	}
}

func fmtOf(v any) string {
	if s, ok := v.([]any); ok && len(s) == 0 {
		return "[]"
	}
	return fmt.Sprint(v)
}
