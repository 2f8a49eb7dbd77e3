package engine

import (
	"context"
	"strings"
	"testing"

	"keep/connectors"
	"keep/engine/api"
	"keep/storage"
)

// TestRunAndDryRunDecideAlike: a run's call (decideWith, over the ledger's
// rows) and a dry run's (GrantModeOf, over the views it was given) are one
// decision, ledger.DecideGrant: the same mode and the same reason, which
// the dry run only prefixes.
func TestRunAndDryRunDecideAlike(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	views := [][]api.GrantView{
		nil,
		{{Capability: "http.request", Mode: GrantAllow}},
		{{Capability: "http.request", Mode: GrantAsk}},
		{{Capability: "http.request", Scope: "example.com", Mode: GrantDeny}},
		{{Capability: "http.request", Mode: GrantDeny}, {Capability: "http.request", Scope: "example.com", Mode: GrantAllow}},
		{{Capability: "http.request", Scope: "other.org", Mode: GrantAllow}},
	}
	for _, vs := range views {
		rows := make([]storage.Grant, len(vs))
		for i, v := range vs {
			rows[i] = storage.Grant{Capability: v.Capability, Scope: v.Scope, Mode: v.Mode}
		}
		for _, scope := range []string{"example.com", "api.example.com", ""} {
			runMode, runWhy, err := b.e.decideWith(ctx, b.e.db.Read(), &storage.Workflow{}, rows, "http.request", scope)
			if err != nil {
				t.Fatal(err)
			}
			dryMode, dryWhy := GrantModeOf(vs, "http.request", scope, connectors.ScopeHosts, nil)
			if runMode != dryMode || (runWhy != "") != (dryWhy != "") || !strings.HasSuffix(dryWhy, runWhy) {
				t.Errorf("grants %+v, scope %q: a run says %s %q, a dry run %s %q", vs, scope, runMode, runWhy, dryMode, dryWhy)
			}
		}
	}
}
