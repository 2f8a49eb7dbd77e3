package mail

import (
	"context"
	"fmt"
	"strings"

	"keep/connectors"
)

// Connector is the mail connector. It holds no connection: each call dials,
// does its work and hangs up, so a broken connection never outlives a call
// and calls need no locking.
type Connector struct {
	cfg Config
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Reconciler  = (*Connector)(nil)
	_ connectors.InputSource = (*Connector)(nil)
)

// String names the connector and its account, never the password.
func (c *Connector) String() string { return "mail connector for " + c.cfg.Username }

// Name is "mail" for the preset too; the host adds the "gmail" alias.
func (c *Connector) Name() string { return "mail" }

// InputTypes declares the input types of both names the connector is
// registered under.
func (c *Connector) InputTypes() map[string][]string {
	return map[string][]string{
		"mail":  {"email", "thread"},
		"gmail": {"email", "thread"},
	}
}

// Methods lists search, get and send.
func (c *Connector) Methods() []connectors.Method {
	return []connectors.Method{
		{Name: "search", Kind: connectors.Read},
		{Name: "get", Kind: connectors.ReadByID},
		{Name: "send", Kind: connectors.Mutate, Scope: sendScope, Preview: sendPreview, Check: sendCheck},
	}
}

// Do runs one call within the configured timeout.
func (c *Connector) Do(ctx context.Context, call connectors.Call) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	switch call.Method {
	case "search":
		return c.search(ctx, call.Params)
	case "get":
		return c.get(ctx, call.Params)
	case "send":
		return c.send(ctx, call)
	}
	return nil, connectors.Errorf(connectors.Logic, "mail has no method %q (it has: search, get, send)", call.Method)
}

// sendScope is the set of recipient domains, comma-joined, sorted, unique:
// a grant narrowed to "example.com" covers mail to anyone there. Cc and Bcc
// count too, or a grant for one domain would let a script copy another.
func sendScope(params map[string]any) string {
	r, err := parseRecipients(params)
	if err != nil {
		return ""
	}
	return strings.Join(r.domains(), ",")
}

// sendPreview renders a send for a person: every recipient (Bcc included:
// the approver must see who gets it), the subject and the body's length.
func sendPreview(params map[string]any) string {
	r, _ := parseRecipients(params)
	subject, _ := params["subject"].(string)
	body, _ := params["body"].(string)
	s := "send to " + strings.Join(r.to, ", ")
	var extra []string
	if len(r.cc) > 0 {
		extra = append(extra, "cc "+strings.Join(r.cc, ", "))
	}
	if len(r.bcc) > 0 {
		extra = append(extra, "bcc "+strings.Join(r.bcc, ", "))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, "; ") + ")"
	}
	return fmt.Sprintf("%s: %q (%d chars)", s, subject, len([]rune(body)))
}

// sendCheck is what a person does by hand when reconciliation can't tell.
func sendCheck(params map[string]any) string {
	r, _ := parseRecipients(params)
	subject, _ := params["subject"].(string)
	to := strings.Join(r.to, ", ")
	if to == "" {
		to = "its recipients"
	}
	return fmt.Sprintf("look in your Sent folder for %q to %s", subject, to)
}
