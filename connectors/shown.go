package connectors

// Shower is implemented by a connector that adds to a call what the script
// did not pass (a credential the host holds for an HTTP host), so traces
// can show that it was added without showing it.
type Shower interface {
	// Shown returns params as a person should see them; it never changes
	// params itself.
	Shown(method string, params map[string]any) map[string]any
}

// Shown is params as c shows them: Shower's answer, or params unchanged.
func Shown(c Connector, method string, params map[string]any) map[string]any {
	if s, ok := c.(Shower); ok {
		return s.Shown(method, params)
	}
	return params
}

// keepFields are the parameters keep reads from a call itself and never
// sends to the service: reconcile, how an uncertain outcome is checked.
var keepFields = map[string]bool{"reconcile": true}

// IsKeepField says whether the top-level parameter name is keep's own
// rather than the service's, so an approval can show it apart.
func IsKeepField(name string) bool { return keepFields[name] }
