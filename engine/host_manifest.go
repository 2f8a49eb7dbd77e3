package engine

import (
	"context"

	"keep/connectors"
	"keep/sandbox"
)

// Every connector call a script makes arrives here before it is made: a
// read in host.Read, a mutation in startMutation. Each is held against the
// manifest of the version that runs (stored with it, what the person saw
// at deploy or in a proposal's summary): a method it does not name, in a
// phase it is not written in, or a URL to a host its literals do not name
// is a logic error, and nothing is performed. The script is not trusted to
// have called only what it wrote: it may compute a name, the manifest
// cannot.

// manifestOf is the manifest of a workflow's version: the one stored with
// it (scriptIn puts it on the script), else the one its source gives.
func (e *Engine) manifestOf(ctx context.Context, workflowID int64, version int) (*sandbox.Manifest, error) {
	sc, err := e.script(ctx, workflowID, version)
	if err != nil {
		return nil, err
	}
	return sc.Manifest, nil
}

// inManifest refuses a call outside m: nil m (no manifest) allows nothing.
func inManifest(m *sandbox.Manifest, connector, method string, phase sandbox.Phase, params map[string]any) error {
	if m == nil {
		return connectors.Errorf(connectors.Logic, "ctx.%s.%s: this version has no manifest, so it may call nothing: nothing was done", connector, method)
	}
	if err := m.Allows(connector, method, phase); err != nil {
		return connectors.Errorf(connectors.Logic, "%v", err)
	}
	for _, u := range sandbox.URLsOf(params) {
		if err := m.AllowsURL(u); err != nil {
			return connectors.Errorf(connectors.Logic, "ctx.%s.%s: %v", connector, method, err)
		}
	}
	return nil
}

// checkCall is what every call a script makes passes before it reaches
// its connector, a read (host.Read) or a mutation (startMutation):
// inManifest for a run of workflow's version, then the registry's refusal
// of a field the method does not declare (connectors.Undeclared), which
// holds so for every connector, not only those that check for themselves.
func (e *Engine) checkCall(ctx context.Context, workflowID int64, version int, connector, method string, phase sandbox.Phase, params map[string]any) error {
	m, err := e.manifestOf(ctx, workflowID, version)
	if err != nil {
		return err
	}
	if err := inManifest(m, connector, method, phase, params); err != nil {
		return err
	}
	_, _, err = e.reg.Resolve(connector, method, params)
	return err
}
