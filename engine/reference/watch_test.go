package reference_test

import (
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/reference"
)

// TestWatchIsDocumented: keep help api (text and JSON) and keep.d.ts
// document a producer's watched folder, beside or instead of an interval.
func TestWatchIsDocumented(t *testing.T) {
	ref := reference.Build(connectors.NewRegistry())
	var text strings.Builder
	if err := ref.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`schedule: { watch: "inbox" }`, `schedule: { watch: "inbox", interval: "1h" }`, "coalesced", "every 5 minutes"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("keep help api lacks %q", want)
		}
	}
	if len(ref.Schedules) != len(reference.ScheduleForms) {
		t.Errorf("the JSON reference has %d schedule forms, want %d", len(ref.Schedules), len(reference.ScheduleForms))
	}
	dts := ref.DTS()
	for _, want := range []string{"| { interval: string; watch?: string }", "| { watch: string };"} {
		if !strings.Contains(dts, want) {
			t.Errorf("keep.d.ts lacks %q", want)
		}
	}
}
