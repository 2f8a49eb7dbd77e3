package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"keep/engine"
	"keep/engine/api"
)

// TestOutcomeTextCountsAttempts: an output made in more than one attempt
// says so in keep inputs and the Inputs pane; one attempt says nothing more.
func TestOutcomeTextCountsAttempts(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	in := api.InputView{InputID: "1", Status: api.InputDone, Title: "Item a", Outputs: []api.OutputView{
		{MutationID: "2", Status: engine.MutationApplied, Connector: "http", Method: "request", Attempts: 2}}}
	if err := WriteInputs(&b, []api.InputView{in}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "→ applied (after 2 attempts)") || strings.Contains(b.String(), "failed") {
		t.Fatalf("keep inputs says:\n%s", b.String())
	}
	if got := outputWords(in.Outputs[0], time.Now()); got != "applied (2 attempts)" {
		t.Fatalf("the Inputs pane says %q", got)
	}
	if got := OutcomeText(api.OutputView{Status: engine.MutationApplied}); got != "applied" {
		t.Fatalf("one attempt says %q", got)
	}
}
