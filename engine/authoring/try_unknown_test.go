package authoring

import (
	"context"
	"testing"

	"keep/connectors"
)

// toolsChanged is a connector whose method list no longer holds what a
// script calls (an MCP server's tools changed since the lookup); it
// counts what reaches it.
type toolsChanged struct{ done int }

func (c *toolsChanged) Name() string                 { return "srv" }
func (c *toolsChanged) Methods() []connectors.Method { return nil }
func (c *toolsChanged) Do(context.Context, connectors.Call) (any, error) {
	c.done++
	return "made", nil
}

// A dry run performs only what says it is a read: a call of a method the
// connector no longer lists was taken for a read and made for real.
func TestADryRunRefusesAMethodItDoesNotKnow(t *testing.T) {
	srv := &toolsChanged{}
	k := capturing{Connector: srv, c: &capture{limit: 10}}
	_, err := k.Do(context.Background(), connectors.Call{Method: "delete_everything", Params: map[string]any{}})
	if srv.done != 0 || connectors.ClassOf(err) != connectors.Logic {
		t.Fatalf("a call of an unlisted method: made %d times, err = %v; want refused, never made", srv.done, err)
	}
}
